/* Nor may it be written under a branch on a rank-local value. */
/* EXPECT-REJECT: per-communicator map `hits` written under a branch on a rank-local value */
/* EXPECT-REJECT: (ctx->reg_buff at line @reg_buff@) */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, NCCLBPF_F_PER_COMM);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

SEC("tuner")
int count_registered(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&hits, &k);

	if (n && ctx->reg_buff)
		__sync_fetch_and_add(n, 1);
	return 0;
}
