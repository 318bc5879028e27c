/* A tuner that decides from what the profiler measured on this rank: the profiler's writes make
 * the map rank-local, and the advice is the control plane's (the operator writes a map no
 * program writes). */
/* EXPECT-REJECT: `lat` is written by profiler program `measure` at line @*v = ctx->duration_ns;@ */
/* EXPECT-REJECT: it holds this rank's own measurements; act on them through the control plane */
/* EXPECT-REJECT: (ncclbpf map update with NCCLBPF_CP_DIR) into a map no program writes */
/* EXPECT-CLASS: lat rank-local */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lat SEC(".maps");

SEC("profiler")
int measure(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&lat, &k);
	if (v && ctx->event == NCCLBPF_PROF_COLL_END)
		*v = ctx->duration_ns;
	return 0;
}

SEC("tuner")
int decide(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&lat, &k);
	if (v && *v > 100000)
		ctx->algorithm = NCCLBPF_ALGO_RING;
	return 0;
}
