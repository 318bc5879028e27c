/* Uses every part of the policy SDK once, so that `clang -O2 -g -target bpf -mcpu=v3 -Wall
 * -Wextra -Werror` over this file proves the header compiles cleanly (CTest: sdk_header_bpf). */
#include "ncclbpf.h"

struct val {
	__u64 a;
	__s64 b;
	__u32 c;
	__s32 d;
	__u16 e;
	__s16 f;
	__u8 g;
	__s8 h;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, struct val);
} h SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pa SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
	NCCLBPF_EXPORT_COUNTERS;
} ph SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
	NCCLBPF_EXPORT_GAUGES;
} lru SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

struct inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct inner);
} outer_decl_only;

static __always_inline int valid_cell(struct ncclbpf_tuner_ctx *ctx)
{
	return ctx->cost_ns[NCCLBPF_ALGO_RING][NCCLBPF_PROTO_SIMPLE] != NCCLBPF_COST_NA;
}

SEC("tuner")
int tune_all(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	struct val v = {.a = ctx->n_bytes};
	__u64 *p;

	bpf_map_update_elem(&h, &k, &v, BPF_ANY);
	bpf_map_update_elem(&h, &k, &v, BPF_NOEXIST);
	bpf_map_update_elem(&h, &k, &v, BPF_EXIST);
	bpf_map_delete_elem(&h, &k);
	p = bpf_map_lookup_elem(&arr, &k);
	if (p)
		*p += bpf_ktime_get_ns() + bpf_get_prandom_u32() + bpf_get_smp_processor_id();
	bpf_map_lookup_elem(&pa, &k);
	bpf_map_lookup_elem(&ph, &k);
	bpf_map_lookup_elem(&lru, &k);
	bpf_printk("coll %u bytes %llu", ctx->coll_type, ctx->n_bytes);
	if (valid_cell(ctx) && ctx->coll_type == NCCLBPF_COLL_ALLREDUCE) {
		ctx->algorithm = NCCLBPF_ALGO_RING;
		ctx->protocol = NCCLBPF_PROTO_SIMPLE;
		ctx->n_channels = NCCLBPF_CHANNELS_DEFAULT;
	} else {
		ctx->algorithm = NCCLBPF_ALGO_DEFAULT;
		ctx->protocol = NCCLBPF_PROTO_DEFAULT;
	}
	return 0;
}

SEC("tuner/chunk")
int chunk_all(struct ncclbpf_chunk_ctx *ctx)
{
	ctx->chunk_size = ctx->nccl_chunk > 0 ? ctx->nccl_chunk : NCCLBPF_CHUNK_DEFAULT;
	return 0;
}

SEC("profiler")
int prof_all(struct ncclbpf_profiler_ctx *ctx)
{
	__u64 *rec;

	if (ctx->event != NCCLBPF_PROF_COLL_END && ctx->event != NCCLBPF_PROF_KERNEL_CH &&
	    ctx->event != NCCLBPF_PROF_PROXY_OP && ctx->event != NCCLBPF_PROF_COLL_START)
		return 0;
	rec = bpf_ringbuf_reserve(&rb, sizeof(*rec), 0);
	if (!rec)
		return 0;
	*rec = ctx->duration_ns;
	if (ctx->n_bytes)
		bpf_ringbuf_submit(rec, 0);
	else
		bpf_ringbuf_discard(rec, 0);
	bpf_ringbuf_output(&rb, &ctx->n_bytes, 8, 0);
	return 0;
}

SEC("net/connect")
int net_all(struct ncclbpf_net_ctx *ctx)
{
	if (ctx->op == NCCLBPF_NET_CONNECT || ctx->op == NCCLBPF_NET_ACCEPT ||
	    ctx->op == NCCLBPF_NET_ISEND || ctx->op == NCCLBPF_NET_IRECV ||
	    ctx->op == NCCLBPF_NET_COMPLETE)
		return ctx->peer_port == 22 ? NCCLBPF_NET_DENY : NCCLBPF_NET_ALLOW;
	return NCCLBPF_NET_ALLOW;
}
