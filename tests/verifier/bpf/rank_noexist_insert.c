/* "First time this size is seen": decides on whether a BPF_NOEXIST insert succeeded. Capacity,
 * other communicators' keys and earlier calls decide that, differently on each rank. */
/* EXPECT-REJECT: is written under a branch on a rank-local value */
/* EXPECT-REJECT: (result of map_update_elem() on rank-local map `sizes` */
/* EXPECT-REJECT: `sizes` is written by tuner program `first_seen` */
/* EXPECT-CLASS: sizes rank-local */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u32);
} sizes SEC(".maps");

SEC("tuner")
int first_seen(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 key = ctx->n_bytes;
	__u32 one = 1;

	if (bpf_map_update_elem(&sizes, &key, &one, BPF_NOEXIST) == 0)
		ctx->algorithm = NCCLBPF_ALGO_RING;
	return 0;
}
