/* Statistics are fine: the tuner counts its calls and records the clock in a map it writes, and
 * decides only from the message size and a map no program writes. */
/* EXPECT-ACCEPT */
/* EXPECT-CLASS: stats rank-local */
/* EXPECT-CLASS: cfg uniform */
#include "ncclbpf.h"

struct stat {
	__u64 calls;
	__u64 last_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stat);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cfg SEC(".maps");

SEC("tuner")
int keep_stats(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	struct stat *s = bpf_map_lookup_elem(&stats, &k);
	__u64 *limit = bpf_map_lookup_elem(&cfg, &k);

	if (s) {
		__sync_fetch_and_add(&s->calls, 1);
		s->last_ns = bpf_ktime_get_ns();
	}
	if (limit && ctx->n_bytes > *limit)
		ctx->algorithm = NCCLBPF_ALGO_RING;
	return 0;
}
