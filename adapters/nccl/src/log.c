/* NCCL logger bridge (log.h). */
#include "log.h"

#include <stdio.h>

#include "ncclbpf/runtime.h"

static ncclDebugLogger_t nccl_logger;

static void bridge(int level, const char *msg)
{
	ncclDebugLogger_t fn = __atomic_load_n(&nccl_logger, __ATOMIC_ACQUIRE);
	if (!fn) {
		if (level == NCCLBPF_LOG_WARN)
			fprintf(stderr, "NCCLbpf WARN %s\n", msg);
		return;
	}
	if (level == NCCLBPF_LOG_WARN)
		fn(NCCL_LOG_WARN, NCCL_ALL, __FILE__, __LINE__, "%s", msg);
	else
		fn(NCCL_LOG_INFO, NCCL_INIT | NCCL_TUNING, __FILE__, __LINE__, "%s", msg);
}

void adapter_set_logger(ncclDebugLogger_t fn)
{
	if (fn)
		__atomic_store_n(&nccl_logger, fn, __ATOMIC_RELEASE);
	ncclbpf_rt_set_logger(bridge);
}
