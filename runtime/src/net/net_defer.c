/* Completion programs off NCCL's critical path (runtime.h, "Completions off NCCL's critical
 * path"). Why a thread: NCCL's proxy progress thread is a polling loop and the latency chain
 * between the ranks, so work added anywhere in it lengthens the loop and delays its reaction to
 * the next event, even in test() calls that find nothing done (tried first, no gain). On the
 * GPU host a completion program of 64 map updates cost +11.2 % of a 64 KiB AllReduce inline and
 * +2.5 % here (docs/net-plugin.md, "Performance").
 *
 * One single-producer ring per net context (one NCCL communicator), shared by its connections.
 * NCCL tests a context's requests from its one proxy progress thread; the first thread to
 * queue owns the producer side, and a completion on any other thread runs inline, so a caller
 * that breaks that rule costs time, never data. The producer keeps its own copy of the
 * consumer's index and touches only its own cache line unless the ring looks full. Consumers
 * (the drain thread, a full ring's producer, flushes, a closing connection) take the busy
 * flag, one at a time. The drain thread wakes every 1 ms (down to 100 us while rings fill past
 * a quarter, up to 4 ms while they stay empty); flushes and the drain thread walk the registry
 * under reg_lock, and a queue leaves the registry before its last reference frees it. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/rt_service.h"
#include "ebpf/epoch.h"
#include "ncclbpf/envvars.h"
#include "net.h"

#define NETQ_LEN       512u	 /* power of two; 512 x 72 B per communicator */
#define DRAIN_MIN_NS   100000ull /* while rings fill past a quarter */
#define DRAIN_START_NS 1000000ull
#define DRAIN_MAX_NS   4000000ull /* while they stay empty */

/* Counters with one writer each (the producer, or a consumer while it holds busy): relaxed
 * load + store, no locked instruction on the hot path; read racily by stats. */
#define BUMP(field, n)                                                                             \
	atomic_store_explicit(&(field),                                                            \
			      atomic_load_explicit(&(field), memory_order_relaxed) + (n),          \
			      memory_order_relaxed)

struct ncclbpf_net_queue {
	/* the producer's line */
	_Alignas(64) _Atomic uint32_t tail;
	uint32_t head_seen;	 /* the producer's last read of head */
	_Atomic uintptr_t owner; /* the producing thread (pthread_self), 0 until the first */
	_Atomic uint64_t queued, catch_up, inline_full;
	/* the consumers' line */
	_Alignas(64) _Atomic uint32_t head;
	_Atomic int busy;
	_Atomic uint64_t drained, other_thread;
	_Atomic uint32_t refs;
	struct ncclbpf_net_queue *prev, *next; /* registry, under reg_lock */
	_Alignas(64) struct ncclbpf_net_ctx ev[NETQ_LEN];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncclbpf_net_queue *reg_head;
static struct ncclbpf_net_queue_stats gone; /* counters of freed queues, under reg_lock */

/* The drain thread: runs while queues exist (started with the first, told to stop with the
 * last). gen tells a thread that it was told to stop even if a new one started meanwhile; pid
 * notices a fork (the child has no drain thread). */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int cond_ready;
	unsigned queues;
	unsigned gen;
	int running;
	pthread_t thread;
	pid_t pid;
} dr = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int try_take(struct ncclbpf_net_queue *q)
{
	return !atomic_exchange_explicit(&q->busy, 1, memory_order_acquire);
}

static void take(struct ncclbpf_net_queue *q)
{
	/* The holder runs at most a ring's worth of programs, each bounded by the verifier. */
	while (!try_take(q))
		sched_yield();
}

static void give(struct ncclbpf_net_queue *q)
{
	atomic_store_explicit(&q->busy, 0, memory_order_release);
}

/* Runs the completions queued in [h, end) on p, advancing head past each. */
static void run_range(struct ncclbpf_net_queue *q, const struct rt_policy *p, uint32_t h,
		      uint32_t end)
{
	for (; h != end; h++) {
		uint64_t ignored;
		/* In place: the context is read-only to programs, and the slot is not reused
		 * before head moves past it. No policy or no program: dropped, as inline. */
		if (p)
			rt_net_run_hook(&p->net[NCCLBPF_NET_COMPLETE - 1], &q->ev[h % NETQ_LEN],
					&ignored);
	}
	atomic_store_explicit(&q->head, end, memory_order_release);
}

/* Off the hot path, so out of line: GCC 12 with -fsanitize=undefined miscompiled the null check
 * of the thread-local epoch record when enter and exit were inlined into one function here (it
 * branched on flags that a preceding lea never set), failing the sanitizer build. */
