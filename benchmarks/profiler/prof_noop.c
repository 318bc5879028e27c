/* Benchmark-only profiler program that does nothing: separates the adapter's cost from a real
 * program's (policies/profiler_latency.c). */
#include "ncclbpf.h"

SEC("profiler")
int prof_noop(struct ncclbpf_profiler_ctx *ctx)
{
	(void)ctx;
	return 0;
}
