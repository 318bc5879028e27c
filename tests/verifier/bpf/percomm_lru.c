/* Nor LRU maps: eviction differs between ranks. */
/* EXPECT-REJECT: map 'recent': */
/* EXPECT-REJECT: must be an ARRAY or a HASH (per-CPU values and LRU eviction differ between */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16);
	__uint(map_flags, NCCLBPF_F_PER_COMM);
	__type(key, __u64);
	__type(value, __u32);
} recent SEC(".maps");

SEC("tuner")
int uses_recent(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 k = ctx->n_bytes;

	if (bpf_map_lookup_elem(&recent, &k))
		ctx->n_channels = 2;
	return 0;
}
