/* A tuner whose bounded loop runs too often for the tuner's budget (10000 iterations):
 * cli_messages.sh checks that the rejection names the loop's line, the bound and the budget. */
#include "ncclbpf.h"

SEC("tuner")
int long_loop(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 s = 0;
	for (__u32 i = 0; i < 10000; i++)
		s += ctx->n_bytes >> (i & 7);
	ctx->n_channels = s & 7;
	return 0;
}
