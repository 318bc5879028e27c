/* Benchmark-only net program: a deliberately expensive SEC("net/complete") (a latency histogram
 * per peer slot, 64 hash-map updates per completion, about as much work as the verifier's
 * budget lets an author write without loops). It shows what a heavier observer costs NCCL's
 * proxy thread when it runs inline (NCCLBPF_NET_DEFER=0) and when the runtime's drain thread
 * runs it (docs/net-plugin.md, hook cost). */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u64);
} net_heavy SEC(".maps");

SEC("net/complete")
int net_heavy_complete(struct ncclbpf_net_ctx *ctx)
{
	__u64 base = (ctx->duration_ns >> 10) & 63;
#pragma unroll
	for (int i = 0; i < 64; i++) {
		__u64 key = (base + i) * 64 + (ctx->op & 1), one = 1;
		__u64 *v = bpf_map_lookup_elem(&net_heavy, &key);
		if (v)
			__sync_fetch_and_add(v, ctx->bytes);
		else
			bpf_map_update_elem(&net_heavy, &key, &one, BPF_ANY);
	}
	return 0;
}
