/* A tuner that counts its calls in a PERCPU_ARRAY and picks the algorithm on the parity: the
 * count it reads is the slot of whatever CPU its thread runs on. */
/* EXPECT-REJECT: tuner decision `algorithm` depends on a rank-local value */
/* EXPECT-REJECT: (rank-local map `percpu_calls` */
/* EXPECT-REJECT: `percpu_calls` is a per-CPU map */
/* EXPECT-REJECT: keep decision state in a per-communicator ARRAY */
/* EXPECT-CLASS: percpu_calls rank-local */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} percpu_calls SEC(".maps");

SEC("tuner")
int parity(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&percpu_calls, &k);
	if (n) {
		__u64 c = ++*n;
		ctx->algorithm = (c & 1) ? NCCLBPF_ALGO_RING : NCCLBPF_ALGO_TREE;
	}
	return 0;
}
