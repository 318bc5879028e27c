/* Test policy: channels from the node count (1 + n_nodes % 60), nothing else. It calls nothing,
 * so it compiles to a register-keeping entry, but it reads n_nodes, which the keeping path does
 * not fill (NCCLBPF_RT_TUNER_KEEPING_WORDS): it must take the plain path and see the value. */
#include "ncclbpf.h"

SEC("tuner")
int by_nodes(struct ncclbpf_tuner_ctx *ctx)
{
	ctx->n_channels = 1 + (int)(ctx->n_nodes % 60);
	return 0;
}
