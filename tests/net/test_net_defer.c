/* Completion programs off the critical path (runtime/src/net/net_defer.c): ncclbpf_rt_net_complete
 * queues a completion with its time taken at once; the program (policies/net_counters.o) runs
 * on the drain thread, when the queue is full, when a reference is put, before a reload or
 * unload, and at every map read; completions from a thread other than the queue's producer run
 * inline.
 * The counters the program keeps show what ran and with which duration.
 * usage: test_net_defer NET_COUNTERS.o */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "ncclbpf/runtime.h"

struct peer_key {
	uint32_t addr[4];
	uint32_t dev;
	uint32_t pad;
};
struct peer_stats { /* policies/net_counters.c */
	uint64_t sends, send_bytes, send_ns, send_max_ns;
	uint64_t recvs, recv_bytes, recv_ns, recv_max_ns;
	uint64_t send_timed, recv_timed;
};

static const char *counters;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void load(const char *path)
{
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	int e = ncclbpf_rt_reload(path, &r);
	CHECKF(e == 0, "%s: %s", path, r.msg);
}

static int complete(struct ncclbpf_net_queue *q, uint32_t op, uint32_t dev, uint64_t bytes,
		    uint64_t t0)
{
	struct ncclbpf_net_ctx x;
	memset(&x, 0, sizeof(x));
	x.op = op;
	x.dev = dev;
	x.bytes = bytes;
	x.peer = 0xffffffffu;
	return ncclbpf_rt_net_complete(q, &x, t0);
}

/* Flushes (every map read does) and returns dev's entry; zero when absent. */
static struct peer_stats peer(uint32_t dev)
{
	struct peer_key k = {.dev = dev};
	struct peer_stats s;
	if (ncclbpf_rt_map_lookup("net_peers", &k, &s) != 0)
		memset(&s, 0, sizeof(s));
	return s;
}

static struct ncclbpf_net_queue_stats qstats(void)
{
	struct ncclbpf_net_queue_stats s;
	ncclbpf_rt_net_queue_stats(&s);
	return s;
}

struct stress {
	struct ncclbpf_net_queue *q;
	int n;
	_Atomic int done;
};

static void *producer(void *arg)
{
	struct stress *s = arg;
	for (int i = 0; i < s->n; i++)
		complete(s->q, NCCLBPF_NET_COMPLETE_RECV, 9, 1, 0);
	atomic_store(&s->done, 1);
	return NULL;
}

struct other {
	struct ncclbpf_net_queue *q;
	pthread_t th;
	int rc;
};

