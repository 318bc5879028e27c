/* test_net_clock: sampled timing with N = 0 (valid: 1..1048576), refused. */
#include "ncclbpf.h"

SEC(NCCLBPF_NET_COMPLETE_SAMPLED(0))
int bad_every0(struct ncclbpf_net_ctx *ctx)
{
	return ctx->duration_ns != 0;
}
