/* Benchmark-only net program: a completion program that reads no time field and does nothing.
 * The plugin still queues every completion for the drain thread, so against noop.o (no net
 * programs) it measures the queueing alone; with NCCLBPF_NET_DEFER=0 it runs inline and costs
 * one call of an empty program, a control for the other figures. */
#include "ncclbpf.h"

SEC("net/complete")
int net_empty(struct ncclbpf_net_ctx *ctx)
{
	return ctx->op == 0; /* never true; a use of the context so it is not optimized away */
}
