/* Profiler program: GPU latency of finished collectives, aggregated per (communicator, rank,
 * collective type, message-size bucket) into the hash map `latency` (what `ncclbpf map dump`
 * shows), and streamed one record per collective to the ring buffer `events`.
 *
 * Bucket b holds sizes in [2^b, 2^(b+1)) bytes of this rank's buffer (bucket 0 also holds empty
 * messages). Latency is the GPU time from the first channel's start to the last channel's end
 * (COLL_END), not the host's enqueue time. The rank is part of the key because several ranks of
 * one communicator may live in one process (and share its maps).
 *
 * This map is rank-local data (each rank measures its own latency): a tuner deciding from it
 * would be rejected by the verifier (policies/unsafe/closed_loop_direct.c). A closed loop reads
 * it from outside and feeds the tuner through the control plane (docs/writing-policies.md,
 * "Telemetry and the closed loop"; policies/closed_loop_channels.c). */
#include "ncclbpf.h"

struct lat_key {
	__u64 comm_id;
	__u32 rank;	 /* several ranks of a communicator may share a process */
	__u32 coll_type; /* NCCLBPF_COLL_* (or NCCL's ncclFunc_t value for others) */
	__u32 bucket;	 /* floor(log2(bytes)) */
	__u32 _pad;
};

/* The key as the program builds it: three 64-bit words, each written with one store, so that
 * the map's hash and compare read them back without store-forwarding stalls (two 32-bit stores
 * read back as one 64-bit word stall the load). Same bytes as struct lat_key on the
 * little-endian hosts the runtime supports. */
union lat_key_words {
	struct lat_key k;
	__u64 w[3];
};
_Static_assert(sizeof(union lat_key_words) == sizeof(struct lat_key), "key words");
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "lat_key_words assumes a little-endian layout"
#endif

struct lat_val {
	__u64 count;	/* collectives */
	__u64 total_ns; /* sum of GPU latencies: mean = total_ns / count */
	__u64 min_ns;
	__u64 max_ns;
	__u64 last_ns;	/* the latest one */
	__u64 last_seq; /* its NCCL sequence number */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct lat_key);
	__type(value, struct lat_val);
} latency SEC(".maps");

/* One record per finished collective, for streaming consumers. */
struct lat_event {
	__u64 comm_id;
	__u64 seq;
	__u64 n_bytes;
	__u64 gpu_start_ns;
	__u64 duration_ns;
	__u32 rank;
	__u32 coll_type;
	__s32 algorithm;
	__s32 protocol;
	__u32 n_channels;
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
} events SEC(".maps");

SEC("profiler/coll_end")
int profiler_latency(struct ncclbpf_profiler_ctx *ctx)
{
	union lat_key_words key;
	struct lat_val *v;
	struct lat_event *e;
	__u64 d;

	if (ctx->event != NCCLBPF_PROF_COLL_END)
		return 0;
	d = ctx->duration_ns;
	key.w[0] = ctx->comm_id;
	key.w[1] = (__u64)ctx->rank | (__u64)ctx->coll_type << 32; /* rank, coll_type */
	key.w[2] = ncclbpf_log2_u64(ctx->n_bytes);		   /* bucket, _pad = 0 */

	v = bpf_map_lookup_elem(&latency, &key.k);
	if (!v) {
		struct lat_val init = {.count = 1,
				       .total_ns = d,
				       .min_ns = d,
				       .max_ns = d,
				       .last_ns = d,
				       .last_seq = ctx->seq};
		/* Another thread may have inserted it meanwhile: then add to theirs. */
		if (bpf_map_update_elem(&latency, &key.k, &init, BPF_NOEXIST) == 0)
			goto stream;
		v = bpf_map_lookup_elem(&latency, &key.k);
		if (!v)
			goto stream;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->total_ns, d);
	if (d < v->min_ns)
		v->min_ns = d;
	if (d > v->max_ns)
		v->max_ns = d;
	v->last_ns = d;
	v->last_seq = ctx->seq;
stream:
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0; /* consumer behind: the map still has the aggregate */
	e->comm_id = ctx->comm_id;
	e->seq = ctx->seq;
	e->n_bytes = ctx->n_bytes;
	e->gpu_start_ns = ctx->start_ns;
	e->duration_ns = d;
	e->rank = ctx->rank;
	e->coll_type = ctx->coll_type;
	e->algorithm = ctx->algorithm;
	e->protocol = ctx->protocol;
	e->n_channels = ctx->n_channels;
	e->_pad = 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
