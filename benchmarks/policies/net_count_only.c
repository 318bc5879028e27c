/* Benchmark-only net program: net_counters.c without the latency. Every completed send and
 * receive adds one message and its bytes to the entry of its peer (address and device). It
 * reads no time field (time_ns, duration_ns), so the plugin reads no clock for it
 * (docs/net-plugin.md, hook cost): ncclbpf-net-bench --policy2 compares it with net_counters.o. */
#include "ncclbpf.h"

struct peer_key {
	__u32 addr[4]; /* IPv4 in addr[0], network order; all zero when unknown */
	__u32 dev;
	__u32 _pad;
};

struct peer_count {
	__u64 sends, send_bytes, recvs, recv_bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct peer_key);
	__type(value, struct peer_count);
} net_count SEC(".maps");

SEC("net/complete")
int net_count_only(struct ncclbpf_net_ctx *ctx)
{
	struct peer_key key = {};
	struct peer_count *s;

	key.addr[0] = ctx->peer_addr[0];
	key.addr[1] = ctx->peer_addr[1];
	key.addr[2] = ctx->peer_addr[2];
	key.addr[3] = ctx->peer_addr[3];
	key.dev = ctx->dev;
	s = bpf_map_lookup_elem(&net_count, &key);
	if (!s) {
		struct peer_count zero = {};
		/* Another thread may insert it first: then add to theirs. */
		bpf_map_update_elem(&net_count, &key, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&net_count, &key);
		if (!s)
			return 0;
	}
	if (ctx->op == NCCLBPF_NET_COMPLETE) {
		__sync_fetch_and_add(&s->sends, 1);
		__sync_fetch_and_add(&s->send_bytes, ctx->bytes);
	} else if (ctx->op == NCCLBPF_NET_COMPLETE_RECV) {
		__sync_fetch_and_add(&s->recvs, 1);
		__sync_fetch_and_add(&s->recv_bytes, ctx->bytes);
	}
	return 0;
}
