/* Refuses every peer, in both directions (tests: a refusal fails cleanly on both sides). */
#include "ncclbpf.h"

SEC("net/connect")
int deny_connect(struct ncclbpf_net_ctx *ctx)
{
	return NCCLBPF_NET_DENY;
}

SEC("net/accept")
int deny_accept(struct ncclbpf_net_ctx *ctx)
{
	return NCCLBPF_NET_DENY;
}
