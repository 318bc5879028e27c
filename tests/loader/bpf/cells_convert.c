/* Converted cost-cell reads (ebpf_object_load_opts.convert_ctx): which programs the loader
 * converts and which it leaves reading memory. test_loader.c runs both forms and compares. */
#include "ncclbpf.h"

/* Two whole cells at fixed offsets: converted. The outputs depend on both values. */
SEC("tuner")
int whole(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 a = ctx->cost_ns[NCCLBPF_ALGO_RING][NCCLBPF_PROTO_LL];
	__u64 b = ctx->cost_ns[NCCLBPF_ALGO_TREE][NCCLBPF_PROTO_SIMPLE];
	if (a != NCCLBPF_COST_NA && (b == NCCLBPF_COST_NA || a < b)) {
		ctx->algorithm = NCCLBPF_ALGO_RING;
		ctx->protocol = NCCLBPF_PROTO_LL;
	} else if (b != NCCLBPF_COST_NA) {
		ctx->algorithm = NCCLBPF_ALGO_TREE;
		ctx->protocol = NCCLBPF_PROTO_SIMPLE;
	}
	if (a != NCCLBPF_COST_NA && b != NCCLBPF_COST_NA)
		ctx->n_channels = 1 + (int)((a + b) % 60);
	return 0;
}

/* Half of a cell: a conversion returns whole elements only, so the program reads memory. */
SEC("tuner")
int narrow(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 lo = *(volatile __u32 *)&ctx->cost_ns[NCCLBPF_ALGO_RING][NCCLBPF_PROTO_LL];
	ctx->n_channels = 1 + (int)(lo % 60);
	return 0;
}

/* No cell at all: nothing to convert. */
SEC("tuner")
int no_cells(struct ncclbpf_tuner_ctx *ctx)
{
	ctx->n_channels = 1 + (int)(ctx->n_bytes % 60);
	return 0;
}
