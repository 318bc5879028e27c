/* Exported policy maps (tests/telemetry/test_telem_maps.c): per collective type and size bucket,
 * counters (count, bytes) and a gauge array (last duration, a signed value), plus an IPv4-like
 * integer-array key member. */
#include "ncclbpf.h"

struct coll_key {
	__u32 coll;
	__u32 bucket;
	__u8 addr[4];
	__u32 _pad; /* left out */
};

struct coll_val {
	__u64 count;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct coll_key);
	__type(value, struct coll_val);
	NCCLBPF_EXPORT_COUNTERS;
} colls SEC(".maps");

struct last_val {
	__u64 last_ns;
	__s32 minus_rank;
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct last_val);
	NCCLBPF_EXPORT_GAUGES;
} last SEC(".maps");

SEC("profiler/coll_end")
int export_colls(struct ncclbpf_profiler_ctx *ctx)
{
	struct coll_key k = {.coll = ctx->coll_type, .bucket = ncclbpf_log2_u64(ctx->n_bytes)};
	struct coll_val *v, zero = {};
	__u32 idx = 1;
	struct last_val *l;

	k.addr[0] = 10;
	k.addr[3] = (__u8)ctx->rank;
	v = bpf_map_lookup_elem(&colls, &k);
	if (!v) {
		bpf_map_update_elem(&colls, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&colls, &k);
		if (!v)
			return 0;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->bytes, ctx->n_bytes);
	l = bpf_map_lookup_elem(&last, &idx);
	if (l) {
		l->last_ns = ctx->duration_ns;
		l->minus_rank = -(__s32)ctx->rank - 1;
	}
	return 0;
}
