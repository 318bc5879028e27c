/* test_net_clock: SEC("net/complete/time_every=4") reading duration_ns: the runtime asks the
 * caller to stamp one post in 4 (ncclbpf_rt_net_event's *stamp_after). Returns 7 when a
 * duration reached it, 3 when it was 0. */
#include "ncclbpf.h"

SEC(NCCLBPF_NET_COMPLETE_SAMPLED(4))
int clk_sampled(struct ncclbpf_net_ctx *ctx)
{
	return ctx->duration_ns ? 7 : 3;
}
