/* The same with an LRU hash: eviction decides too. */
/* EXPECT-REJECT: is written under a branch on a rank-local value */
/* EXPECT-REJECT: (lookup in rank-local map `recent` */
/* EXPECT-REJECT: `recent` is an LRU hash */
/* EXPECT-REJECT: keep decision state in a per-communicator HASH */
/* EXPECT-REJECT: per-communicator HASH (__uint(map_flags, NCCLBPF_F_PER_COMM)) */
/* EXPECT-CLASS: recent rank-local */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16);
	__type(key, __u64);
	__type(value, __u32);
} recent SEC(".maps");

SEC("tuner")
int recently_seen(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 key = ctx->n_bytes;
	__u32 one = 1;

	if (!bpf_map_lookup_elem(&recent, &key)) {
		bpf_map_update_elem(&recent, &key, &one, BPF_ANY);
		return 0;
	}
	ctx->n_channels = 8;
	return 0;
}
