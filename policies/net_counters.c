/* Net program: per-peer byte, message and latency counters. Every completed send and receive
 * adds its bytes and its latency (time from isend/irecv to the test() that saw it done) to the
 * entry of its peer (address and device). Read with `ncclbpf maps` or ncclbpf_rt_map_lookup, or
 * as Prometheus counters when telemetry exports are on (docs/telemetry.md, "Policy maps").
 * Messages and bytes count every completion; latency is sampled: one request in 8 per
 * connection is timed (the section below), since timing one costs two clock reads on NCCL's
 * proxy thread and timing all cost about 1 % of a 16-64 KiB AllReduce (docs/net-plugin.md).
 * Mean latency = send_ns / send_timed; max is the largest sampled. A completion is untimed
 * when its duration is 0 (not sampled, or posted before a program needed the time). To time
 * every message: SEC("net/complete"), or NCCLBPF_NET_TIME_EVERY=1 when deploying.
 *
 * Rank-local observation only: the program never changes what is sent. */
#include "ncclbpf.h"

struct peer_key {
	__u32 addr[4]; /* IPv4 in addr[0], network order; all zero when unknown */
	__u32 dev;
	__u32 _pad;
};

struct peer_stats {
	__u64 sends, send_bytes, send_ns, send_max_ns;
	__u64 recvs, recv_bytes, recv_ns, recv_max_ns;
	__u64 send_timed, recv_timed; /* completions with a duration */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct peer_key);
	__type(value, struct peer_stats);
	NCCLBPF_EXPORT_COUNTERS; /* ncclbpf_map_net_peers_*_total with telemetry on */
} net_peers SEC(".maps");

SEC(NCCLBPF_NET_COMPLETE_SAMPLED(8))
int net_counters(struct ncclbpf_net_ctx *ctx)
{
	struct peer_key key = {};
	struct peer_stats *s;
	__u64 d = ctx->duration_ns;

	key.addr[0] = ctx->peer_addr[0];
	key.addr[1] = ctx->peer_addr[1];
	key.addr[2] = ctx->peer_addr[2];
	key.addr[3] = ctx->peer_addr[3];
	key.dev = ctx->dev;
	s = bpf_map_lookup_elem(&net_peers, &key);
	if (!s) {
		struct peer_stats zero = {};
		/* Another thread may insert it first: then add to theirs. */
		bpf_map_update_elem(&net_peers, &key, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&net_peers, &key);
		if (!s)
			return 0;
	}
	if (ctx->op == NCCLBPF_NET_COMPLETE) {
		__sync_fetch_and_add(&s->sends, 1);
		__sync_fetch_and_add(&s->send_bytes, ctx->bytes);
		if (d) {
			__sync_fetch_and_add(&s->send_timed, 1);
			__sync_fetch_and_add(&s->send_ns, d);
			if (d > s->send_max_ns)
				s->send_max_ns = d;
		}
	} else if (ctx->op == NCCLBPF_NET_COMPLETE_RECV) {
		__sync_fetch_and_add(&s->recvs, 1);
		__sync_fetch_and_add(&s->recv_bytes, ctx->bytes);
		if (d) {
			__sync_fetch_and_add(&s->recv_timed, 1);
			__sync_fetch_and_add(&s->recv_ns, d);
			if (d > s->recv_max_ns)
				s->recv_max_ns = d;
		}
	}
	return 0;
}
