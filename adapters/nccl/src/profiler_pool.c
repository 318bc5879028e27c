/* The profiler's record pools (profiler_pool.h): static arrays and bounded MPMC FIFOs of free
 * indexes (per-cell sequence numbers; one CAS per get or put, no lock). */
#include "profiler_pool.h"

#include <pthread.h>

struct cell {
	_Atomic uint64_t seq;
	uint32_t idx;
};

struct fifo {
	_Atomic uint64_t enq_pos __attribute__((aligned(64)));
	_Atomic uint64_t deq_pos __attribute__((aligned(64)));
	_Atomic uint32_t fresh; /* records [fresh, n) have never circulated */
	struct cell *cells;
	uint32_t n;
};

struct prof_coll prof_colls_[PROF_COLL_SLOTS] __attribute__((aligned(64)));
struct prof_proxy prof_proxies_[PROF_PROXY_SLOTS] __attribute__((aligned(64)));
#define colls	prof_colls_
#define proxies prof_proxies_
static struct cell coll_cells[PROF_COLL_SLOTS], proxy_cells[PROF_PROXY_SLOTS];
static struct fifo coll_fifo = {.cells = coll_cells, .n = PROF_COLL_SLOTS};
static struct fifo proxy_fifo = {.cells = proxy_cells, .n = PROF_PROXY_SLOTS};
static pthread_once_t once = PTHREAD_ONCE_INIT;

_Static_assert((PROF_COLL_SLOTS & (PROF_COLL_SLOTS - 1)) == 0, "power of two");
_Static_assert((PROF_PROXY_SLOTS & (PROF_PROXY_SLOTS - 1)) == 0, "power of two");

static void fifo_fill(struct fifo *f)
{
	/* The first `warm` records start in the queue (cell i holds index i, ready for dequeue
	 * position i); the other cells wait for enqueue position i. */
	uint32_t warm = f->n < PROF_POOL_WARM ? f->n : PROF_POOL_WARM;
	for (uint32_t i = 0; i < f->n; i++) {
		f->cells[i].idx = i;
		atomic_store_explicit(&f->cells[i].seq, (uint64_t)i + (i < warm),
				      memory_order_relaxed);
	}
	atomic_store_explicit(&f->fresh, warm, memory_order_relaxed);
	atomic_store_explicit(&f->deq_pos, 0, memory_order_relaxed);
	atomic_store_explicit(&f->enq_pos, warm, memory_order_release);
}

static void fill(void)
{
	fifo_fill(&coll_fifo);
	fifo_fill(&proxy_fifo);
}

void prof_pool_init(void)
{
	pthread_once(&once, fill);
}

/* Index of a free record, or -1 when all are in use. */
static int64_t fifo_get(struct fifo *f)
{
	uint64_t pos = atomic_load_explicit(&f->deq_pos, memory_order_relaxed);
	for (;;) {
		struct cell *c = &f->cells[pos & (f->n - 1)];
		uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		int64_t dif = (int64_t)(seq - (pos + 1));
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&f->deq_pos, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				uint32_t idx = c->idx;
				atomic_store_explicit(&c->seq, pos + f->n, memory_order_release);
				return idx;
			}
		} else if (dif < 0) {
			/* None circulating is free: bring in a fresh record, if any is left. */
			if (atomic_load_explicit(&f->fresh, memory_order_relaxed) >= f->n)
				return -1;
			uint32_t i = atomic_fetch_add_explicit(&f->fresh, 1, memory_order_relaxed);
			return i < f->n ? (int64_t)i : -1;
		} else {
			pos = atomic_load_explicit(&f->deq_pos, memory_order_relaxed);
		}
	}
}

static void fifo_put(struct fifo *f, uint32_t idx)
{
	uint64_t pos = atomic_load_explicit(&f->enq_pos, memory_order_relaxed);
	for (;;) {
		struct cell *c = &f->cells[pos & (f->n - 1)];
		uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		int64_t dif = (int64_t)(seq - pos);
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&f->enq_pos, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				c->idx = idx;
				atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
				return;
			}
		} else if (dif < 0) {
			/* Full: impossible (only n indexes exist); dropping the index is the safe
			 * answer to a double free that slipped through. */
			return;
		} else {
			pos = atomic_load_explicit(&f->enq_pos, memory_order_relaxed);
		}
	}
}

struct prof_coll *prof_coll_get(void)
{
	int64_t i = fifo_get(&coll_fifo);
	return i < 0 ? NULL : &colls[i];
}

struct prof_proxy *prof_proxy_get(void)
{
	int64_t i = fifo_get(&proxy_fifo);
	return i < 0 ? NULL : &proxies[i];
}

void prof_coll_put(struct prof_coll *c)
{
	fifo_put(&coll_fifo, (uint32_t)(c - colls));
}

void prof_proxy_put(struct prof_proxy *p)
{
	fifo_put(&proxy_fifo, (uint32_t)(p - proxies));
}

struct prof_coll *prof_coll_at(uint32_t i)
{
	return i < PROF_COLL_SLOTS ? &colls[i] : NULL;
}

struct prof_proxy *prof_proxy_at(uint32_t i)
{
	return i < PROF_PROXY_SLOTS ? &proxies[i] : NULL;
}

static uint32_t used(struct fifo *f)
{
	uint32_t n = atomic_load_explicit(&f->fresh, memory_order_relaxed);
	return n < f->n ? n : f->n;
}

uint32_t prof_coll_used(void)
{
	return used(&coll_fifo);
}

uint32_t prof_proxy_used(void)
{
	return used(&proxy_fifo);
}
