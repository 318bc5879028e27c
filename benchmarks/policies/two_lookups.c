/* Benchmark policy with two map lookups per decision (the design.md §7 "+10 ns with two map
 * lookups" case): the algorithm comes from a per-collective array, the protocol and channel
 * count from a per-size-bucket array. A stored value of 0 means "NCCL's choice" (value - 1 is
 * the id), so the zero-initialised maps leave every decision to NCCL until an operator fills
 * them. Its native twin is two_lookups() in ../tuner_native_policies.c. */
#include "ncclbpf.h"

struct choice {
	__s32 algorithm_plus1;
	__s32 protocol_plus1;
	__s32 n_channels;
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, struct choice);
} by_coll SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct choice);
} by_size SEC(".maps");

SEC("tuner")
int two_lookups(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 coll = ctx->coll_type & 7;
	__u32 bucket = (__u32)(ctx->n_bytes >> 10) & 63;
	struct choice *a = bpf_map_lookup_elem(&by_coll, &coll);
	struct choice *s = bpf_map_lookup_elem(&by_size, &bucket);
	if (!a || !s)
		return 0;
	ctx->algorithm = a->algorithm_plus1 - 1;
	ctx->protocol = s->protocol_plus1 - 1;
	if (s->n_channels > 0 && s->n_channels <= 64)
		ctx->n_channels = s->n_channels;
	return 0;
}
