/* Test profiler program: records what the adapter delivers so that tests can check it.
 * counts[event] counts events by kind; colls[(comm, rank, seq)] keeps each COLL_END (and how
 * often it came); last_kch / last_proxy keep the latest KERNEL_CH / PROXY_OP context.
 * Built as SEC("profiler"), with -DPROXY as SEC("profiler/proxy") and with -DEND_ONLY as
 * SEC("profiler/coll_end") (a section the runtime knows once it defines
 * NCCLBPF_RT_PROF_END_ONLY; test_profiler uses it only then). */
#include "ncclbpf.h"

struct coll_key {
	__u64 comm_id;
	__u64 seq;
	__u32 rank;
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct coll_key);
	__type(value, struct ncclbpf_profiler_ctx);
} colls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ncclbpf_profiler_ctx);
} last_kch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ncclbpf_profiler_ctx);
} last_proxy SEC(".maps");

static __always_inline void copy(struct ncclbpf_profiler_ctx *d, struct ncclbpf_profiler_ctx *s)
{
	d->comm_id = s->comm_id;
	d->seq = s->seq;
	d->n_bytes = s->n_bytes;
	d->start_ns = s->start_ns;
	d->end_ns = s->end_ns;
	d->duration_ns = s->duration_ns;
	d->event = s->event;
	d->rank = s->rank;
	d->n_ranks = s->n_ranks;
	d->coll_type = s->coll_type;
	d->algorithm = s->algorithm;
	d->protocol = s->protocol;
	d->n_channels = s->n_channels;
	d->channel = s->channel;
	d->peer = s->peer;
}

#ifdef PROXY
SEC("profiler/proxy")
#elif defined(END_ONLY)
SEC("profiler/coll_end")
#else
SEC("profiler")
#endif
int prof_record(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 k = ctx->event & 7, zero = 0;
	__u64 *n = bpf_map_lookup_elem(&counts, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	if (ctx->event == NCCLBPF_PROF_COLL_END) {
		struct coll_key key = {.comm_id = ctx->comm_id, .seq = ctx->seq, .rank = ctx->rank};
		struct ncclbpf_profiler_ctx *v = bpf_map_lookup_elem(&colls, &key);
		if (v) {
			/* A second COLL_END for the same collective: count it in _pad0. */
			__sync_fetch_and_add(&v->_pad0, 1);
			return 0;
		}
		struct ncclbpf_profiler_ctx c = {};
		copy(&c, ctx);
		c._pad0 = 1;
		bpf_map_update_elem(&colls, &key, &c, BPF_ANY);
	} else if (ctx->event == NCCLBPF_PROF_KERNEL_CH) {
		struct ncclbpf_profiler_ctx *v = bpf_map_lookup_elem(&last_kch, &zero);
		if (v)
			copy(v, ctx);
	} else if (ctx->event == NCCLBPF_PROF_PROXY_OP) {
		struct ncclbpf_profiler_ctx *v = bpf_map_lookup_elem(&last_proxy, &zero);
		if (v)
			copy(v, ctx);
	}
	return 0;
}
