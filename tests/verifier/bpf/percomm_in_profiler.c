/* A profiler program runs outside any communicator's decisions: it may not touch one. */
/* EXPECT-REJECT: program 'measure' (section 'profiler') */
/* EXPECT-REJECT: per-communicator map `lat` is decision state: only tuner programs may use it */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, NCCLBPF_F_PER_COMM);
	__type(key, __u32);
	__type(value, __u64);
} lat SEC(".maps");

SEC("profiler")
int measure(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&lat, &k);

	if (v)
		*v = ctx->duration_ns;
	return 0;
}

SEC("tuner")
int tune(struct ncclbpf_tuner_ctx *ctx)
{
	(void)ctx;
	return 0;
}
