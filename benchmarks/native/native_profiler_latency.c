/* Native twin of policies/profiler_latency.c: a profiler plugin written in C against NCCL's
 * profiler ABI (ncclProfiler_v5), doing the same work per collective: the GPU time from its
 * first channel's start to its last channel's end, aggregated per (communicator, rank,
 * collective, log2 size bucket) into a hash table (count, total, min, max, last), and one record
 * per collective into a ring. The baseline `ncclbpf bench` measures libnccl-ncclbpf.so with
 * profiler_latency.o against (libnccl-profiler-native-latency.so).
 *
 * Built the way NCCL's example profiler is: per-context record pools used round-robin (a record
 * is assumed finished before the pool wraps), an event type byte first in every record, a
 * reference count per collective because its channels stop on NCCL's proxy thread. Benchmarks,
 * not product: no logging, and stale or foreign handles are not checked. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_profiler.h"

#define POOL   1024u /* collectives in flight per context (power of two) */
#define MAX_CH 64

enum { T_COLL = 1, T_KCH = 2 };

struct coll;
struct kch {
	uint8_t type; /* T_KCH */
	uint8_t id;
	struct coll *parent;
	uint64_t start, end; /* GPU ns; end 0 until KernelChStop */
};

struct ctx;
struct coll {
	uint8_t type; /* T_COLL */
	struct ctx *ctx;
	_Atomic uint32_t pending; /* host side + announced channels */
	uint32_t coll_type, n_channels;
	int32_t algorithm, protocol;
	uint64_t seq, n_bytes;
	struct kch ch[MAX_CH];
};

struct ctx {
	uint64_t comm_id;
	uint32_t rank;
	_Atomic uint32_t next;
	struct coll pool[POOL];
};

/* --- The aggregate (the policy's `latency` hash map, 1024 entries) and the stream ---------- */
struct lat_key {
	uint64_t comm_id;
	uint32_t rank, coll_type, bucket, _pad;
};
struct lat_val {
	_Atomic uint64_t count, total_ns;
	uint64_t min_ns, max_ns, last_ns, last_seq;
};
#define SLOTS 1024u
static struct {
	_Atomic uint32_t state; /* 0 empty, 1 being filled, 2 ready */
	struct lat_key key;
	struct lat_val val;
} table[SLOTS];

struct lat_event {
	uint64_t comm_id, seq, n_bytes, gpu_start_ns, duration_ns;
	uint32_t rank, coll_type;
	int32_t algorithm, protocol;
	uint32_t n_channels, _pad;
};
/* A ring without a consumer fills and then drops, as the policy's ring buffer does. */
#define RING 4096u
static struct lat_event ring[RING];
static _Atomic uint64_t ring_head, ring_tail;

static uint32_t hash_key(const struct lat_key *k)
{
	uint64_t h = k->comm_id * 0x9e3779b97f4a7c15ull;
	h ^= ((uint64_t)k->rank << 32 | k->coll_type) * 0xc2b2ae3d27d4eb4full;
	h ^= (uint64_t)k->bucket * 0x165667b19e3779f9ull;
	return (uint32_t)(h >> 40);
}

/* The entry of key k, inserted when missing; NULL when the table is full. */
static struct lat_val *lookup_or_insert(const struct lat_key *k, uint64_t d)
{
	for (uint32_t i = 0, s = hash_key(k); i < SLOTS; i++, s++) {
		__typeof__(table[0]) *e = &table[s & (SLOTS - 1)];
		uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
		if (st == 0) {
			if (!atomic_compare_exchange_strong(&e->state, &st, 1))
				goto taken;
			e->key = *k;
			e->val.min_ns = e->val.max_ns = d;
			atomic_store_explicit(&e->state, 2, memory_order_release);
			return &e->val;
		}
	taken:
		while (st == 1)
			st = atomic_load_explicit(&e->state, memory_order_acquire);
		if (!memcmp(&e->key, k, sizeof(*k)))
			return &e->val;
	}
	return NULL;
}

static uint32_t log2_u64(uint64_t v)
{
	return v ? 63u - (uint32_t)__builtin_clzll(v) : 0;
}

static void finish(struct coll *c)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint32_t i = 0; i < c->n_channels && i < MAX_CH; i++)
		if (c->ch[i].end) {
			lo = c->ch[i].start < lo ? c->ch[i].start : lo;
			hi = c->ch[i].end > hi ? c->ch[i].end : hi;
		}
	if (!hi)
		return;
	uint64_t d = hi >= lo ? hi - lo : 0;
	struct lat_key k = {c->ctx->comm_id, c->ctx->rank, c->coll_type, log2_u64(c->n_bytes), 0};
	struct lat_val *v = lookup_or_insert(&k, d);
	if (v) {
		atomic_fetch_add_explicit(&v->count, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&v->total_ns, d, memory_order_relaxed);
		if (d < v->min_ns)
			v->min_ns = d;
		if (d > v->max_ns)
			v->max_ns = d;
		v->last_ns = d;
		v->last_seq = c->seq;
	}
	uint64_t h = atomic_load_explicit(&ring_head, memory_order_relaxed);
	do {
		if (h - atomic_load_explicit(&ring_tail, memory_order_acquire) >= RING)
			return; /* consumer behind: the table still has the aggregate */
	} while (!atomic_compare_exchange_weak_explicit(&ring_head, &h, h + 1, memory_order_acq_rel,
							memory_order_relaxed));
	struct lat_event *e = &ring[h & (RING - 1)];
	*e = (struct lat_event){
	    c->ctx->comm_id, c->seq,	  c->n_bytes,	 lo, d, c->ctx->rank, c->coll_type,
	    c->algorithm,    c->protocol, c->n_channels, 0};
}