static __attribute__((noinline)) void section_enter(void)
{
	ebpf_epoch_enter();
}

static __attribute__((noinline)) void section_exit(void)
{
	ebpf_epoch_exit();
}

/* Runs everything queued on the active policy; the caller holds busy. Returns how many. */
static uint32_t run_queued(struct ncclbpf_net_queue *q)
{
	uint32_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
	uint32_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
	if (h == t)
		return 0;
	section_enter();
	run_range(q, __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE), h, t);
	section_exit();
	return t - h;
}

static uint32_t run_all(struct ncclbpf_net_queue *q)
{
	take(q);
	uint32_t n = run_queued(q);
	give(q);
	return n;
}

/* Asks for the lines of the slot the next push writes, for writing. The drain thread read
 * them a ring ago, so without this the store finds them shared with its core and the next
 * locked instruction or fence on NCCL's proxy thread waits for their invalidation (queueing
 * an empty program cost +0.48 % of a 64 KiB AllReduce, device run X). A hint only: on a CPU
 * without PREFETCHW the instruction is a no-op. */
static inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

static int push(struct ncclbpf_net_queue *q, const struct ncclbpf_net_ctx *x)
{
	uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
	if (t - q->head_seen >= NETQ_LEN) {
		/* Looks full: only now read the consumers' line. */
		q->head_seen = atomic_load_explicit(&q->head, memory_order_acquire);
		if (t - q->head_seen >= NETQ_LEN)
			return 0;
	}
	q->ev[t % NETQ_LEN] = *x;
	atomic_store_explicit(&q->tail, t + 1, memory_order_release);
	BUMP(q->queued, 1);
	const char *next = (const char *)&q->ev[(t + 1) % NETQ_LEN];
	prefetch_for_write(next);
	prefetch_for_write(next + sizeof(*x) - 1); /* a 72-byte slot spans two lines */
	return 1;
}

int rt_net_defer(struct ncclbpf_net_queue *q, const struct ncclbpf_net_ctx *x)
{
	if (!q)
		return 0;
	uintptr_t me = (uintptr_t)pthread_self();
	uintptr_t o = atomic_load_explicit(&q->owner, memory_order_relaxed);
	if (o != me) {
		uintptr_t none = 0;
		if (o || !atomic_compare_exchange_strong(&q->owner, &none, me)) {
			/* Not the producing thread: inline, counted (several writers: locked). */
			atomic_fetch_add_explicit(&q->other_thread, 1, memory_order_relaxed);
			return 0;
		}
	}
	if (push(q, x))
		return 1;
	/* Full: the drain thread has not kept up. Catch up here, in order, then queue. */
	if (try_take(q)) {
		BUMP(q->catch_up, 1);
		run_queued(q);
		give(q);
		return push(q, x);
	}
	BUMP(q->inline_full, 1); /* a consumer is emptying it right now */
	return 0;
}

/* --- the drain thread ----------------------------------------------------------------------- */

static void *drain_main(void *arg)
{
	unsigned gen = (unsigned)(uintptr_t)arg;
	uint64_t period = DRAIN_START_NS;
	pthread_mutex_lock(&dr.lock);
	while (dr.gen == gen) {
		struct timespec ts = rt_time_after(CLOCK_MONOTONIC, period);
		pthread_cond_timedwait(&dr.wake, &dr.lock, &ts);
		if (dr.gen != gen)
			break;
		pthread_mutex_unlock(&dr.lock);
		uint32_t most = 0;
		pthread_mutex_lock(&reg_lock);
		for (struct ncclbpf_net_queue *q = reg_head; q; q = q->next) {
			if (atomic_load_explicit(&q->head, memory_order_relaxed) ==
			    atomic_load_explicit(&q->tail, memory_order_acquire))
				continue;
			if (!try_take(q))
				continue; /* a flush or a closing connection is on it */
			uint32_t n = run_queued(q);
			BUMP(q->drained, n);
			give(q);
			most = n > most ? n : most;
		}
		pthread_mutex_unlock(&reg_lock);
		/* Keep rings under a quarter full; back off while nothing comes. */
		if (most > NETQ_LEN / 4 && period > DRAIN_MIN_NS)
			period /= 2;
		else if (!most && period < DRAIN_MAX_NS)
			period *= 2;
		pthread_mutex_lock(&dr.lock);
	}
	pthread_mutex_unlock(&dr.lock);
	return NULL;
}

