/* prec_array_scan.c over a 256-entry array map: the counter lives on the stack, so every
 * iteration's states where its paths meet look alike to the signature (which hashes registers
 * only) and are told apart by the stack. Two things made it run into the 1,000,000-instruction
 * budget: a helper call counted as reading r1-r5, which left r3-r5 (never set) live across the
 * loop, so every stored state matched any signature and at most 64 were kept per instruction;
 * and a visit scanned its instruction's states newest first, where a side branch's own
 * iteration's state was the last. About 16 processed instructions per iteration. */
/* EXPECT-ACCEPT */
/* EXPECT-PROCESSED-MAX: 5000 */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} channel_cost SEC(".maps");

SEC("tuner")
int cheapest_of_many(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 best = ~0ull;
	__u32 pick = 0;

	for (__u32 i = 0; i < 256; i++) {
		__u64 *v = bpf_map_lookup_elem(&channel_cost, &i);
		if (v && *v < best) {
			best = *v;
			pick = i;
		}
	}
	ctx->n_channels = pick + 1;
	return 0;
}
