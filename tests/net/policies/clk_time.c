/* test_net_clock: connect and isend programs that read time_ns (the clock is read for them),
 * and a complete program that reads only op (no clock at completion, none at irecv). */
#include "ncclbpf.h"

SEC("net/connect")
int clk_time_connect(struct ncclbpf_net_ctx *ctx)
{
	return ctx->time_ns ? 5 : 4;
}

SEC("net/isend")
int clk_time_isend(struct ncclbpf_net_ctx *ctx)
{
	return ctx->time_ns ? 5 : 4;
}

SEC("net/complete")
int clk_time_complete(struct ncclbpf_net_ctx *ctx)
{
	return ctx->op;
}
