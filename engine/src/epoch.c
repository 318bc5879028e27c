/* Epoch-based reclamation (epoch.h).
 *
 * Classic three-epoch scheme. A global epoch E only moves from e to e+1 once every thread inside
 * a section has announced epoch e; an object retired while the global epoch was t is freed once
 * the global epoch reached t+2, by which time every section that could have seen it has ended.
 *
 * The reader's announcement must be visible to a reclaimer before the reader loads any shared
 * pointer (store->load ordering). Where the kernel offers it, membarrier(PRIVATE_EXPEDITED) on
 * the (rare) reclaimer side provides that ordering, so entering a section is a plain store; else
 * enter uses a full barrier (xchg). Each thread owns a record in a lock-free, append-only list;
 * records of exited threads are reused, and their unreclaimed objects are handed to an orphan
 * list. The state a reclaimer reads lives in the thread's static TLS (epoch.h), which exists
 * only as long as the thread: a record points at it while the thread is registered, and
 * rd_lock orders that pointer's clearing at thread exit against reclaimers' scans. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ebpf/epoch.h"

/* ThreadSanitizer does not model fences (gcc refuses them under -fsanitize=thread); a seq_cst
 * read-modify-write is a full barrier too and TSan understands it. */
#ifdef __SANITIZE_THREAD__
static _Atomic int fence_var;
#define full_fence() atomic_fetch_add_explicit(&fence_var, 0, memory_order_seq_cst)
#else
#define full_fence() atomic_thread_fence(memory_order_seq_cst)
#endif

/* Try to reclaim every this many retires per thread: an attempt costs one membarrier (a few
 * microseconds), so a large batch keeps the amortised cost of a retire low. */
#define RETIRE_BATCH 256

struct retired {
	void *ptr;
	ebpf_epoch_free_fn fn;
	uint64_t epoch;
};

/* A growable FIFO of retired objects; epochs are non-decreasing from head to tail. */
struct limbo {
	struct retired *v;
	size_t head, len, cap;
};

struct epoch_rec {
	struct ebpf_epoch_reader *rd; /* the owner's TLS reader; NULL when free (under rd_lock) */
	_Atomic int in_use;
	uint32_t since_reclaim; /* owner thread only */
	pthread_mutex_t lock;	/* guards limbo: owner appends, reclaimers free */
	struct limbo limbo;
	struct epoch_rec *next; /* immutable once published */
};

_Alignas(64) _Atomic uint64_t ebpf_epoch_global_ = 1;
#define global_epoch ebpf_epoch_global_
/* What a fast-path reader stores on its outermost enter (epoch.h): the global epoch shifted, with
 * the outermost section's bits, so that entering is one load and one store. Written only after
 * an advance, under rd_lock (advances therefore write it in order), it may lag the global epoch
 * for a moment: a reader that announces the older epoch only holds back the next advance until
 * it leaves, as a reader that entered just before the advance would. */
_Alignas(64) _Atomic uint64_t ebpf_epoch_announce_ = EBPF_EPOCH__ANNOUNCE(1);
static _Atomic(struct epoch_rec *) recs;
static _Atomic uint64_t n_retired, n_freed, n_threads;

static pthread_mutex_t orphan_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct limbo orphans;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t rec_key;
static int key_ok;
static int use_membarrier;
/* initial-exec: read without a __tls_get_addr call on the hot path. The engine ships inside a
 * dlopen()ed plugin; these 16 bytes of static TLS are always available there (glibc keeps a
 * surplus for exactly this). Zero-initialised: "not registered" (epoch.h). */
__thread struct ebpf_epoch_reader ebpf_epoch_tls_ __attribute__((tls_model("initial-exec")));
#define tls_rec	       ((struct epoch_rec *)ebpf_epoch_tls_.rec)
#define STATE_DEPTH(s) ((uint32_t)(s) >> 2)

static void thread_exit(void *arg);

