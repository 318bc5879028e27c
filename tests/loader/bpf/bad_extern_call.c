/* A call to a function defined elsewhere (needs a linker). */
#include "ncclbpf.h"
extern int elsewhere(int x);
SEC("tuner")
int calls_extern(struct ncclbpf_tuner_ctx *ctx)
{
	ctx->n_channels = elsewhere(ctx->n_ranks);
	return 0;
}
