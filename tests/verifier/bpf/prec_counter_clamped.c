/* prec_counter_paths.c with the count clamped inside the loop to what the decision after it
 * needs (docs/troubleshooting.md gives this rewrite for a rejected counting loop): the count
 * takes at most 10 values, so the states where an iteration's paths meet stay a few per
 * iteration and 64 iterations are accepted (12,330 processed instructions). */
/* EXPECT-ACCEPT */
/* EXPECT-PROCESSED-MAX: 16000 */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} weights SEC(".maps");

SEC("tuner")
int count_clamped(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 sum = 0;

	for (int i = 0; i < 64; i++) {
		__u32 k = i;
		__u64 *v = bpf_map_lookup_elem(&weights, &k);
		if (!v)
			continue;
		if (*v > 100)
			sum += 2;
		else
			sum += 1;
		if (sum > 9)
			sum = 9;
	}
	ctx->n_channels = sum > 8 ? 8 : 1;
	return 0;
}
