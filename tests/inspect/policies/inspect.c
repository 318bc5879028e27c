/* Test policy for live inspection (tests/inspect): a tuner that always picks RING/SIMPLE, asks
 * for 8 channels from 64 KiB up (or the channel count in `tuner_cfg`, once someone sets it) and
 * counts its calls in an array map and a per-CPU array; a profiler program that writes a fourth
 * map. Every map a program writes is rank-local (`ncclbpf map update` may change it in one
 * process); `tuner_cfg`, which only the operator writes, is uniform (changed through the
 * control plane); `comm_calls` counts each communicator's calls in its own instance
 * (per-communicator: dumped per communicator, never updated from outside). */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} tuner_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} percpu_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} prof_last SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} tuner_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, NCCLBPF_F_PER_COMM);
	__type(key, __u32);
	__type(value, __u64);
} comm_calls SEC(".maps");

SEC("tuner")
int tune(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&comm_calls, &k);
	if (v)
		*v += 1;
	v = bpf_map_lookup_elem(&tuner_calls, &k);
	if (v)
		*v += 1;
	v = bpf_map_lookup_elem(&percpu_calls, &k);
	if (v)
		*v += 1;
	/* Separate 4-byte stores (the context's fields are checked one by one): keep clang
	 * from merging the two constants into one 8-byte store. */
	ctx->algorithm = NCCLBPF_ALGO_RING;
	asm volatile("" ::: "memory");
	ctx->protocol = NCCLBPF_PROTO_SIMPLE;
	k = 1;
	v = bpf_map_lookup_elem(&tuner_cfg, &k);
	if (v && *v >= 1 && *v <= 64)
		ctx->n_channels = *v;
	else if (ctx->n_bytes >= 65536)
		ctx->n_channels = 8;
	return 0;
}

SEC("profiler")
int prof(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&prof_last, &k);
	if (v)
		*v = ctx->duration_ns;
	return 0;
}
