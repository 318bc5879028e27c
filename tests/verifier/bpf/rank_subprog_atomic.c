/* The counter bumped by an atomic in a subprogram whose return value (the old count) decides. */
/* EXPECT-REJECT: `algorithm` depends on a rank-local value (rank-local map `ticks` */
/* EXPECT-REJECT: `ticks` is written by tuner program `by_tick` at line @__sync_fetch_and_add@ */
/* EXPECT-CLASS: ticks rank-local */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ticks SEC(".maps");

static __attribute__((noinline)) __u64 tick(void)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&ticks, &k);

	return n ? __sync_fetch_and_add(n, 1) : 0;
}

SEC("tuner")
int by_tick(struct ncclbpf_tuner_ctx *ctx)
{
	ctx->algorithm = (tick() & 1) ? NCCLBPF_ALGO_RING : NCCLBPF_ALGO_TREE;
	return 0;
}
