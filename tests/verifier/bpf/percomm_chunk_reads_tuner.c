/* The chunk program decides on a counter the tuner program keeps, per communicator: both run
 * in the same communicator's calls, so it is the same state on every rank. Statistics stay in
 * an ordinary map. */
/* EXPECT-ACCEPT */
/* EXPECT-CLASS: calls per-comm */
/* EXPECT-CLASS: stats rank-local */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, NCCLBPF_F_PER_COMM);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

SEC("tuner")
int count_only(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&calls, &k);
	__u64 *s = bpf_map_lookup_elem(&stats, &k);

	(void)ctx;
	if (n)
		__sync_fetch_and_add(n, 1);
	if (s)
		*s = bpf_ktime_get_ns();
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
