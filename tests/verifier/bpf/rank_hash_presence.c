/* Decides on whether a HASH lookup finds a key the program inserted earlier. */
/* EXPECT-REJECT: is written under a branch on a rank-local value */
/* EXPECT-REJECT: (lookup in rank-local map `seen_sizes` */
/* EXPECT-REJECT: `seen_sizes` is written by tuner program `seen_before` at line @BPF_ANY@ */
/* EXPECT-CLASS: seen_sizes rank-local */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u32);
} seen_sizes SEC(".maps");

SEC("tuner")
int seen_before(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 key = ctx->n_bytes;
	__u32 one = 1;

	if (bpf_map_lookup_elem(&seen_sizes, &key)) {
		ctx->protocol = NCCLBPF_PROTO_SIMPLE;
		return 0;
	}
	/* the insert comes after the decision in the code: the map is written all the same */
	bpf_map_update_elem(&seen_sizes, &key, &one, BPF_ANY);
	return 0;
}
