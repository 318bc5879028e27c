/* test_net_clock: only SEC("net/complete"), reading duration_ns alone: the clock is read at
 * every isend/irecv post (the posting time) and at the completion. Returns 7 when a duration
 * reached it, 3 when it was 0. */
#include "ncclbpf.h"

SEC("net/complete")
int clk_duration(struct ncclbpf_net_ctx *ctx)
{
	return ctx->duration_ns ? 7 : 3;
}
