/* Profiler event lifecycle (profiler_events.h). No lock and no allocation on the event path:
 * records come from the fixed pool, state changes are atomics, and the policy program runs
 * inside the runtime's epoch section. */
#include "profiler_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ncclbpf/runtime.h"
#include "ncclbpf/telemetry.h"
#include "nccl_profiler.h"
#include "profiler_names.h"
#include "profiler_pool.h"

static _Atomic int wanted_mask;
/* Program events (bit 1 << NCCLBPF_PROF_*) the active program is run on. An event outside it
 * costs no context, no clock read and no program dispatch; the record keeping is the same. */
static _Atomic uint32_t run_events;
#define EV(e) (1u << (e))
static _Atomic(int *) nccl_mask;
/* NCCL's mask int is only written while a communicator lives (it is NCCL's global, but a host
 * that passed something shorter-lived, like a test harness, is safe too). */
static _Atomic int live_comms;

static int mask_for(uint32_t needs)
{
	if (!(needs & NCCLBPF_RT_PROF_PROGRAM) && !ncclbpf_telem_enabled())
		return 0; /* nothing runs: NCCL emits nothing and pays nothing */
	/* GPU time of a collective = its kernel channels' timestamps (§6.9); Coll carries the
	 * identity (seq, func, count, algorithm, protocol, channels). The built-in telemetry
	 * needs exactly these too. */
	int m = ncclProfileColl | ncclProfileKernelCh;
	if (needs & NCCLBPF_RT_PROF_PROXY)
		m |= ncclProfileProxyOp;
	return m;
}

static uint32_t events_for(uint32_t needs)
{
	if (!(needs & NCCLBPF_RT_PROF_PROGRAM))
		return 0;
	uint32_t ev =
	    EV(NCCLBPF_PROF_COLL_START) | EV(NCCLBPF_PROF_COLL_END) | EV(NCCLBPF_PROF_KERNEL_CH);
#ifdef NCCLBPF_RT_PROF_END_ONLY
	/* The program declared that it only handles finished collectives (it must not see the
	 * others: running it on them would be wasted work, never a different answer). */
	if (needs & NCCLBPF_RT_PROF_END_ONLY)
		ev = EV(NCCLBPF_PROF_COLL_END);
#endif
	if (needs & NCCLBPF_RT_PROF_PROXY)
		ev |= EV(NCCLBPF_PROF_PROXY_OP);
	return ev;
}

static inline int wants(uint32_t event)
{
	return (atomic_load_explicit(&run_events, memory_order_relaxed) & EV(event)) != 0;
}

int prof_wanted_mask(void)
{
	return atomic_load_explicit(&wanted_mask, memory_order_relaxed);
}

void prof_refresh(void)
{
	uint32_t needs = ncclbpf_rt_profiler_needs();
	int m = mask_for(needs);
	atomic_store_explicit(&run_events, events_for(needs), memory_order_relaxed);
	atomic_store_explicit(&wanted_mask, m, memory_order_relaxed);
	int *p = atomic_load_explicit(&nccl_mask, memory_order_acquire);
	/* NCCL reads its int with relaxed atomics at each API call (§6.7). */
	if (p)
		__atomic_store_n(p, m, __ATOMIC_RELAXED);
}