static void *other_thread(void *arg)
{
	struct other *o = arg;
	o->rc = complete(o->q, NCCLBPF_NET_COMPLETE, 8, 1, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s NET_COUNTERS.o\n", argv[0]);
		return 2;
	}
	counters = argv[1];
	setenv("NCCLBPF_WATCH", "0", 1);
	setenv("NCCLBPF_INSPECT", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	unsetenv("NCCLBPF_NET_DEFER");
	ncclbpf_rt_acquire();

	/* Without the drain thread (NCCLBPF_NET_DRAIN=0) nothing runs queued programs behind the
	 * test's back: every step below is deterministic. */
	setenv("NCCLBPF_NET_DRAIN", "0", 1);
	struct ncclbpf_net_queue *q = ncclbpf_rt_net_queue_new();
	CHECK(q != NULL);
	CHECK_EQ_U64(qstats().drain_thread, 0);
	/* No policy: nothing to run, nothing queued; only completions are accepted. */
	CHECK(complete(q, NCCLBPF_NET_COMPLETE, 1, 10, 0) == -ENOENT);
	CHECK(complete(q, NCCLBPF_NET_ISEND, 1, 10, 0) == -EINVAL);
	CHECK_EQ_U64(qstats().queued, 0);

	load(counters);
	/* Queued, not run: the program's counters move only when something empties the queue. */
	uint64_t t0 = now_ns() - 1000000; /* posted 1 ms ago (CLOCK_MONOTONIC stamp) */
	CHECK(complete(q, NCCLBPF_NET_COMPLETE, 1, 100, t0) == 0);
	CHECK(complete(q, NCCLBPF_NET_COMPLETE, 1, 200, t0) == 0);
	CHECK(complete(q, NCCLBPF_NET_COMPLETE_RECV, 1, 300, t0) == 0);
	uint64_t queued_at = now_ns(); /* every duration was taken before this */
	struct ncclbpf_net_queue_stats s = qstats();
	CHECK_EQ_U64(s.queues, 1);
	CHECK_EQ_U64(s.queued, 3);
	CHECK_EQ_U64(s.pending, 3);
	/* The durations are the completions' own, not the time they waited in the queue: at least
	 * the 1 ms since posting, at most what had passed when they were queued (an ordering,
	 * not a latency bound: time in the queue, 50 ms and more, would come on top). */
	nanosleep(&(struct timespec){0, 50000000}, NULL);
	struct peer_stats p = peer(1); /* the read empties the queue */
	CHECK_EQ_U64(qstats().pending, 0);
	CHECK_EQ_U64(p.sends, 2);
	CHECK_EQ_U64(p.send_bytes, 300);
	CHECK_EQ_U64(p.recvs, 1);
	CHECK_EQ_U64(p.recv_bytes, 300);
	CHECKF(p.send_max_ns >= 1000000 && p.send_max_ns <= queued_at - t0,
	       "send_max_ns %llu, queued %llu ns after posting", (unsigned long long)p.send_max_ns,
	       (unsigned long long)(queued_at - t0));
	CHECKF(p.recv_ns >= 1000000 && p.recv_ns <= queued_at - t0,
	       "recv_ns %llu, queued %llu ns after posting", (unsigned long long)p.recv_ns,
	       (unsigned long long)(queued_at - t0));

	/* A full queue is emptied by its producer, in order, before the next is queued. */
	for (int i = 0; i < 513; i++)
		CHECK(complete(q, NCCLBPF_NET_COMPLETE, 2, 1, 0) == 0);
	s = qstats();
	CHECK_EQ_U64(s.catch_up, 1);
	CHECK_EQ_U64(s.pending, 1);
	CHECK_EQ_U64(peer(2).sends, 513);

	/* A reload runs what is queued first, so it counts in the maps carried over. */
	for (int i = 0; i < 5; i++)
		complete(q, NCCLBPF_NET_COMPLETE, 3, 1, 0);
	CHECK_EQ_U64(qstats().pending, 5);
	load(counters);
	CHECK_EQ_U64(qstats().pending, 0);
	CHECK_EQ_U64(peer(3).sends, 5);

	/* The producer side belongs to the first thread that queued (this one): another
	 * thread's completion runs at once. */
	struct other o = {.q = q};
	CHECK(pthread_create(&o.th, NULL, other_thread, &o) == 0);
	pthread_join(o.th, NULL);
	CHECK(o.rc == 0);
	s = qstats();
	CHECK_EQ_U64(s.other_thread, 1);
	CHECK_EQ_U64(s.pending, 0);
	CHECK_EQ_U64(peer(8).sends, 1);

	/* Every put runs what is queued (a closing connection); the last frees the queue, and its
	 * counts stay in the totals. */
	CHECK(ncclbpf_rt_net_queue_get(q) == q);
	for (int i = 0; i < 4; i++)
		complete(q, NCCLBPF_NET_COMPLETE, 4, 1, 0);
	ncclbpf_rt_net_queue_put(q);
	s = qstats();
	CHECK_EQ_U64(s.queues, 1);
	CHECK_EQ_U64(s.pending, 0);
	for (int i = 0; i < 4; i++)
		complete(q, NCCLBPF_NET_COMPLETE, 4, 1, 0);
	uint64_t queued = qstats().queued;
	ncclbpf_rt_net_queue_put(q);
	s = qstats();
	CHECK_EQ_U64(s.queues, 0);
	CHECK_EQ_U64(s.pending, 0);
	CHECK_EQ_U64(s.queued, queued);
	CHECK_EQ_U64(peer(4).sends, 8);
	CHECK(ncclbpf_rt_net_queue_get(NULL) == NULL);
	ncclbpf_rt_net_queue_put(NULL);

	/* No queue (NCCLBPF_NET_DEFER=0, or q NULL): the program runs in the call. */
	setenv("NCCLBPF_NET_DEFER", "0", 1);
	CHECK(ncclbpf_rt_net_queue_new() == NULL);
	unsetenv("NCCLBPF_NET_DEFER");
	CHECK(complete(NULL, NCCLBPF_NET_COMPLETE, 5, 7, 0) == 0);
	CHECK_EQ_U64(qstats().queued, queued);
	CHECK_EQ_U64(peer(5).send_bytes, 7);

	/* The drain thread: runs programs with nobody reading or closing, and stops with the last
	 * queue. One producer, one thread flushing (inspection reads) the whole time: every
	 * completion runs exactly once. */
	unsetenv("NCCLBPF_NET_DRAIN");
	struct stress st = {.q = ncclbpf_rt_net_queue_new(), .n = 200000};
	CHECK(st.q != NULL);
	CHECK_EQ_U64(qstats().drain_thread, 1);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, producer, &st) == 0);
	while (!atomic_load(&st.done))
		ncclbpf_rt_net_flush();
	pthread_join(th, NULL);
	CHECK_EQ_U64(peer(9).recvs, (uint64_t)st.n);
	uint64_t drained = qstats().drained;
	struct ncclbpf_net_queue *q2 = ncclbpf_rt_net_queue_new();
	for (int i = 0; i < 10; i++)
		CHECK(complete(q2, NCCLBPF_NET_COMPLETE, 10, 1, 0) == 0);
	for (int i = 0; i < 6000 && qstats().pending; i++) /* 60 s hang guard */
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	s = qstats();
	CHECK_EQ_U64(s.pending, 0);
	CHECKF(s.drained >= drained + 10, "drained %llu (was %llu)", (unsigned long long)s.drained,
	       (unsigned long long)drained);
	ncclbpf_rt_net_queue_put(st.q);
	CHECK_EQ_U64(qstats().drain_thread, 1);
	ncclbpf_rt_net_queue_put(q2);
	CHECK_EQ_U64(qstats().drain_thread, 0);
	CHECK_EQ_U64(peer(10).sends, 10);

	/* An unload runs what is queued while its policy is still there to run it. */
	setenv("NCCLBPF_NET_DRAIN", "0", 1);
	q = ncclbpf_rt_net_queue_new();
	complete(q, NCCLBPF_NET_COMPLETE, 6, 1, 0);
	CHECK_EQ_U64(qstats().pending, 1);
	ncclbpf_rt_unload();
	CHECK_EQ_U64(qstats().pending, 0);
	CHECK(complete(q, NCCLBPF_NET_COMPLETE, 6, 1, 0) == -ENOENT);
	ncclbpf_rt_net_queue_put(q);

	ncclbpf_rt_release();
	return check_summary("test_net_defer");
}
