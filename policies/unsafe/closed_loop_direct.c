/* UNSAFE: the naive closed loop. The profiler program keeps a moving average of this rank's GPU
 * latency per size bucket, and the tuner picks the channel count from it directly. Each rank
 * measures different latencies (skew, stragglers, a noisy neighbour on one node), so ranks would
 * pick different channel counts for the same collective and NCCL would hang or corrupt data
 * (docs/design.md §6.16). Expected: rejected (tuner decision depends on rank-local data: map
 * written by a profiler program). The safe form is policies/closed_loop_channels.c. */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} lat_by_bucket SEC(".maps");

SEC("profiler")
int measure(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 k = ncclbpf_log2_u64(ctx->n_bytes);
	__u64 *v = bpf_map_lookup_elem(&lat_by_bucket, &k);

	if (v && ctx->event == NCCLBPF_PROF_COLL_END)
		*v = (*v * 7 + ctx->duration_ns) / 8;
	return 0;
}

SEC("tuner")
int adapt(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = ncclbpf_log2_u64(ctx->n_bytes);
	__u64 *lat = bpf_map_lookup_elem(&lat_by_bucket, &k);

	if (!lat)
		return 0;
	/* BUG: this rank's own latency sets the channel count. */
	ctx->n_channels = *lat > 500000 ? 4 : 16;
	return 0;
}
