/* The counter of rank_array_counter.c in a per-communicator map: every communicator counts its
 * own calls, which NCCL makes in the same order on every rank. */
/* EXPECT-ACCEPT */
/* EXPECT-CLASS: calls per-comm */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, NCCLBPF_F_PER_COMM);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

SEC("tuner")
int alternate(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&calls, &k);
	if (!n)
		return 0;
	*n += 1;
	ctx->protocol = (*n & 1) ? NCCLBPF_PROTO_LL : NCCLBPF_PROTO_SIMPLE;
	return 0;
}
