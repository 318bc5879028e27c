/* A `void` static function: R0 unset at its exit, never read by the caller. */
/* EXPECT-ACCEPT */
#include "ncclbpf.h"

static __attribute__((noinline)) void set_algo(struct ncclbpf_tuner_ctx *ctx, int a)
{
	if (a > 0)
		ctx->algorithm = a;
}

SEC("tuner")
int with_void_helper(struct ncclbpf_tuner_ctx *ctx)
{
	set_algo(ctx, ctx->n_bytes > 100 ? NCCLBPF_ALGO_RING : 0);
	return 0;
}
