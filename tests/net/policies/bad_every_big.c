/* test_net_clock: sampled timing with N = 1048577 (valid: 1..1048576), refused. */
#include "ncclbpf.h"

SEC(NCCLBPF_NET_COMPLETE_SAMPLED(1048577))
int bad_every_big(struct ncclbpf_net_ctx *ctx)
{
	return ctx->duration_ns != 0;
}
