/* Refused at load: an exported key member named like a label every sample has. */
#include "ncclbpf.h"

struct key {
	__u32 rank;
	__u32 coll;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, struct key);
	__type(value, __u64);
	NCCLBPF_EXPORT_COUNTERS;
} by_rank SEC(".maps");

SEC("profiler/coll_end")
int p(struct ncclbpf_profiler_ctx *ctx)
{
	struct key k = {.rank = ctx->rank, .coll = ctx->coll_type};
	__u64 one = 1;
	bpf_map_update_elem(&by_rank, &k, &one, BPF_ANY);
	return 0;
}
