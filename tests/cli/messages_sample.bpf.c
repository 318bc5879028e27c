/* A tuner the verifier rejects (it dereferences a number read from the context), compiled by
 * cli_messages.sh with and without -g: the rejection must name the source line, or say how to
 * get it. */
#include "ncclbpf.h"

SEC("tuner")
int deref_seq(struct ncclbpf_tuner_ctx *ctx)
{
	if (ctx->n_bytes > 5)
		return *(volatile int *)(long)ctx->seq;
	return 0;
}
