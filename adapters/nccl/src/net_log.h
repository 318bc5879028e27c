/* Messages of the net plugin to NCCL's logger (the one its net init received): warnings with
 * NCCL_ALL so they show with NCCL's default settings, the rest as INFO under NCCL_NET|INIT.
 * Never called on the per-message path except for the first failure of a connection. */
#ifndef NCCLBPF_NET_LOG_H
#define NCCLBPF_NET_LOG_H

#include "nccl_common.h"

void net_log_set(ncclDebugLogger_t fn);
void net_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void net_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
