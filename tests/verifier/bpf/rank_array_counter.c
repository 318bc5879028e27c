/* A tuner that counts its calls in an ARRAY and alternates the protocol on the count. Every
 * communicator of the process adds to the count (a rank that also serves another group counts
 * those calls too), so ranks would disagree. */
/* EXPECT-REJECT: tuner decision `protocol` depends on a rank-local value */
/* EXPECT-REJECT: (rank-local map `calls` at line @*n += 1;@) */
/* EXPECT-REJECT: `calls` is written by tuner program `alternate` at line @*n += 1;@ (`*n += 1;`) */
/* EXPECT-REJECT: declare it per-communicator (__uint(map_flags, NCCLBPF_F_PER_COMM)) */
/* EXPECT-REJECT: decide from ctx->seq */
/* EXPECT-CLASS: calls rank-local */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

SEC("tuner")
int alternate(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&calls, &k);
	if (!n)
		return 0;
	*n += 1;
	ctx->protocol = (*n & 1) ? NCCLBPF_PROTO_LL : NCCLBPF_PROTO_SIMPLE;
	return 0;
}
