/* Per-CPU maps cannot be per-communicator decision state. */
/* EXPECT-REJECT: map 'pc': */
/* EXPECT-REJECT: a per-communicator map (NCCLBPF_F_PER_COMM) must be an ARRAY or a HASH */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, NCCLBPF_F_PER_COMM);
	__type(key, __u32);
	__type(value, __u64);
} pc SEC(".maps");

SEC("tuner")
int uses_pc(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&pc, &k);

	if (n)
		ctx->n_channels = 2;
	return 0;
}
