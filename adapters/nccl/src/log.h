/* Routes runtime messages to NCCL's logger (nccl-plugin-abi.md §8): warnings with NCCL_ALL so
 * that they show with NCCL's default debug settings, everything else as INFO under
 * INIT|TUNING, never on the per-call hot path. */
#ifndef NCCLBPF_ADAPTER_LOG_H
#define NCCLBPF_ADAPTER_LOG_H

#include "nccl_common.h"

/* Remembers NCCL's logger (the latest non-NULL one) and installs the bridge. */
void adapter_set_logger(ncclDebugLogger_t fn);

#endif
