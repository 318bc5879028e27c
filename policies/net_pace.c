/* Net program: pacing. Each isend may start no faster than a rate in MB/s (10^6 bytes/s) that
 * the plugin enforces per connection with a token bucket; 0 means unpaced. The rate is taken
 * from pace_by_addr (per peer IPv4 address), else default_mbps. Messages below pace_min_bytes
 * are never paced (small messages are latency-bound; pacing them only adds delay).
 *
 * Use: keep one job's bulk traffic from starving another on a shared link. Pacing changes only
 * when bytes leave, never which bytes. */
#include "ncclbpf.h"

#ifndef NET_PACE_MBPS
#define NET_PACE_MBPS 1000
#endif

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);   /* IPv4 address, network order */
	__type(value, __u64); /* MB/s */
} pace_by_addr SEC(".maps");

volatile __u64 default_mbps = NET_PACE_MBPS;
volatile __u64 pace_min_bytes = 65536;

SEC("net/isend")
int net_pace(struct ncclbpf_net_ctx *ctx)
{
	__u32 a0 = ctx->peer_addr[0];
	__u64 *rate, r;

	if (ctx->bytes < pace_min_bytes)
		return 0;
	rate = bpf_map_lookup_elem(&pace_by_addr, &a0);
	r = rate ? *rate : default_mbps;
	if (r > 0xffffffffull)
		r = 0xffffffffull;
	return r & 0xffffffff; /* the verifier checks the range: a 32-bit rate */
}