/* A queue was created: start the drain thread if none runs (in this process). */
static void drain_start(void)
{
	pthread_mutex_lock(&dr.lock);
	dr.queues++;
	if (!dr.cond_ready) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&dr.wake, &ca);
		pthread_condattr_destroy(&ca);
		dr.cond_ready = 1;
	}
	if ((!dr.running || dr.pid != getpid()) && ncclbpf_env_bool("NCCLBPF_NET_DRAIN")) {
		dr.gen++;
		dr.running =
		    rt_thread_start(&dr.thread, drain_main, (void *)(uintptr_t)dr.gen) == 0;
		dr.pid = getpid();
		if (!dr.running) /* the rings are still emptied when full, flushed and put */
			rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: no drain thread for net completions; "
						 "their programs run when a queue fills");
	}
	pthread_mutex_unlock(&dr.lock);
}

/* A queue was freed: the last one stops the drain thread and waits for it (the library may be
 * unloaded next: NCCL finalizes, then dlcloses). */
static void drain_stop(void)
{
	pthread_mutex_lock(&dr.lock);
	int join = 0;
	pthread_t th;
	if (dr.queues && !--dr.queues && dr.running && dr.pid == getpid()) {
		th = dr.thread;
		join = 1;
		dr.running = 0;
		dr.gen++; /* a thread started after this unlock has a newer gen */
		pthread_cond_broadcast(&dr.wake);
	}
	pthread_mutex_unlock(&dr.lock);
	if (join)
		pthread_join(th, NULL);
}

/* --- queues --------------------------------------------------------------------------------- */

struct ncclbpf_net_queue *ncclbpf_rt_net_queue_new(void)
{
	if (!ncclbpf_env_bool("NCCLBPF_NET_DEFER"))
		return NULL;
	struct ncclbpf_net_queue *q = aligned_alloc(64, sizeof(*q));
	if (!q)
		return NULL;
	memset(q, 0, sizeof(*q));
	atomic_store(&q->refs, 1);
	pthread_mutex_lock(&reg_lock);
	q->next = reg_head;
	if (reg_head)
		reg_head->prev = q;
	reg_head = q;
	pthread_mutex_unlock(&reg_lock);
	/* From now on a swap of the policy first runs what is queued (policy.h). */
	rt_policy_set_drain(ncclbpf_rt_net_flush);
	drain_start();
	return q;
}

struct ncclbpf_net_queue *ncclbpf_rt_net_queue_get(struct ncclbpf_net_queue *q)
{
	if (q)
		atomic_fetch_add(&q->refs, 1);
	return q;
}

void ncclbpf_rt_net_queue_put(struct ncclbpf_net_queue *q)
{
	if (!q)
		return;
	/* Whoever lets go runs what is queued: a closed connection's completions are counted
	 * when close returns. */
	run_all(q);
	if (atomic_fetch_sub(&q->refs, 1) != 1)
		return;
	pthread_mutex_lock(&reg_lock);
	if (q->prev)
		q->prev->next = q->next;
	else
		reg_head = q->next;
	if (q->next)
		q->next->prev = q->prev;
	gone.queued += atomic_load(&q->queued);
	gone.drained += atomic_load(&q->drained);
	gone.catch_up += atomic_load(&q->catch_up);
	gone.inline_full += atomic_load(&q->inline_full);
	gone.other_thread += atomic_load(&q->other_thread);
	pthread_mutex_unlock(&reg_lock);
	/* Out of the registry and unreferenced: nothing else can reach it. */
	run_all(q);
	free(q);
	drain_stop();
}

void ncclbpf_rt_net_flush(void)
{
	pthread_mutex_lock(&reg_lock);
	for (struct ncclbpf_net_queue *q = reg_head; q; q = q->next)
		if (atomic_load_explicit(&q->head, memory_order_acquire) !=
		    atomic_load_explicit(&q->tail, memory_order_acquire))
			run_all(q);
	pthread_mutex_unlock(&reg_lock);
}

void ncclbpf_rt_net_queue_stats(struct ncclbpf_net_queue_stats *out)
{
	pthread_mutex_lock(&reg_lock);
	*out = gone;
	out->queues = 0;
	out->pending = 0;
	for (struct ncclbpf_net_queue *q = reg_head; q; q = q->next) {
		out->queues++;
		out->queued += atomic_load(&q->queued);
		out->drained += atomic_load(&q->drained);
		out->catch_up += atomic_load(&q->catch_up);
		out->inline_full += atomic_load(&q->inline_full);
		out->other_thread += atomic_load(&q->other_thread);
		uint32_t h = atomic_load(&q->head); /* first: tail only grows past it */
		out->pending += atomic_load(&q->tail) - h;
	}
	out->drain_thread = (uint64_t)__atomic_load_n(&dr.running, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&reg_lock);
}
