/* UNSAFE: a tuner whose decision depends on latency this rank measured. The profiler program
 * fills avg_lat from local GPU timings, which differ between ranks; ranks would then choose
 * different algorithms for the same collective and NCCL would hang. Expected: rejected (tuner
 * decision depends on rank-local data: map written by a profiler program). */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} avg_lat SEC(".maps");

SEC("profiler")
int measure(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 key = ctx->coll_type & 7;
	__u64 *v = bpf_map_lookup_elem(&avg_lat, &key);

	if (v && ctx->event == NCCLBPF_PROF_COLL_END)
		*v = (*v * 7 + ctx->duration_ns) / 8;
	return 0;
}

SEC("tuner")
int decide(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 key = ctx->coll_type & 7;
	__u64 *v = bpf_map_lookup_elem(&avg_lat, &key);

	if (v && *v > 100000) /* BUG: rank-local latency steers the decision */
		ctx->algorithm = NCCLBPF_ALGO_RING;
	return 0;
}
