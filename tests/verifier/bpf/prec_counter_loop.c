/* A count whose value decides a branch after the loop (prec_counter_paths.c with 24 entries):
 * the states where the paths of an iteration meet differ by the iteration and by the count
 * reached, up to 2 * i + 1 counts at iteration i, and a path can be pruned only against the
 * state of its own iteration and count. Those states were walked most recently completed first,
 * at most 64 a visit, and the ones passed over without a match were dropped from the walk after
 * a few misses: from 12 entries up the analysis ran into the 1,000,000-instruction budget. Now
 * the complete states of such a meeting point are found by the values of their precise scalars
 * (engine/src/verifier/state_index.c). About 20 processed instructions per stored state. */
/* EXPECT-ACCEPT */
/* EXPECT-PROCESSED-MAX: 16000 */
#include "ncclbpf.h"

#define ENTRIES 24

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ENTRIES);
	__type(key, __u32);
	__type(value, __u64);
} weights SEC(".maps");

SEC("tuner")
int count_loop(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 sum = 0;

	for (int i = 0; i < ENTRIES; i++) {
		__u32 k = i;
		__u64 *v = bpf_map_lookup_elem(&weights, &k);
		if (!v)
			continue;
		if (*v > 100)
			sum += 2;
		else
			sum += 1;
	}
	ctx->n_channels = sum > 8 ? 8 : 1;
	return 0;
}
