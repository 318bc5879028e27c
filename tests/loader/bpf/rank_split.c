/* Rank-consistency protocol of ebpf_object__load, the accepted half: the profiler program
 * writes `lat` (rank-local), while the tuner decides from `cfg`, which no program writes (only
 * the operator, identically on every rank). Only maps a profiler/net program writes become
 * rank-local, so this object loads; policies/unsafe/rank_dependent.c is the rejected half. */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} lat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} cfg SEC(".maps");

SEC("profiler")
int record(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 key = ctx->coll_type & 7;
	__u64 *v = bpf_map_lookup_elem(&lat, &key);

	if (v)
		*v = ctx->duration_ns;
	return 0;
}

SEC("tuner")
int choose(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 key = ctx->coll_type & 7;
	__u64 *limit = bpf_map_lookup_elem(&cfg, &key);

	if (limit && ctx->n_bytes > *limit)
		ctx->algorithm = NCCLBPF_ALGO_RING;
	return 0;
}
