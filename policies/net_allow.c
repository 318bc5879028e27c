/* Net program: a peer allow-list. A connection is made (connect) or taken (accept) only when
 * the peer's IPv4 address is in the map net_allow (value non-zero), or it is a loopback address
 * and allow_loopback is set. Everything else is refused: the plugin logs it once and the NCCL
 * call fails on both ends. Refusals are counted per address in net_refused.
 *
 * Fill the list before the job connects, e.g. `ncclbpf maps update BUNDLE net_allow KEY 1`, or
 * from the user side with ncclbpf_rt_map_update. A peer whose address the plugin does not know
 * (a delegated inner plugin's opaque handle: all zero) is allowed: there is nothing to judge. */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* IPv4 address, network order (as in ctx->peer_addr[0]) */
	__type(value, __u32);
} net_allow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} net_refused SEC(".maps");

/* 127.0.0.0/8 and ::1 are allowed unless this is cleared (global data: `ncclbpf maps`). */
volatile __u32 allow_loopback = 1;

static __always_inline int is_loopback(struct ncclbpf_net_ctx *ctx)
{
	__u32 a0 = ctx->peer_addr[0], a1 = ctx->peer_addr[1], a2 = ctx->peer_addr[2],
	      a3 = ctx->peer_addr[3];
	if (a1 == 0 && a2 == 0 && a3 == 0)
		return (a0 & 0xff) == 127; /* first octet, network order read little-endian */
	return a0 == 0 && a1 == 0 && a2 == 0 && a3 == 0x01000000; /* ::1 */
}

static __always_inline int admit(struct ncclbpf_net_ctx *ctx)
{
	__u32 a0 = ctx->peer_addr[0];
	__u32 *ok;
	__u64 one = 1, *n;

	if (a0 == 0 && ctx->peer_addr[1] == 0 && ctx->peer_addr[2] == 0 && ctx->peer_addr[3] == 0)
		return NCCLBPF_NET_ALLOW;
	if (allow_loopback && is_loopback(ctx))
		return NCCLBPF_NET_ALLOW;
	ok = bpf_map_lookup_elem(&net_allow, &a0);
	if (ok && *ok)
		return NCCLBPF_NET_ALLOW;
	n = bpf_map_lookup_elem(&net_refused, &a0);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&net_refused, &a0, &one, BPF_NOEXIST);
	return NCCLBPF_NET_DENY;
}

SEC("net/connect")
int allow_connect(struct ncclbpf_net_ctx *ctx)
{
	return admit(ctx);
}

SEC("net/accept")
int allow_accept(struct ncclbpf_net_ctx *ctx)
{
	return admit(ctx);
}
