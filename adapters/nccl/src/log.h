/* Routes runtime messages to NCCL's logger (docs/design.md §6.13): warnings with NCCL_ALL so
 * that they show with NCCL's default debug settings, everything else as INFO under
 * INIT|TUNING, never on the per-call hot path. */
#ifndef NCCLBPF_ADAPTER_LOG_H
#define NCCLBPF_ADAPTER_LOG_H

#include "nccl_common.h"

/* Remembers NCCL's logger (the latest non-NULL one) and installs the bridge. */
void adapter_set_logger(ncclDebugLogger_t fn);

/* The hooks' own lines go through the bridge too: ncclbpf_rt_log (ncclbpf/runtime.h). */

/* The net plugin calls this at every init: NCCL uses this library as its network. */
void adapter_net_in_use(void);

/* 1 when NCCL reached the hook that `selector` (e.g. "NCCL_TUNER_PLUGIN") selects only through
 * its fallback to the net plugin's library (docs/design.md §6.2): this library is
 * NCCL's net plugin and the user named no library for that hook (the variable is unset and our
 * env plugin did not serve it). The user then asked for the transport, not for this hook. */
int adapter_via_net_fallback(const char *selector);

#endif
