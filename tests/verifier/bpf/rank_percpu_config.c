/* A PERCPU_ARRAY no program writes is still rank-local: each rank reads the slot of the CPU it
 * runs on, and the operator may have set the slots differently. */
/* EXPECT-REJECT: is written under a branch on a rank-local value (rank-local map `pc_cfg` */
/* EXPECT-REJECT: `pc_cfg` is a per-CPU map: each rank reads the slot of the CPU its thread */
/* EXPECT-REJECT: per-communicator ARRAY (__uint(map_flags, NCCLBPF_F_PER_COMM)) */
/* EXPECT-CLASS: pc_cfg rank-local */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pc_cfg SEC(".maps");

SEC("tuner")
int from_percpu(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u32 *ch = bpf_map_lookup_elem(&pc_cfg, &k);
	if (ch && *ch >= 1 && *ch <= 64)
		ctx->n_channels = *ch;
	return 0;
}
