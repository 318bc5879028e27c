/* clang merges `ctx->algorithm = A; ctx->protocol = P;` into one 8-byte store at offset 224. */
/* EXPECT-ACCEPT */
#include "ncclbpf.h"

SEC("tuner")
int pair(struct ncclbpf_tuner_ctx *ctx)
{
	if (ctx->n_bytes < 4096) {
		ctx->algorithm = NCCLBPF_ALGO_TREE;
		ctx->protocol = NCCLBPF_PROTO_LL;
	}
	return 0;
}
