/* The per-hook run counters (ncclbpf/runtime.h, enum ncclbpf_rt_run_counter). */
#include "ncclbpf/runtime.h"

struct ncclbpf_rt_run_count ncclbpf_rt_runs_[NCCLBPF_RT_RUNS_MAX] __attribute__((aligned(64)));

uint64_t ncclbpf_rt_runs(enum ncclbpf_rt_run_counter i)
{
	return (unsigned)i < NCCLBPF_RT_RUNS_MAX
		   ? __atomic_load_n(&ncclbpf_rt_runs_[i].n, __ATOMIC_RELAXED)
		   : 0;
}
