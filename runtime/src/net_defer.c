/* Completion programs off NCCL's critical path (runtime.h, "Completions off NCCL's critical
 * path"). Measured on the GPU host, running net_counters inline in the test() that saw the
 * request done cost ~0.9 % of a 16-64 KiB AllReduce: NCCL's proxy thread is the latency chain
 * between the ranks, and it waited for the program. Queued, the program runs in a later test()
 * that finds nothing to do yet.
 *
 * One single-producer ring per connection. Consumers (the owner's idle polls, a full queue's
 * producer, flushes from other threads, the freeing thread) take the queue's busy flag, so one
 * consumer at a time; the producer never takes it except to empty a full queue. Flushes walk
 * the registry under reg_lock; a queue leaves the registry before it is emptied and freed, so
 * a flush never touches freed memory. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ncclbpf/epoch.h"
#include "rt_internal.h"

#define NETQ_LEN 64u /* power of two; 64 x 72 B per connection */

/* Counters with one writer each (the producer, or the owner while it holds busy): relaxed
 * load + store, no locked instruction on the hot path; read racily by stats. */
#define BUMP(field)                                                                                \
	atomic_store_explicit(&(field), atomic_load_explicit(&(field), memory_order_relaxed) + 1,  \
			      memory_order_relaxed)

struct ncclbpf_net_queue {
	_Atomic uint32_t tail; /* written by the producer only */
	_Atomic uint32_t head; /* written by the consumer holding busy */
	_Atomic int busy;
	_Atomic uint64_t queued, idle_runs, catch_up, inline_full;
	struct ncclbpf_net_queue *prev, *next; /* registry, under reg_lock */
	struct ncclbpf_net_ctx ev[NETQ_LEN];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncclbpf_net_queue *reg_head;
static struct ncclbpf_net_queue_stats gone; /* counters of freed queues, under reg_lock */

static int try_take(struct ncclbpf_net_queue *q)
{
	return !atomic_exchange_explicit(&q->busy, 1, memory_order_acquire);
}

static void take(struct ncclbpf_net_queue *q)
{
	/* The holder runs at most a queue's worth of programs, each bounded by the verifier. */
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
		atomic_store_explicit(&q->head, h + 1, memory_order_release);
	}
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

/* Runs up to max queued completions on the active policy; the caller holds busy. */
static unsigned run_queued(struct ncclbpf_net_queue *q, unsigned max)
{
	uint32_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&q->tail, memory_order_acquire) - h;
	if (n > max)
		n = max;
	if (!n)
		return 0;
	section_enter();
	run_range(q, __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE), h, h + n);
	section_exit();
	return n;
}

static int push(struct ncclbpf_net_queue *q, const struct ncclbpf_net_ctx *x)
{
	uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
	if (t - atomic_load_explicit(&q->head, memory_order_acquire) >= NETQ_LEN)
		return 0;
	q->ev[t % NETQ_LEN] = *x;
	atomic_store_explicit(&q->tail, t + 1, memory_order_release);
	BUMP(q->queued);
	return 1;
}

int rt_net_defer(struct ncclbpf_net_queue *q, const struct ncclbpf_net_ctx *x)
{
	if (!q)
		return 0;
	if (push(q, x))
		return 1;
	/* Full: the idle polls have not kept up. Catch up here, in order, then queue. */
	if (try_take(q)) {
		BUMP(q->catch_up);
		run_queued(q, NETQ_LEN);
		give(q);
		return push(q, x);
	}
	BUMP(q->inline_full); /* a flush is emptying it right now */
	return 0;
}

struct ncclbpf_net_queue *ncclbpf_rt_net_queue_new(void)
{
	const char *v = getenv("NCCLBPF_NET_DEFER");
	if (v && !strcmp(v, "0"))
		return NULL;
	struct ncclbpf_net_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	pthread_mutex_lock(&reg_lock);
	q->next = reg_head;
	if (reg_head)
		reg_head->prev = q;
	reg_head = q;
	pthread_mutex_unlock(&reg_lock);
	return q;
}

void ncclbpf_rt_net_queue_free(struct ncclbpf_net_queue *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&reg_lock);
	if (q->prev)
		q->prev->next = q->next;
	else
		reg_head = q->next;
	if (q->next)
		q->next->prev = q->prev;
	gone.queued += atomic_load(&q->queued);
	gone.idle_runs += atomic_load(&q->idle_runs);
	gone.catch_up += atomic_load(&q->catch_up);
	gone.inline_full += atomic_load(&q->inline_full);
	pthread_mutex_unlock(&reg_lock);
	/* Out of the registry: no flush can reach it any more, and its owner is closing it. */
	take(q);
	run_queued(q, NETQ_LEN);
	give(q);
	free(q);
}

void ncclbpf_rt_net_idle(struct ncclbpf_net_queue *q)
{
	/* The common case is one load of each index the polling thread has in its cache. */
	if (!q || atomic_load_explicit(&q->head, memory_order_relaxed) ==
		      atomic_load_explicit(&q->tail, memory_order_relaxed))
		return;
	if (!try_take(q))
		return; /* a flush is on it */
	if (run_queued(q, 1))
		BUMP(q->idle_runs);
	give(q);
}

void ncclbpf_rt_net_flush(void)
{
	pthread_mutex_lock(&reg_lock);
	for (struct ncclbpf_net_queue *q = reg_head; q; q = q->next) {
		if (atomic_load_explicit(&q->head, memory_order_acquire) ==
		    atomic_load_explicit(&q->tail, memory_order_acquire))
			continue;
		take(q);
		run_queued(q, NETQ_LEN);
		give(q);
	}
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
		out->idle_runs += atomic_load(&q->idle_runs);
		out->catch_up += atomic_load(&q->catch_up);
		out->inline_full += atomic_load(&q->inline_full);
		uint32_t h = atomic_load(&q->head); /* first: tail only grows past it */
		out->pending += atomic_load(&q->tail) - h;
	}
	pthread_mutex_unlock(&reg_lock);
}
