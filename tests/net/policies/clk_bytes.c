/* test_net_clock: programs that read no time field (only bytes), so the plugin reads no clock
 * for any of these events. Each returns bytes + a per-op constant to show it ran. */
#include "ncclbpf.h"

SEC("net/connect")
int clk_connect(struct ncclbpf_net_ctx *ctx)
{
	return (ctx->bytes & 0xffff) + 1;
}

SEC("net/isend")
int clk_isend(struct ncclbpf_net_ctx *ctx)
{
	return (ctx->bytes & 0xffff) + 1;
}

SEC("net/complete")
int clk_complete(struct ncclbpf_net_ctx *ctx)
{
	return (ctx->bytes & 0xffff) + 2;
}
