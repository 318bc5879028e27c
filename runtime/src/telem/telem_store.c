/* The telemetry tables (ncclbpf/telemetry.h): communicator slots, recording one finished
 * collective, and the bounded queue of sampled JSON-lines records. Recording takes no lock and
 * allocates nothing: a few relaxed atomic adds on the communicator's cell, and, for a sampled
 * collective, one slot of a fixed multi-producer queue (a full queue drops and counts). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "telem_internal.h"

struct ncclbpf_telem_comm telem_slots[NCCLBPF_TELEM_COMMS];
_Atomic uint64_t telem_overflow;
_Atomic uint64_t telem_jsonl_dropped;
_Atomic int telem_jsonl_on;

int ncclbpf_telem_enabled(void)
{
	return telem_cfg.enabled;
}

/* --- Definitions ---------------------------------------------------------------------------- */

static const char *const coll_names[NCCLBPF_TELEM_COLLS] = {
    "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce", "SendRecv",
    "Send",	 "Recv",   "AlltoAll",	"Scatter",	 "Gather",    "AllGatherV",
};
static const char *const algo_names[NCCLBPF_NUM_ALGOS] = {
    "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
static const char *const proto_names[NCCLBPF_NUM_PROTOS] = {"LL", "LL128", "SIMPLE"};

const char *ncclbpf_telem_coll_name(uint32_t coll)
{
	return coll < NCCLBPF_TELEM_COLLS ? coll_names[coll] : "unknown";
}

const char *ncclbpf_telem_algo_name(int32_t algo)
{
	return algo >= 0 && algo < NCCLBPF_NUM_ALGOS ? algo_names[algo] : "unknown";
}

const char *ncclbpf_telem_proto_name(int32_t proto)
{
	return proto >= 0 && proto < NCCLBPF_NUM_PROTOS ? proto_names[proto] : "unknown";
}

/* Collectives whose count is per rank and whose buffer is count x ranks (nccl-tests). */
static int whole_buffer(uint32_t coll)
{
	return coll == 2 || coll == 3 || coll == 8 || coll == 9 || coll == 10 || coll == 11;
}

uint64_t ncclbpf_telem_size(uint32_t coll, uint64_t msg_bytes, uint32_t n_ranks)
{
	return whole_buffer(coll) && n_ranks ? msg_bytes * n_ranks : msg_bytes;
}

double ncclbpf_telem_bus_factor(uint32_t coll, uint32_t n_ranks)
{
	if (!n_ranks)
		return 0;
	double n = (double)n_ranks;
	switch (coll) {
	case 4: /* AllReduce */
		return 2.0 * (n - 1) / n;
	case 0: /* Broadcast */
	case 1: /* Reduce */
	case 5: /* SendRecv */
	case 6: /* Send */
	case 7: /* Recv */
		return 1.0;
	default:
		return whole_buffer(coll) ? (n - 1) / n : 0;
	}
}

uint32_t ncclbpf_telem_size_bucket(uint64_t bytes)
{
	uint32_t b = bytes ? 63u - (uint32_t)__builtin_clzll(bytes) : 0;
	return b < NCCLBPF_TELEM_SIZES ? b : NCCLBPF_TELEM_SIZES - 1;
}

uint32_t ncclbpf_telem_time_bucket(uint64_t ns)
{
	/* Bucket k holds times <= 2^k us: k = ceil(log2(ceil(ns / 1000))). */
	uint64_t us = (ns + 999) / 1000;
	uint32_t k = us <= 1 ? 0 : 64u - (uint32_t)__builtin_clzll(us - 1);
	return k < NCCLBPF_TELEM_TIMES ? k : NCCLBPF_TELEM_TIMES - 1;
}

uint64_t ncclbpf_telem_time_le_us(uint32_t k)
{
	return 1ull << k;
}

/* --- Slots ---------------------------------------------------------------------------------- */

static void clean_name(char *dst, size_t len, const char *src)
{
	size_t i = 0;
	for (; src && src[i] && i + 1 < len; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[i] = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? (char)c : '_';
	}
	dst[i] = 0;
}

static void slot_fill(struct ncclbpf_telem_comm *t, uint64_t comm_id, const char *name,
		      uint32_t rank, uint32_t n_ranks, uint32_t n_nodes)
{
	t->comm_id = comm_id;
	t->rank = rank;
	t->n_ranks = n_ranks;
	t->n_nodes = n_nodes;
	clean_name(t->name, sizeof(t->name), name);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	t->opened_unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	atomic_store_explicit(&t->jsonl_seen, 0, memory_order_relaxed);
	atomic_store_explicit(&t->state, NCCLBPF_TELEM_LIVE, memory_order_release);
}

/* Zeroes a slot its caller moved to BUSY and frees it. */
static void slot_clear(struct ncclbpf_telem_comm *t)
{
	memset(t->cells, 0, sizeof(t->cells));
	t->comm_id = 0;
	t->name[0] = 0;
}

static int slot_take(struct ncclbpf_telem_comm *t, uint32_t from)
{
	if (!atomic_compare_exchange_strong(&t->state, &from, NCCLBPF_TELEM_BUSY))
		return 0;
	/* Readers compare gen around their read (telem_slot_same): the bump comes before any of
	 * the stores that clear or fill the slot (acquire: they cannot move above it). No fences:
	 * ThreadSanitizer does not model them. */
	atomic_fetch_add_explicit(&t->gen, 1, memory_order_acq_rel);
	return 1;
}

struct ncclbpf_telem_comm *ncclbpf_telem_comm_open(uint64_t comm_id, const char *name,
						   uint32_t rank, uint32_t n_ranks,
						   uint32_t n_nodes)
{
	if (!telem_cfg.enabled)
		return NULL;
	/* A free slot, else one whose communicator is gone (its last counts may then never
	 * be exported: there are more communicators than slots). */
	for (uint32_t from = NCCLBPF_TELEM_FREE;; from = NCCLBPF_TELEM_CLOSED) {
		for (int i = 0; i < NCCLBPF_TELEM_COMMS; i++) {
			struct ncclbpf_telem_comm *t = &telem_slots[i];
			if (!slot_take(t, from))
				continue;
			if (from == NCCLBPF_TELEM_CLOSED)
				slot_clear(t);
			slot_fill(t, comm_id, name, rank, n_ranks, n_nodes);
			return t;
		}
		if (from == NCCLBPF_TELEM_CLOSED)
			break;
	}
	atomic_fetch_add(&telem_overflow, 1);
	return NULL;
}

void ncclbpf_telem_comm_close(struct ncclbpf_telem_comm *t)
{
	if (t)
		atomic_store_explicit(&t->state, NCCLBPF_TELEM_CLOSED, memory_order_release);
}

void telem_release_closed(void)
{
	for (int i = 0; i < NCCLBPF_TELEM_COMMS; i++) {
		struct ncclbpf_telem_comm *t = &telem_slots[i];
		if (slot_take(t, NCCLBPF_TELEM_CLOSED)) {
			slot_clear(t);
			atomic_store_explicit(&t->state, NCCLBPF_TELEM_FREE, memory_order_release);
		}
	}
}

uint32_t telem_slot_shown(const struct ncclbpf_telem_comm *t, uint32_t *gen)
{
	*gen = atomic_load_explicit(&t->gen, memory_order_acquire);
	uint32_t st = atomic_load_explicit(&t->state, memory_order_acquire);
	return st == NCCLBPF_TELEM_LIVE || st == NCCLBPF_TELEM_CLOSED ? st : NCCLBPF_TELEM_FREE;
}

int telem_slot_same(const struct ncclbpf_telem_comm *t, uint32_t gen)
{
	/* A read-modify-write of nothing: its release half keeps the slot reads before it. */
	_Atomic uint32_t *g = (_Atomic uint32_t *)&t->gen;
	return atomic_fetch_add_explicit(g, 0, memory_order_acq_rel) == gen;
}

uint64_t telem_live_comms(void)
{
	uint64_t live = 0;
	for (int i = 0; i < NCCLBPF_TELEM_COMMS; i++)
		live += atomic_load_explicit(&telem_slots[i].state, memory_order_relaxed) ==
			NCCLBPF_TELEM_LIVE;
	return live;
}

void telem_store_reset(void)
{
	for (int i = 0; i < NCCLBPF_TELEM_COMMS; i++) {
		slot_clear(&telem_slots[i]);
		atomic_store(&telem_slots[i].state, NCCLBPF_TELEM_FREE);
	}
	atomic_store(&telem_overflow, 0);
	atomic_store(&telem_jsonl_dropped, 0);
}

/* --- JSON-lines queue: bounded multi-producer, single-consumer ------------------------------ */

/* A cell's sequence word, stored minus the cell's index so that the zeroed array is the
 * initial state (cell i free for position i). Cell i is free for position pos when
 * seq + i == pos, holds position pos's record when seq + i == pos + 1. */
#define JQ_SIZE 8192u /* power of two */
static struct jcell {
	_Atomic uint64_t seq;
	struct telem_jrec r;
} jq[JQ_SIZE];
static _Atomic uint64_t jq_head; /* next position to fill */
static uint64_t jq_tail;	 /* next position to take (the exporter thread only) */

static void jq_push(const struct telem_jrec *r)
{
	uint64_t pos = atomic_load_explicit(&jq_head, memory_order_relaxed);
	for (;;) {
		uint64_t i = pos & (JQ_SIZE - 1);
		struct jcell *c = &jq[i];
		uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire) + i;
		if (seq == pos) {
			if (atomic_compare_exchange_weak_explicit(&jq_head, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				c->r = *r;
				atomic_store_explicit(&c->seq, pos + 1 - i, memory_order_release);
				return;
			}
		} else if (seq < pos) {
			/* Full: the consumer has not taken this cell's record yet. */
			atomic_fetch_add_explicit(&telem_jsonl_dropped, 1, memory_order_relaxed);
			return;
		} else {
			pos = atomic_load_explicit(&jq_head, memory_order_relaxed);
		}
	}
}

int telem_jsonl_pop(struct telem_jrec *out)
{
	uint64_t i = jq_tail & (JQ_SIZE - 1);
	struct jcell *c = &jq[i];
	if (atomic_load_explicit(&c->seq, memory_order_acquire) + i != jq_tail + 1)
		return 0;
	*out = c->r;
	atomic_store_explicit(&c->seq, jq_tail + JQ_SIZE - i, memory_order_release);
	jq_tail++;
	return 1;
}

/* --- Recording ------------------------------------------------------------------------------ */

static inline void add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

void ncclbpf_telem_coll(struct ncclbpf_telem_comm *t, uint32_t coll, uint64_t seq,
			uint64_t msg_bytes, int32_t algo, int32_t proto, uint32_t n_channels,
			uint64_t gpu_start, uint64_t gpu_end, uint64_t longest_ch_ns)
{
	if (!t || coll >= NCCLBPF_TELEM_COLLS)
		return;
	uint64_t size = ncclbpf_telem_size(coll, msg_bytes, t->n_ranks);
	uint64_t ns = gpu_end > gpu_start ? gpu_end - gpu_start : 0;
	struct ncclbpf_telem_cell *c = &t->cells[coll][ncclbpf_telem_size_bucket(size)];
	add(&c->hist[ncclbpf_telem_time_bucket(ns)], 1);
	add(&c->sum_ns, ns);
	add(&c->bytes, size);
	add(&c->mix[telem_mix_cell(algo, proto)], 1);
	if (!atomic_load_explicit(&telem_jsonl_on, memory_order_relaxed) ||
	    size < telem_cfg.jsonl_min_bytes)
		return;
	if (atomic_fetch_add_explicit(&t->jsonl_seen, 1, memory_order_relaxed) %
	    telem_cfg.jsonl_every)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct telem_jrec r = {
	    .comm_id = t->comm_id,
	    .seq = seq,
	    .msg_bytes = msg_bytes,
	    .gpu_start = gpu_start,
	    .gpu_end = gpu_end,
	    .longest_ch_ns = longest_ch_ns,
	    .unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
	    .rank = t->rank,
	    .n_ranks = t->n_ranks,
	    .n_nodes = t->n_nodes,
	    .slot = (uint32_t)(t - telem_slots),
	    .coll = (uint8_t)coll,
	    .n_channels = (uint8_t)(n_channels < 255 ? n_channels : 255),
	    .algo = (int8_t)(algo >= -1 && algo < NCCLBPF_NUM_ALGOS ? algo : -1),
	    .proto = (int8_t)(proto >= -1 && proto < NCCLBPF_NUM_PROTOS ? proto : -1),
	};
	jq_push(&r);
}