static void put(struct coll *c)
{
	if (atomic_fetch_sub_explicit(&c->pending, 1, memory_order_acq_rel) == 1)
		finish(c);
}

/* --- Names as NCCL prints them ------------------------------------------------------------- */
static int32_t name_id(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

static uint32_t func_id(const char *s)
{
	static const char *const n[] = {"Broadcast", "Reduce",	 "AllGather", "ReduceScatter",
					"AllReduce", "SendRecv", "Send",      "Recv"};
	return (uint32_t)name_id(n, 8, s);
}

static uint32_t type_size(const char *s)
{
	static const char *const n[] = {"ncclInt8",    "ncclFloat16", "ncclBfloat16",
					"ncclFloat32", "ncclInt32",   "ncclUint32",
					"ncclFloat64", "ncclInt64",   "ncclUint64"};
	static const uint8_t sz[] = {1, 2, 2, 4, 4, 4, 8, 8, 8};
	int i = name_id(n, 9, s);
	return i < 0 ? 1 : sz[i];
}

/* --- ncclProfiler_v5 ------------------------------------------------------------------------ */
static ncclResult_t init(void **context, uint64_t comm_id, int *mask, const char *name, int n_nodes,
			 int n_ranks, int rank, ncclDebugLogger_t log)
{
	(void)name;
	(void)n_nodes;
	(void)n_ranks;
	(void)log;
	struct ctx *c = calloc(1, sizeof(*c));
	if (c) {
		c->comm_id = comm_id;
		c->rank = (uint32_t)rank;
	}
	*context = c;
	if (mask)
		*mask = c ? ncclProfileColl | ncclProfileKernelCh : 0;
	return ncclSuccess;
}

static ncclResult_t start(void *context, void **handle, ncclProfilerEventDescr_v5_t *d)
{
	struct ctx *x = context;
	*handle = NULL;
	if (!x)
		return ncclSuccess;
	if (d->type == ncclProfileColl) {
		static const char *const algos[] = {
		    "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
		static const char *const protos[] = {"LL", "LL128", "SIMPLE"};
		struct coll *c =
		    &x->pool[atomic_fetch_add_explicit(&x->next, 1, memory_order_relaxed) &
			     (POOL - 1)];
		c->type = T_COLL;
		c->ctx = x;
		c->seq = d->coll.seqNumber;
		c->coll_type = func_id(d->coll.func);
		c->n_bytes = (uint64_t)d->coll.count * type_size(d->coll.datatype);
		c->algorithm = name_id(algos, 7, d->coll.algo);
		c->protocol = name_id(protos, 3, d->coll.proto);
		c->n_channels = d->coll.nChannels;
		atomic_store_explicit(&c->pending, 1u + d->coll.nChannels, memory_order_release);
		*handle = c;
	} else if (d->type == ncclProfileKernelCh && d->parentObj) {
		struct coll *p = d->parentObj;
		if (d->kernelCh.channelId >= MAX_CH)
			return ncclSuccess;
		struct kch *k = &p->ch[d->kernelCh.channelId];
		k->type = T_KCH;
		k->id = d->kernelCh.channelId;
		k->parent = p;
		k->start = d->kernelCh.pTimer;
		k->end = 0;
		*handle = k;
	}
	return ncclSuccess;
}

static ncclResult_t record(void *handle, ncclProfilerEventState_v5_t state,
			   ncclProfilerEventStateArgs_v5_t *args)
{
	struct kch *k = handle;
	if (k && state == ncclProfilerKernelChStop && args && k->type == T_KCH)
		k->end = args->kernelCh.pTimer;
	return ncclSuccess;
}

static ncclResult_t stop(void *handle)
{
	uint8_t *type = handle;
	if (!type)
		return ncclSuccess;
	if (*type == T_COLL)
		put(handle);
	else if (*type == T_KCH)
		put(((struct kch *)handle)->parent);
	return ncclSuccess;
}

static ncclResult_t finalize(void *context)
{
	free(context);
	return ncclSuccess;
}

__attribute__((visibility("default"))) const ncclProfiler_v5_t ncclProfiler_v5 = {
    .name = "native-latency",
    .init = init,
    .startEvent = start,
    .stopEvent = stop,
    .recordEventState = record,
    .finalize = finalize,
};
