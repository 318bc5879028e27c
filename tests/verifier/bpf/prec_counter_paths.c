/* A count whose range decides a branch after the loop: every path through the loop carries its
 * own count, so the states where an iteration's paths meet number the counts reached by then
 * (up to 2 * i + 1 at iteration i; prec_counter_loop.c, 24 iterations, is accepted). At 64
 * iterations they do not fit the memory the verifier stores states in, and the analysis runs
 * into the complexity budget. What it may not do on the way is take the memory of
 * the process that verifies it (a job, at its start): it stored states until the limit of
 * 65,536, 116 MB, before states were stored only while the verifier's memory stays under 16 MiB. */
/* EXPECT-REJECT: program too complex */
/* EXPECT-REJECT: this loop compares against 64: */
/* EXPECT-MEMORY-MAX-MB: 24 */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} weights SEC(".maps");

SEC("tuner")
int count_heavy(struct ncclbpf_tuner_ctx *ctx)
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
	}
	ctx->n_channels = sum > 8 ? 8 : 1;
	return 0;
}
