/* A per-communicator map must stay the same on every rank: the clock may not go into it. */
/* EXPECT-REJECT: rank-local value (ktime_get_ns() at line @bpf_ktime_get_ns@) */
/* EXPECT-REJECT: stored into per-communicator map `last` */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, NCCLBPF_F_PER_COMM);
	__type(key, __u32);
	__type(value, __u64);
} last SEC(".maps");

SEC("tuner")
int remember_time(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u64 *t = bpf_map_lookup_elem(&last, &k);

	(void)ctx;
	if (t)
		*t = bpf_ktime_get_ns();
	return 0;
}
