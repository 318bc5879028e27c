/* Counts that decide after the loop, one of them kept on the stack (volatile here; clang spills
 * a counter there when registers run short): the states where an iteration's paths meet differ
 * by the iteration and the counts reached. Complete states are found by the values of their
 * precise scalars (prec_counter_loop.c), and a spilled count is one of those: with only
 * registers keyed, the states differing in the stacked count were walked most recently
 * completed first, at most 64 a visit, and this program ran into the 1,000,000-instruction
 * budget. */
/* EXPECT-ACCEPT */
/* EXPECT-PROCESSED-MAX: 40000 */
#include "ncclbpf.h"

#define ENTRIES 12

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ENTRIES);
	__type(key, __u32);
	__type(value, __u64);
} weights SEC(".maps");

SEC("tuner")
int count_spilled(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 slow = 0, missing = 0;
	volatile __u64 fast = 0;
	__u64 bytes = ctx->n_bytes;

	for (int i = 0; i < ENTRIES; i++) {
		__u32 k = i;
		__u64 *v = bpf_map_lookup_elem(&weights, &k);
		if (!v) {
			missing++;
			continue;
		}
		if (*v > bytes)
			slow++;
		else if (*v > 100)
			fast = fast + 1;
	}
	if (missing > 2)
		return 0;
	ctx->n_channels = slow > fast ? 8 : 2;
	ctx->protocol = slow > 4 ? NCCLBPF_PROTO_SIMPLE : NCCLBPF_PROTO_LL;
	return 0;
}