static void epoch_init(void)
{
	if (pthread_key_create(&rec_key, thread_exit) == 0)
		key_ok = 1;
#ifdef SYS_membarrier
	/* NCCLBPF_EPOCH_MEMBARRIER=0 forces the full-barrier readers (tests cover both modes; an
	 * operator can rule membarrier out when diagnosing a host). */
	const char *mb = getenv("NCCLBPF_EPOCH_MEMBARRIER");
	if (mb && strcmp(mb, "0") == 0)
		return;
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		use_membarrier = 1;
#endif
}

/* The key must not call into this code after the library is unloaded. */
__attribute__((destructor)) static void epoch_fini(void)
{
	if (key_ok)
		pthread_key_delete(rec_key);
	key_ok = 0;
}

static struct epoch_rec *rec_register(void)
{
	pthread_once(&init_once, epoch_init);
	struct epoch_rec *r;
	for (r = atomic_load_explicit(&recs, memory_order_acquire); r; r = r->next) {
		int expect = 0;
		if (atomic_load_explicit(&r->in_use, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong_explicit(
			&r->in_use, &expect, 1, memory_order_acquire, memory_order_relaxed))
			break;
	}
	if (!r) {
		r = malloc(sizeof(*r));
		if (!r)
			abort(); /* cannot run programs safely without a record */
		*r = (struct epoch_rec){0};
		pthread_mutex_init(&r->lock, NULL);
		atomic_init(&r->in_use, 1);
		struct epoch_rec *head = atomic_load_explicit(&recs, memory_order_relaxed);
		do
			r->next = head;
		while (!atomic_compare_exchange_weak_explicit(&recs, &head, r, memory_order_release,
							      memory_order_relaxed));
	}
	r->since_reclaim = 0;
	atomic_fetch_add_explicit(&n_threads, 1, memory_order_relaxed);
	if (key_ok)
		pthread_setspecific(rec_key, r);
	struct ebpf_epoch_reader *rd = &ebpf_epoch_tls_;
	atomic_store_explicit(&rd->state, use_membarrier ? EBPF_EPOCH_FAST : 0,
			      memory_order_relaxed);
	rd->rec = r;
	pthread_mutex_lock(&rd_lock);
	r->rd = rd;
	pthread_mutex_unlock(&rd_lock);
	return r;
}

static inline struct epoch_rec *rec_get(void)
{
	struct epoch_rec *r = tls_rec;
	return r ? r : rec_register();
}

void ebpf_epoch_enter_slow(void)
{
	struct ebpf_epoch_reader *rd = &ebpf_epoch_tls_;
	if (!rd->rec)
		rec_register();
	uint64_t s = atomic_load_explicit(&rd->state, memory_order_relaxed);
	if (s & EBPF_EPOCH_INSIDE) { /* nested */
		atomic_store_explicit(&rd->state, s + EBPF_EPOCH_DEPTH1, memory_order_relaxed);
		return;
	}
	uint64_t v =
	    (atomic_load_explicit(&global_epoch, memory_order_relaxed) << EBPF_EPOCH_SHIFT) |
	    EBPF_EPOCH_DEPTH1 | EBPF_EPOCH_INSIDE | (s & EBPF_EPOCH_FAST);
	if (s & EBPF_EPOCH_FAST) {
		/* Release: see ebpf_epoch_enter. */
		atomic_store_explicit(&rd->state, v, memory_order_release);
		atomic_signal_fence(memory_order_seq_cst);
	} else {
		atomic_exchange_explicit(&rd->state, v, memory_order_seq_cst);
	}
}

void ebpf_epoch_exit_slow(void)
{
	struct ebpf_epoch_reader *rd = &ebpf_epoch_tls_;
	uint64_t s = atomic_load_explicit(&rd->state, memory_order_relaxed);
	if (!(s & EBPF_EPOCH_INSIDE))
		return; /* unbalanced exit: ignore rather than corrupt the state */
	if (STATE_DEPTH(s) > 1)
		atomic_store_explicit(&rd->state, s - EBPF_EPOCH_DEPTH1, memory_order_relaxed);
	else
		atomic_store_explicit(&rd->state, s & EBPF_EPOCH_FAST, memory_order_release);
}

int ebpf_epoch_in_section(void)
{
	return (atomic_load_explicit(&ebpf_epoch_tls_.state, memory_order_relaxed) &
		EBPF_EPOCH_INSIDE) != 0;
}

/* Orders every reader's earlier announcement before our scan of the records. */
static void reader_barrier(void)
{
#ifdef SYS_membarrier
	if (use_membarrier) {
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
			return;
		/* Cannot fail once registered; if it does, readers' plain stores are unordered and
		 * no advance is safe. Treat as a fatal invariant violation. */
		abort();
	}
#endif
	full_fence();
}

/* Moves the global epoch forward by one if every thread inside a section has seen it. */
static uint64_t try_advance(void)
{
	reader_barrier();
	uint64_t e = atomic_load_explicit(&global_epoch, memory_order_seq_cst);
	int behind = 0;
	/* keeps every reader's TLS alive during the scan; orders the advances' announce stores */
	pthread_mutex_lock(&rd_lock);
	for (struct epoch_rec *r = atomic_load_explicit(&recs, memory_order_acquire); r && !behind;
	     r = r->next) {
		if (!r->rd)
			continue;
		uint64_t s = atomic_load_explicit(&r->rd->state, memory_order_acquire);
		behind =
		    (s & EBPF_EPOCH_INSIDE) && (uint32_t)(s >> EBPF_EPOCH_SHIFT) != (uint32_t)e;
	}
	if (!behind && atomic_compare_exchange_strong_explicit(
			   &global_epoch, &e, e + 1, memory_order_acq_rel, memory_order_relaxed)) {
		e++;
		atomic_store_explicit(&ebpf_epoch_announce_, EBPF_EPOCH__ANNOUNCE(e),
				      memory_order_release);
	}
	pthread_mutex_unlock(&rd_lock);
	return e; /* behind: unchanged; someone else advanced: the newer value */
}

static int limbo_push(struct limbo *l, struct retired it)
{
	if (l->head + l->len == l->cap) {
		if (l->head) { /* compact first */
			for (size_t i = 0; i < l->len; i++)
				l->v[i] = l->v[l->head + i];
			l->head = 0;
		}
		if (l->len == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 64;
			struct retired *v = realloc(l->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			l->v = v;
			l->cap = cap;
		}
	}
	l->v[l->head + l->len++] = it;
	return 0;
}

/* Moves the prefix of l retired at or before `safe` into out (capacity cap); returns count. */
static size_t limbo_take(struct limbo *l, uint64_t safe, struct retired *out, size_t cap)
{
	size_t n = 0;
	while (l->len && n < cap && l->v[l->head].epoch <= safe) {
		out[n++] = l->v[l->head++];
		l->len--;
	}
	if (!l->len)
		l->head = 0;
	return n;
}

/* Like limbo_take for a list whose epochs are not ordered (the orphans merge several threads'). */
static size_t limbo_filter(struct limbo *l, uint64_t safe, struct retired *out, size_t cap)
{
	size_t n = 0, kept = 0;
	for (size_t i = 0; i < l->len; i++) {
		struct retired it = l->v[l->head + i];
		if (n < cap && it.epoch <= safe)
			out[n++] = it;
		else
			l->v[kept++] = it;
	}
	l->head = 0;
	l->len = kept;
	return n;
}

static uint64_t run_frees(struct retired *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i].fn(v[i].ptr);
	atomic_fetch_add_explicit(&n_freed, n, memory_order_relaxed);
	return n;
}

/* Frees every object retired at epoch <= safe, from all records and the orphans. The free
 * functions run without any lock held, in batches. */
static uint64_t free_upto(uint64_t safe)
{
	struct retired buf[64];
	uint64_t total = 0;
	size_t n;
	for (struct epoch_rec *r = atomic_load_explicit(&recs, memory_order_acquire); r;
	     r = r->next) {
		do {
			pthread_mutex_lock(&r->lock);
			n = limbo_take(&r->limbo, safe, buf, 64);
			pthread_mutex_unlock(&r->lock);
			total += run_frees(buf, n);
		} while (n == 64);
	}
	do {
		pthread_mutex_lock(&orphan_lock);
		n = limbo_filter(&orphans, safe, buf, 64);
		pthread_mutex_unlock(&orphan_lock);
		total += run_frees(buf, n);
	} while (n == 64);
	return total;
}

uint64_t ebpf_epoch_reclaim(void)
{
	pthread_once(&init_once, epoch_init);
	uint64_t e = try_advance();
	return e >= 2 ? free_upto(e - 2) : 0;
}

void ebpf_epoch_retire(void *ptr, ebpf_epoch_free_fn free_fn)
{
	if (!ptr)
		return;
	struct epoch_rec *r = rec_get();
	/* Tag after the caller's unlink: seq_cst orders the unlink before this load. */
	full_fence();
	struct retired it = {ptr, free_fn,
			     atomic_load_explicit(&global_epoch, memory_order_seq_cst)};
	pthread_mutex_lock(&r->lock);
	int rc = limbo_push(&r->limbo, it);
	pthread_mutex_unlock(&r->lock);
	atomic_fetch_add_explicit(&n_retired, 1, memory_order_relaxed);
	if (rc) {
		/* Out of memory for the bookkeeping: wait for readers and free it now. */
		if (!ebpf_epoch_in_section() && ebpf_epoch_synchronize() == 0) {
			free_fn(ptr);
			atomic_fetch_add_explicit(&n_freed, 1, memory_order_relaxed);
		}
		/* Inside a section we cannot wait: leak rather than risk a use-after-free. */
		return;
	}
	if (++r->since_reclaim >= RETIRE_BATCH) {
		r->since_reclaim = 0;
		ebpf_epoch_reclaim();
	}
}

int ebpf_epoch_synchronize(void)
{
	rec_get();
	if (ebpf_epoch_in_section())
		return -EDEADLK;
	uint64_t target = atomic_load_explicit(&global_epoch, memory_order_seq_cst) + 2;
	unsigned spins = 0;
	uint64_t e;
	while ((e = try_advance()) < target) {
		if (++spins < 16) {
			sched_yield();
		} else {
			struct timespec ts = {0, spins < 1000 ? 10000 : 1000000};
			nanosleep(&ts, NULL);
		}
	}
	free_upto(e - 2);
	return 0;
}

void ebpf_epoch_get_stats(struct ebpf_epoch_stats *st)
{
	st->epoch = atomic_load_explicit(&global_epoch, memory_order_relaxed);
	st->retired = atomic_load_explicit(&n_retired, memory_order_relaxed);
	st->freed = atomic_load_explicit(&n_freed, memory_order_relaxed);
	st->threads = atomic_load_explicit(&n_threads, memory_order_relaxed);
}

/* Thread exit: leave any section, hand unreclaimed objects to the orphans, free the record. */
static void thread_exit(void *arg)
{
	struct epoch_rec *r = arg;
	struct ebpf_epoch_reader *rd = &ebpf_epoch_tls_;
	pthread_mutex_lock(&rd_lock);
	r->rd = NULL;
	pthread_mutex_unlock(&rd_lock);
	atomic_store_explicit(&rd->state, 0, memory_order_release); /* not registered */
	rd->rec = NULL;
	pthread_mutex_lock(&r->lock);
	pthread_mutex_lock(&orphan_lock);
	for (size_t i = 0; i < r->limbo.len; i++)
		if (limbo_push(&orphans, r->limbo.v[r->limbo.head + i]))
			break; /* out of memory: the rest leaks, which is safe */
	pthread_mutex_unlock(&orphan_lock);
	free(r->limbo.v);
	r->limbo = (struct limbo){0};
	pthread_mutex_unlock(&r->lock);
	atomic_fetch_sub_explicit(&n_threads, 1, memory_order_relaxed);
	atomic_store_explicit(&r->in_use, 0, memory_order_release);
}
