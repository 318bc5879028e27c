/* A bounded loop over a small array map's entries, keeping the cheapest: the counter lives on the
 * stack (its address goes to the lookup) and the running minimum must not make every iteration's
 * paths distinct. */
/* EXPECT-ACCEPT */
/* EXPECT-PROCESSED-MAX: 1000 */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} channel_cost SEC(".maps");

SEC("tuner")
int cheapest(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 best = ~0ull;
	__u32 pick = 0;

	for (__u32 i = 0; i < 16; i++) {
		__u64 *v = bpf_map_lookup_elem(&channel_cost, &i);
		if (v && *v < best) {
			best = *v;
			pick = i;
		}
	}
	ctx->n_channels = pick + 1;
	return 0;
}
