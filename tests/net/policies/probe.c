/* One log line per hook run with the context fields the test checks (test_net probe). */
#include "ncclbpf.h"

/* The helper's prototype reads three arguments: unused ones are 0. */
#define LOG(fmt, a, b, c)                                                                          \
	({                                                                                         \
		static const char f_[] = fmt;                                                      \
		bpf_trace_printk(f_, sizeof(f_), a, b, c);                                         \
	})

static __always_inline int admission(struct ncclbpf_net_ctx *ctx, int connect)
{
	if (ctx->peer_port == 0 || ctx->peer != 0xffffffff || ctx->time_ns == 0)
		LOG("probe bad port=0 or peer or time", 0, 0, 0);
	else if (connect && ctx->op == NCCLBPF_NET_CONNECT)
		LOG("probe connect dev=%u comm=%llx addr=%x", ctx->dev, ctx->comm_id,
		    ctx->peer_addr[0]);
	else if (!connect && ctx->op == NCCLBPF_NET_ACCEPT)
		LOG("probe accept dev=%u comm=%llx addr=%x", ctx->dev, ctx->comm_id,
		    ctx->peer_addr[0]);
	else
		LOG("probe wrong op %u", ctx->op, 0, 0);
	return NCCLBPF_NET_ALLOW;
}

SEC("net/connect")
int on_connect(struct ncclbpf_net_ctx *ctx)
{
	return admission(ctx, 1);
}

SEC("net/accept")
int on_accept(struct ncclbpf_net_ctx *ctx)
{
	return admission(ctx, 0);
}

SEC("net/isend")
int on_isend(struct ncclbpf_net_ctx *ctx)
{
	if (ctx->op == NCCLBPF_NET_ISEND && ctx->comm_id == 0x1234abcd && ctx->peer_port)
		LOG("probe isend bytes=%llu tag=%d peer=%x", ctx->bytes, ctx->tag, ctx->peer);
	return 0; /* unpaced */
}

SEC("net/irecv")
int on_irecv(struct ncclbpf_net_ctx *ctx)
{
	if (ctx->op == NCCLBPF_NET_IRECV && ctx->comm_id == 0x1234abcd)
		LOG("probe irecv bytes=%llu tag=%d", ctx->bytes, ctx->tag, 0);
	return 0;
}

SEC("net/complete")
int on_complete(struct ncclbpf_net_ctx *ctx)
{
	__u32 timed = ctx->time_ns > 0 && ctx->duration_ns > 0 && ctx->duration_ns < ctx->time_ns;
	LOG("probe complete op=%u bytes=%llu timed=%u", ctx->op, ctx->bytes, timed);
	return 0;
}