void prof_set_mask_ptr(int *mask)
{
	if (mask)
		atomic_store_explicit(&nccl_mask, mask, memory_order_release);
	prof_refresh();
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct prof_comm *prof_comm_new(uint64_t comm_id, const char *name, int rank, int n_ranks,
				int n_nodes, ncclDebugLogger_t log, uint32_t api)
{
	prof_pool_init();
	struct prof_comm *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->comm_id = comm_id;
	c->rank = rank < 0 ? 0 : (uint32_t)rank;
	c->n_ranks = n_ranks < 0 ? 0 : (uint32_t)n_ranks;
	c->n_nodes = n_nodes < 0 ? 0 : (uint32_t)n_nodes;
	c->log = log;
	c->api = api;
	static _Atomic uint32_t serials;
	c->serial = atomic_fetch_add(&serials, 1);
	c->telem = ncclbpf_telem_comm_open(comm_id, name, c->rank, c->n_ranks, c->n_nodes);
	atomic_fetch_add(&live_comms, 1);
	return c;
}

/* --- Records -------------------------------------------------------------------------------- */

/* The live collective a handle names (and which of its channels, -1 for itself), or NULL. A
 * stale handle to a recycled record cannot be told apart; the pool's FIFO order makes that a
 * ~PROF_COLL_SLOTS-allocations-old handle. */
static inline __attribute__((always_inline)) struct prof_coll *live_coll(const void *handle,
									 int *channel)
{
	struct prof_coll *c = prof_coll_of(handle, channel);
	if (c && atomic_load_explicit(&c->state, memory_order_acquire) == PROF_EV_COLL)
		return c;
	return NULL;
}

/* One more reference unless the count already reached zero (the record is being released). */
static int ref_get_unless_zero(struct prof_coll *c)
{
	uint32_t r = atomic_load_explicit(&c->pending, memory_order_relaxed);
	while (PROF_REFS(r)) {
		if (atomic_compare_exchange_weak_explicit(
			&c->pending, &r, r + 1, memory_order_acquire, memory_order_relaxed))
			return 1;
	}
	return 0;
}

static void fill_ctx(struct ncclbpf_profiler_ctx *x, const struct prof_coll *coll,
		     const struct prof_comm *c, uint32_t event)
{
	x->comm_id = c->comm_id;
	x->event = event;
	x->rank = c->rank;
	x->n_ranks = c->n_ranks;
	x->_pad0 = 0;
	x->channel = 0;
	x->peer = 0xffffffffu;
	if (coll) {
		x->seq = coll->seq;
		x->n_bytes = coll->n_bytes;
		x->coll_type = coll->coll_type;
		x->algorithm = coll->algorithm;
		x->protocol = coll->protocol;
		x->n_channels = coll->n_channels;
	} else {
		x->seq = 0;
		x->n_bytes = 0;
		x->coll_type = 0xffffffffu;
		x->algorithm = -1;
		x->protocol = -1;
		x->n_channels = 0;
	}
}

static void run(struct ncclbpf_profiler_ctx *x, uint64_t start, uint64_t end)
{
	x->start_ns = start;
	x->end_ns = end;
	x->duration_ns = end >= start ? end - start : 0;
	(void)ncclbpf_rt_run_profiler(x); /* no program (unloaded meanwhile): nothing to do */
}

static void coll_free(struct prof_coll *coll)
{
	atomic_store_explicit(&coll->comm, NULL, memory_order_relaxed);
	atomic_store_explicit(&coll->state, PROF_EV_FREE, memory_order_release);
	prof_coll_put(coll);
}

/* The last reference was dropped (pending word `last` before the drop): delivers COLL_END, GPU
 * time from the earliest start to the latest end over the channels that reported both, and
 * frees the record. */
static void coll_finish(struct prof_coll *coll, uint32_t last)
{
	/* The caller took the reference count to zero, so it alone owns the record (finalize's
	 * sweep takes the references the same way): no compare-and-swap on the state. */
	atomic_store_explicit(&coll->state, PROF_EV_DYING, memory_order_relaxed);
	struct prof_comm *c = atomic_load_explicit(&coll->comm, memory_order_relaxed);
	int program = wants(NCCLBPF_PROF_COLL_END);
	if (!c || (!program && !c->telem)) {
		coll_free(coll);
		return;
	}
	uint32_t done = atomic_load_explicit(&coll->gen, memory_order_relaxed) << 2 | PROF_CH_DONE;
	/* Every DONE channel dropped one reference before the count reached zero: the announced
	 * channels, plus the host side's reference when no host stop came. So the scan can stop
	 * once it found that many: NCCL numbers a collective's channels from 0, so it reads
	 * n_channels words instead of PROF_MAX_CH. (A channel beyond those announced that
	 * stopped concurrently with the last reference may be missed; the full scan could miss
	 * it too, by reading its word a moment earlier.) */
	uint32_t n_done = coll->n_channels + !(last & PROF_HOST_DONE), found = 0;
	uint64_t lo = UINT64_MAX, hi = 0, longest = 0;
	for (int i = 0; i < PROF_MAX_CH && found < n_done; i++) {
		if (atomic_load_explicit(&coll->ch_state[i], memory_order_relaxed) != done)
			continue;
		found++;
		uint64_t e = atomic_load_explicit(&coll->ch_end[i], memory_order_relaxed);
		if (!e)
			continue;
		uint64_t s = atomic_load_explicit(&coll->ch_start[i], memory_order_relaxed);
		lo = s < lo ? s : lo;
		hi = e > hi ? e : hi;
		longest = e > s && e - s > longest ? e - s : longest;
	}
	if (hi) {
		if (c->telem)
			ncclbpf_telem_coll(c->telem, coll->coll_type, coll->seq, coll->n_bytes,
					   coll->algorithm, coll->protocol, coll->n_channels, lo,
					   hi, longest);
		if (program) {
			struct ncclbpf_profiler_ctx x;
			fill_ctx(&x, coll, c, NCCLBPF_PROF_COLL_END);
			run(&x, lo, hi);
		}
		atomic_fetch_add_explicit(&c->colls_end, 1, memory_order_relaxed);
	}
	coll_free(coll);
}

/* Drops one reference (a channel's or a proxy child's); the last one finishes the record. */
static void coll_put(struct prof_coll *coll)
{
	uint32_t old = atomic_fetch_sub_explicit(&coll->pending, 1, memory_order_acq_rel);
	if (PROF_REFS(old) == 1)
		coll_finish(coll, old);
}

/* The host side's stop: drops its reference once (a repeated stop finds PROF_HOST_DONE). */
static void coll_host_stop(struct prof_coll *coll)
{
	uint32_t old = atomic_load_explicit(&coll->pending, memory_order_relaxed);
	do {
		if ((old & PROF_HOST_DONE) || !PROF_REFS(old))
			return;
	} while (
	    !atomic_compare_exchange_weak_explicit(&coll->pending, &old, (old | PROF_HOST_DONE) - 1,
						   memory_order_acq_rel, memory_order_relaxed));
	if (PROF_REFS(old) == 1)
		coll_finish(coll, old | PROF_HOST_DONE);
}

/* --- Event entry points --------------------------------------------------------------------- */

void *prof_coll_start(struct prof_comm *c, uint64_t seq, const char *func, size_t count,
		      const char *datatype, uint8_t n_channels, const char *algo, const char *proto)
{
	if (!c || !prof_wanted_mask())
		return NULL;
	struct prof_coll *ev = prof_coll_get();
	if (!ev) {
		atomic_fetch_add_explicit(&c->dropped, 1, memory_order_relaxed);
		return NULL;
	}
	atomic_store_explicit(&ev->comm, c, memory_order_relaxed);
	/* A new generation invalidates every channel word of the record's previous use. */
	atomic_store_explicit(&ev->gen, atomic_load_explicit(&ev->gen, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	ev->seq = seq;
	ev->n_bytes = (uint64_t)count * prof_type_size(datatype);
	ev->coll_type = prof_func_id(func);
	ev->algorithm = prof_algo_id(algo);
	ev->protocol = prof_proto_id(proto);
	ev->n_channels = n_channels;
	/* Kernel channels are requested whenever a program runs, so NCCL sends one KernelCh per
	 * channel the collective uses, possibly long after the host stop: their references are
	 * taken now, before any can arrive. */
	atomic_store_explicit(&ev->pending, 1u + n_channels, memory_order_relaxed);
	atomic_store_explicit(&ev->state, PROF_EV_COLL, memory_order_release);
	atomic_fetch_add_explicit(&c->colls, 1, memory_order_relaxed);
	if (!wants(NCCLBPF_PROF_COLL_START))
		return ev;

	struct ncclbpf_profiler_ctx x;
	fill_ctx(&x, ev, c, NCCLBPF_PROF_COLL_START);
	uint64_t now = mono_ns();
	run(&x, now, now);
	return ev;
}

void *prof_kch_start(struct prof_comm *c, void *parent, uint8_t channel, uint64_t gpu_start)
{
	if (!c || !parent)
		return NULL; /* a p2p's channels (we do not track p2p) or a dropped collective */
	int self;
	struct prof_coll *p = live_coll(parent, &self);
	if (!p || self >= 0 || channel >= PROF_MAX_CH) {
		atomic_fetch_add_explicit(&c->orphans, 1, memory_order_relaxed);
		return NULL;
	}
	uint32_t gen = atomic_load_explicit(&p->gen, memory_order_relaxed);
	uint32_t cur = atomic_load_explicit(&p->ch_state[channel], memory_order_relaxed);
	if (cur >> 2 == gen && (cur & 3) != PROF_CH_IDLE) {
		/* The same channel twice for one collective: keep the first. */
		atomic_fetch_add_explicit(&c->orphans, 1, memory_order_relaxed);
		return NULL;
	}
	/* The channel's reference was reserved at the collective's start: no atomic read-modify-
	 * write here. The collective's proxy thread is the only writer of this channel. */
	atomic_store_explicit(&p->ch_start[channel], gpu_start, memory_order_relaxed);
	atomic_store_explicit(&p->ch_end[channel], 0, memory_order_relaxed);
	atomic_store_explicit(&p->ch_state[channel], gen << 2 | PROF_CH_RUNNING,
			      memory_order_release);
	return (void *)&p->ch_state[channel];
}

void *prof_proxy_start(struct prof_comm *c, void *parent, pid_t pid, uint8_t channel, int peer,
		       int n_steps, int chunk_size)
{
	if (!c || !(prof_wanted_mask() & ncclProfileProxyOp))
		return NULL;
	/* PXN: another process's proxy may report on our behalf with a parent handle from its own
	 * address space (§6.8). Never look at it. */
	if (pid != getpid()) {
		atomic_fetch_add_explicit(&c->foreign, 1, memory_order_relaxed);
		return NULL;
	}
	int self = 0;
	struct prof_coll *p = parent ? live_coll(parent, &self) : NULL;
	if (p && (self >= 0 || !ref_get_unless_zero(p)))
		p = NULL;
	if (parent && !p)
		atomic_fetch_add_explicit(&c->orphans, 1, memory_order_relaxed);
	struct prof_proxy *ev = prof_proxy_get();
	if (!ev) {
		atomic_fetch_add_explicit(&c->dropped, 1, memory_order_relaxed);
		if (p)
			coll_put(p);
		return NULL;
	}
	atomic_store_explicit(&ev->comm, c, memory_order_relaxed);
	ev->parent = p;
	ev->channel = channel;
	ev->peer = peer < 0 ? 0xffffffffu : (uint32_t)peer;
	/* Upper bound of what the operation moves (the last step may be partial). */
	ev->n_bytes = n_steps > 0 && chunk_size > 0 ? (uint64_t)n_steps * (uint64_t)chunk_size : 0;
	ev->t_start = mono_ns();
	atomic_store_explicit(&ev->state, PROF_EV_PROXY, memory_order_release);
	return ev;
}

const struct prof_comm *prof_comm_of_handle(const void *handle)
{
	int ch;
	struct prof_coll *p = live_coll(handle, &ch);
	if (p)
		return atomic_load_explicit(&p->comm, memory_order_relaxed);
	struct prof_proxy *x = prof_proxy_of(handle);
	if (x && atomic_load_explicit(&x->state, memory_order_acquire) == PROF_EV_PROXY)
		return atomic_load_explicit(&x->comm, memory_order_relaxed);
	return NULL;
}

ncclResult_t prof_record_state(void *handle, ncclProfilerEventState_v4_t state,
			       ncclProfilerEventStateArgs_v4_t *args)
{
	if (state != ncclProfilerKernelChStop || !args)
		return ncclSuccess;
	uint64_t gpu_end = args->kernelCh.pTimer;
	int ch;
	struct prof_coll *p = live_coll(handle, &ch);
	if (!p || ch < 0)
		return ncclSuccess;
	uint32_t gen = atomic_load_explicit(&p->gen, memory_order_relaxed);
	if (atomic_load_explicit(&p->ch_state[ch], memory_order_acquire) ==
	    (gen << 2 | PROF_CH_RUNNING))
		atomic_store_explicit(&p->ch_end[ch], gpu_end, memory_order_relaxed);
	return ncclSuccess;
}

static void kch_stop(struct prof_coll *p, int ch)
{
	uint32_t gen = atomic_load_explicit(&p->gen, memory_order_relaxed);
	/* A repeated stop, or a handle from the record's earlier use, finds another state word and
	 * is ignored. Check-then-store instead of a compare-and-swap: a channel handle is stopped
	 * by the one proxy thread that reports that channel, and an atomic read-modify-write here
	 * would be a third of the event's cost. */
	if (atomic_load_explicit(&p->ch_state[ch], memory_order_acquire) !=
	    (gen << 2 | PROF_CH_RUNNING))
		return;
	atomic_store_explicit(&p->ch_state[ch], gen << 2 | PROF_CH_DONE, memory_order_relaxed);
	uint64_t e = atomic_load_explicit(&p->ch_end[ch], memory_order_relaxed);
	struct prof_comm *c = atomic_load_explicit(&p->comm, memory_order_relaxed);
	if (e && c && wants(NCCLBPF_PROF_KERNEL_CH)) {
		struct ncclbpf_profiler_ctx x;
		fill_ctx(&x, p, c, NCCLBPF_PROF_KERNEL_CH);
		x.channel = (uint32_t)ch;
		run(&x, atomic_load_explicit(&p->ch_start[ch], memory_order_relaxed), e);
	}
	coll_put(p); /* a collective finishes when its announced channels have stopped */
}

static void proxy_stop(struct prof_proxy *ev)
{
	uint32_t st = PROF_EV_PROXY;
	if (!atomic_compare_exchange_strong_explicit(&ev->state, &st, PROF_EV_DYING,
						     memory_order_acq_rel, memory_order_relaxed))
		return; /* repeated or stale */
	struct prof_coll *p = ev->parent;
	struct prof_comm *c = atomic_load_explicit(&ev->comm, memory_order_relaxed);
	if (c) {
		struct ncclbpf_profiler_ctx x;
		fill_ctx(&x, p, c, NCCLBPF_PROF_PROXY_OP);
		x.n_bytes = ev->n_bytes;
		x.channel = ev->channel;
		x.peer = ev->peer;
		run(&x, ev->t_start, mono_ns());
	}
	atomic_store_explicit(&ev->comm, NULL, memory_order_relaxed);
	atomic_store_explicit(&ev->state, PROF_EV_FREE, memory_order_release);
	prof_proxy_put(ev);
	if (p)
		coll_put(p);
}

ncclResult_t prof_stop(void *handle)
{
	int ch;
	struct prof_coll *p = live_coll(handle, &ch);
	if (p) {
		if (ch >= 0)
			kch_stop(p, ch);
		else
			coll_host_stop(p); /* the GPU side ends with the channels */
		return ncclSuccess;
	}
	struct prof_proxy *x = prof_proxy_of(handle);
	if (x)
		proxy_stop(x);
	/* else NULL (an event we did not track), stale, or not ours */
	return ncclSuccess;
}

/* --- Finalize ------------------------------------------------------------------------------- */

void prof_comm_free(struct prof_comm *c)
{
	if (!c)
		return;
	/* NCCL finalizes after its proxy thread stopped, so no callback for c is in flight; what
	 * is still held belongs to collectives whose channels never reported. Release it. */
	uint64_t open = 0;
	for (uint32_t i = 0, n = prof_proxy_used(); i < n; i++) {
		struct prof_proxy *ev = prof_proxy_at(i);
		uint32_t st = PROF_EV_PROXY;
		if (atomic_load_explicit(&ev->comm, memory_order_relaxed) != c ||
		    !atomic_compare_exchange_strong_explicit(
			&ev->state, &st, PROF_EV_DYING, memory_order_acq_rel, memory_order_relaxed))
			continue;
		atomic_store_explicit(&ev->comm, NULL, memory_order_relaxed);
		atomic_store_explicit(&ev->state, PROF_EV_FREE, memory_order_release);
		prof_proxy_put(ev);
	}
	for (uint32_t i = 0, n = prof_coll_used(); i < n; i++) {
		struct prof_coll *ev = prof_coll_at(i);
		if (atomic_load_explicit(&ev->comm, memory_order_relaxed) != c ||
		    atomic_load_explicit(&ev->state, memory_order_acquire) != PROF_EV_COLL)
			continue;
		/* Take every remaining reference at once: whoever takes the count to zero owns
		 * the record (a last-reference drop in flight meanwhile keeps it). */
		uint32_t r = atomic_load_explicit(&ev->pending, memory_order_relaxed);
		while (PROF_REFS(r) && !atomic_compare_exchange_weak_explicit(
					   &ev->pending, &r, r & PROF_HOST_DONE,
					   memory_order_acq_rel, memory_order_relaxed))
			;
		if (!PROF_REFS(r))
			continue;
		atomic_store_explicit(&ev->state, PROF_EV_DYING, memory_order_relaxed);
		open++;
		coll_free(ev);
	}
	if (c->log)
		c->log(NCCL_LOG_INFO, NCCL_INIT | NCCL_PROFILE, __FILE__, __LINE__,
		       "NCCLbpf profiler: comm %016llx rank %u: %llu collectives, %llu timed, %llu "
		       "open at finalize, %llu events dropped (pool full), %llu foreign-process, "
		       "%llu orphaned",
		       (unsigned long long)c->comm_id, c->rank,
		       (unsigned long long)atomic_load(&c->colls),
		       (unsigned long long)atomic_load(&c->colls_end), (unsigned long long)open,
		       (unsigned long long)atomic_load(&c->dropped),
		       (unsigned long long)atomic_load(&c->foreign),
		       (unsigned long long)atomic_load(&c->orphans));
	ncclbpf_telem_comm_close(c->telem);
	free(c);
	if (atomic_fetch_sub(&live_comms, 1) == 1)
		atomic_store(&nccl_mask, NULL);
}
