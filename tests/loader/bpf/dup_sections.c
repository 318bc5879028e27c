/* Structural rules: two programs for one hook (SEC("profiler") and SEC("profiler/proxy") share
 * the profiler hook). The plugin refuses the bundle before verifying any program. */
#include "ncclbpf.h"

SEC("tuner")
int choose(struct ncclbpf_tuner_ctx *ctx)
{
	return 0;
}

SEC("profiler")
int first(struct ncclbpf_profiler_ctx *ctx)
{
	return 0;
}

SEC("profiler/proxy")
int second(struct ncclbpf_profiler_ctx *ctx)
{
	return 0;
}
