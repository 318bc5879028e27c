/* Message-size-aware tuner: latency-bound small messages prefer TREE with the LL protocol,
 * mid-size messages LL128, large ones RING with SIMPLE. It only ever chooses a cell of NCCL's
 * cost table that NCCL itself considers available (not NCCLBPF_COST_NA), trying candidates in
 * order, and leaves the decision to NCCL when none is. Channels stay NCCL's choice.
 *
 * Everything it reads is identical on every rank (size, cost table), so every rank decides the
 * same. The cost table is indexed with constants only: contexts allow fixed offsets. */
#include "ncclbpf.h"

#define SMALL_MAX (64ull << 10) /* up to 64 KiB: latency bound */
#define MID_MAX	  (4ull << 20)	/* up to 4 MiB */

/* Chooses (algo, proto) when NCCL filled that cell and did not mark it unavailable. */
static __always_inline int try_cell(struct ncclbpf_tuner_ctx *ctx, int algo, int proto)
{
	if ((__u32)algo >= ctx->num_algo || (__u32)proto >= ctx->num_proto)
		return 0;
	if (ctx->cost_ns[algo][proto] == NCCLBPF_COST_NA)
		return 0;
	ctx->algorithm = algo;
	ctx->protocol = proto;
	return 1;
}

SEC("tuner")
int size_aware(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 bytes = ctx->n_bytes;

	if (bytes <= SMALL_MAX) {
		if (try_cell(ctx, NCCLBPF_ALGO_TREE, NCCLBPF_PROTO_LL) ||
		    try_cell(ctx, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_LL))
			return 0;
	} else if (bytes <= MID_MAX) {
		if (try_cell(ctx, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_LL128) ||
		    try_cell(ctx, NCCLBPF_ALGO_TREE, NCCLBPF_PROTO_LL128) ||
		    try_cell(ctx, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE))
			return 0;
	} else {
		if (try_cell(ctx, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE) ||
		    try_cell(ctx, NCCLBPF_ALGO_TREE, NCCLBPF_PROTO_SIMPLE))
			return 0;
	}
	return 0; /* nothing suitable available: NCCL decides */
}
