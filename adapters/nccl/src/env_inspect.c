/* Tells the runtime's live inspection how to list what the env plugin served (`ncclbpf stat`).
 *
 * Kept apart from env.c so that the env plugin's own tests build it without the runtime; the
 * registration runs when the library is loaded and is one atomic store, so it costs nothing and
 * cannot fail. */
#include "env_settings.h"
#include "ncclbpf/runtime.h"

__attribute__((constructor)) static void env_inspect_register(void)
{
	ncclbpf_rt_set_env_reporter(env_served_foreach);
}
