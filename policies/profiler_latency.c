/* Profiler program: aggregates the GPU latency of finished collectives per (communicator,
 * collective type, message-size bucket) into a hash map that tools (ncclbpf maps) read.
 * Bucket b holds sizes in [2^b, 2^(b+1)) bytes (bucket 0 also holds empty messages).
 *
 * The map is rank-local data (each rank measures its own latency): a tuner that decided from
 * it would be rejected by the verifier (see policies/unsafe/rank_dependent.c). */
#include "ncclbpf.h"

struct lat_key {
	__u64 comm_id;
	__u32 coll_type;
	__u32 bucket;
};

struct lat_val {
	__u64 count;
	__u64 total_ns;
	__u64 min_ns;
	__u64 max_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct lat_key);
	__type(value, struct lat_val);
} latency SEC(".maps");

/* floor(log2(x)) for x > 0, 0 for x == 0, without loops. */
static __always_inline __u32 log2_u64(__u64 x)
{
	__u32 r = 0;
	if (x >> 32) {
		x >>= 32;
		r += 32;
	}
	if (x >> 16) {
		x >>= 16;
		r += 16;
	}
	if (x >> 8) {
		x >>= 8;
		r += 8;
	}
	if (x >> 4) {
		x >>= 4;
		r += 4;
	}
	if (x >> 2) {
		x >>= 2;
		r += 2;
	}
	if (x >> 1)
		r += 1;
	return r;
}

SEC("profiler")
int profiler_latency(struct ncclbpf_profiler_ctx *ctx)
{
	struct lat_key key = {};
	struct lat_val *v;
	__u64 d;

	if (ctx->event != NCCLBPF_PROF_COLL_END)
		return 0;
	d = ctx->duration_ns;
	key.comm_id = ctx->comm_id;
	key.coll_type = ctx->coll_type;
	key.bucket = log2_u64(ctx->n_bytes);

	v = bpf_map_lookup_elem(&latency, &key);
	if (!v) {
		struct lat_val init = {.count = 1, .total_ns = d, .min_ns = d, .max_ns = d};
		/* Another thread may have inserted it meanwhile: then add to theirs. */
		if (bpf_map_update_elem(&latency, &key, &init, BPF_NOEXIST) == 0)
			return 0;
		v = bpf_map_lookup_elem(&latency, &key);
		if (!v)
			return 0;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->total_ns, d);
	if (d < v->min_ns)
		v->min_ns = d;
	if (d > v->max_ns)
		v->max_ns = d;
	return 0;
}
