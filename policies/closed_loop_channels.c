/* The safe closed loop: a channel-adapting tuner whose only adaptive input is a uniform map.
 *
 * - channels_by_bucket (tuner input): channels to use per (collective, size bucket of the
 *   tuner's n_bytes); 0 leaves NCCL's choice. No program writes it: its contents change only
 *   through the control plane (ncclbpf_cp_map_update / `ncclbpf map update --job`), which makes
 *   a new value active on every rank at the same tuner sequence number. Every rank therefore
 *   decides the same at every seq.
 * - telemetry (profiler output): per (communicator, collective, size bucket of this rank's bytes)
 *   GPU latency, as policies/profiler_latency.c. It is rank-local; the verifier refuses a tuner
 *   that reads it (policies/unsafe/closed_loop_direct.c). An agent outside the ranks reads it
 *   (one rank's, or a reduction over ranks), decides, and submits channels_by_bucket updates.
 *
 * Bucket b = floor(log2(bytes)). The tuner's n_bytes is the aggregate operation size: for
 * AllReduce/Broadcast/Reduce it equals the profiler's per-rank bytes; for AllGather and
 * ReduceScatter it is nRanks times larger (the agent adds log2(nRanks) to the bucket). */
#include "ncclbpf.h"

#define MAX_BUCKETS 64

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 5 * MAX_BUCKETS); /* coll_type * 64 + bucket */
	__type(key, __u32);
	__type(value, __u32);
} channels_by_bucket SEC(".maps");

struct tel_key {
	__u64 comm_id;
	__u32 rank; /* several ranks of a communicator may share a process */
	__u32 coll_type;
	__u32 bucket;
	__u32 _pad;
};

struct tel_val {
	__u64 count;
	__u64 total_ns;
	__u64 min_ns;
	__u64 max_ns;
	__u64 last_ns;
	__u64 last_seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct tel_key);
	__type(value, struct tel_val);
} telemetry SEC(".maps");

SEC("tuner")
int pick_channels(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 key;
	__u32 *ch;

	if (ctx->coll_type > NCCLBPF_COLL_ALLREDUCE)
		return 0;
	key = ctx->coll_type * MAX_BUCKETS + ncclbpf_log2_u64(ctx->n_bytes);
	ch = bpf_map_lookup_elem(&channels_by_bucket, &key);
	if (ch && *ch >= 1 && *ch <= 64)
		ctx->n_channels = *ch;
	return 0;
}

SEC("profiler")
int measure(struct ncclbpf_profiler_ctx *ctx)
{
	struct tel_key key = {};
	struct tel_val *v;
	__u64 d;

	if (ctx->event != NCCLBPF_PROF_COLL_END)
		return 0;
	d = ctx->duration_ns;
	key.comm_id = ctx->comm_id;
	key.rank = ctx->rank;
	key.coll_type = ctx->coll_type;
	key.bucket = ncclbpf_log2_u64(ctx->n_bytes);
	v = bpf_map_lookup_elem(&telemetry, &key);
	if (!v) {
		struct tel_val init = {.count = 1,
				       .total_ns = d,
				       .min_ns = d,
				       .max_ns = d,
				       .last_ns = d,
				       .last_seq = ctx->seq};
		if (bpf_map_update_elem(&telemetry, &key, &init, BPF_NOEXIST) == 0)
			return 0;
		v = bpf_map_lookup_elem(&telemetry, &key);
		if (!v)
			return 0;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->total_ns, d);
	if (d < v->min_ns)
		v->min_ns = d;
	if (d > v->max_ns)
		v->max_ns = d;
	v->last_ns = d;
	v->last_seq = ctx->seq;
	return 0;
}
