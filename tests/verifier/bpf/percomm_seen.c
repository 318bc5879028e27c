/* "First time this size is seen" in a per-communicator HASH: whether the insert succeeds
 * depends only on this communicator's own calls. */
/* EXPECT-ACCEPT */
/* EXPECT-CLASS: sizes per-comm */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__uint(map_flags, NCCLBPF_F_PER_COMM);
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
	if (bpf_map_lookup_elem(&sizes, &key))
		ctx->n_channels = 4;
	return 0;
}
