/* Test policy for NCCL 2.30's getChunkSize (SEC("tuner/chunk")): doubles NCCL's chunk for
 * SIMPLE, asks for 8 bytes (below every protocol grain, which the adapter must refuse) for LL,
 * and leaves LL128 alone. Its tuner program leaves every decision to NCCL. */
#include "ncclbpf.h"

SEC("tuner")
int tune(struct ncclbpf_tuner_ctx *ctx)
{
	return 0;
}

SEC("tuner/chunk")
int chunk(struct ncclbpf_chunk_ctx *ctx)
{
	if (ctx->protocol == NCCLBPF_PROTO_SIMPLE)
		ctx->chunk_size = ctx->nccl_chunk * 2;
	else if (ctx->protocol == NCCLBPF_PROTO_LL)
		ctx->chunk_size = 8;
	return 0;
}
