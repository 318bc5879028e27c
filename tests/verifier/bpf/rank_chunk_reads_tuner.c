/* The tuner/chunk program decides on a counter that the tuner program writes (the tuner itself
 * only keeps it). */
/* EXPECT-REJECT: program 'chunk_by_count' (section 'tuner/chunk'): line @ctx->chunk_size =@ */
/* EXPECT-REJECT: `chunk_size` is written under a branch on a rank-local value */
/* EXPECT-REJECT: (rank-local map `calls` */
/* EXPECT-REJECT: `calls` is written by tuner program `count_only` at line @__sync_fetch_and_add@ */
/* EXPECT-CLASS: calls rank-local */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

SEC("tuner")
int count_only(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&calls, &k);

	(void)ctx;
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

SEC("tuner/chunk")
int chunk_by_count(struct ncclbpf_chunk_ctx *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&calls, &k);

	if (n && *n > 100)
		ctx->chunk_size = ctx->nccl_chunk * 2;
	return 0;
}
