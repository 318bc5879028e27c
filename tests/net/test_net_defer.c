/* Completion programs off the critical path (runtime/src/net_defer.c): ncclbpf_rt_net_complete
 * queues a completion with its time taken at once; the program (policies/net_counters.o) runs
 * from idle polls, when the queue is full, when it is freed, before a reload or unload, and at
 * every map read. The counters the program keeps show what ran and with which duration.
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
struct peer_stats {
	uint64_t sends, send_bytes, send_ns, send_max_ns;
	uint64_t recvs, recv_bytes, recv_ns, recv_max_ns;
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
	for (int i = 0; i < s->n; i++) {
		complete(s->q, NCCLBPF_NET_COMPLETE_RECV, 9, 1, 0);
		if (i % 3 == 0)
			ncclbpf_rt_net_idle(s->q);
	}
	atomic_store(&s->done, 1);
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

	struct ncclbpf_net_queue *q = ncclbpf_rt_net_queue_new();
	CHECK(q != NULL);
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
	struct ncclbpf_net_queue_stats s = qstats();
	CHECK_EQ_U64(s.queues, 1);
	CHECK_EQ_U64(s.queued, 3);
	CHECK_EQ_U64(s.pending, 3);
	/* An idle poll runs one. */
	ncclbpf_rt_net_idle(q);
	s = qstats();
	CHECK_EQ_U64(s.pending, 2);
	CHECK_EQ_U64(s.idle_runs, 1);
	/* The durations are the completions' own, not the time they waited in the queue. */
	nanosleep(&(struct timespec){0, 50000000}, NULL);
	struct peer_stats p = peer(1); /* the read empties the queue */
	CHECK_EQ_U64(qstats().pending, 0);
	CHECK_EQ_U64(p.sends, 2);
	CHECK_EQ_U64(p.send_bytes, 300);
	CHECK_EQ_U64(p.recvs, 1);
	CHECK_EQ_U64(p.recv_bytes, 300);
	CHECKF(p.send_max_ns >= 1000000 && p.send_max_ns < 50000000, "send_max_ns %llu",
	       (unsigned long long)p.send_max_ns);
	CHECKF(p.recv_ns >= 1000000 && p.recv_ns < 50000000, "recv_ns %llu",
	       (unsigned long long)p.recv_ns);

	/* A full queue is emptied by its producer, in order, before the next is queued. */
	for (int i = 0; i < 65; i++)
		CHECK(complete(q, NCCLBPF_NET_COMPLETE, 2, 1, 0) == 0);
	s = qstats();
	CHECK_EQ_U64(s.catch_up, 1);
	CHECK_EQ_U64(s.pending, 1);
	CHECK_EQ_U64(peer(2).sends, 65);

	/* A reload runs what is queued first, so it counts in the maps carried over. */
	for (int i = 0; i < 5; i++)
		complete(q, NCCLBPF_NET_COMPLETE, 3, 1, 0);
	CHECK_EQ_U64(qstats().pending, 5);
	load(counters);
	CHECK_EQ_U64(qstats().pending, 0);
	CHECK_EQ_U64(peer(3).sends, 5);

	/* Freeing a queue runs what it holds; its counts stay in the totals. */
	for (int i = 0; i < 4; i++)
		complete(q, NCCLBPF_NET_COMPLETE, 4, 1, 0);
	uint64_t queued = qstats().queued;
	ncclbpf_rt_net_queue_free(q);
	s = qstats();
	CHECK_EQ_U64(s.queues, 0);
	CHECK_EQ_U64(s.pending, 0);
	CHECK_EQ_U64(s.queued, queued);
	CHECK_EQ_U64(peer(4).sends, 4);
	ncclbpf_rt_net_queue_free(NULL);

	/* No queue (NCCLBPF_NET_DEFER=0, or q NULL): the program runs in the call. */
	setenv("NCCLBPF_NET_DEFER", "0", 1);
	CHECK(ncclbpf_rt_net_queue_new() == NULL);
	unsetenv("NCCLBPF_NET_DEFER");
	CHECK(complete(NULL, NCCLBPF_NET_COMPLETE, 5, 7, 0) == 0);
	CHECK_EQ_U64(qstats().queued, queued);
	CHECK_EQ_U64(peer(5).send_bytes, 7);
	ncclbpf_rt_net_idle(NULL);

	/* One producer with idle polls, one thread flushing (inspection reads) the whole time:
	 * every completion runs exactly once. */
	struct stress st = {.q = ncclbpf_rt_net_queue_new(), .n = 200000};
	CHECK(st.q != NULL);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, producer, &st) == 0);
	while (!atomic_load(&st.done))
		ncclbpf_rt_net_flush();
	pthread_join(th, NULL);
	CHECK_EQ_U64(peer(9).recvs, (uint64_t)st.n);
	s = qstats();
	CHECKF(s.idle_runs > 1, "idle_runs %llu", (unsigned long long)s.idle_runs);

	/* An unload runs what is queued while its policy is still there to run it. */
	complete(st.q, NCCLBPF_NET_COMPLETE, 6, 1, 0);
	CHECK_EQ_U64(qstats().pending, 1);
	ncclbpf_rt_unload();
	CHECK_EQ_U64(qstats().pending, 0);
	CHECK(complete(st.q, NCCLBPF_NET_COMPLETE, 6, 1, 0) == -ENOENT);
	ncclbpf_rt_net_queue_free(st.q);

	ncclbpf_rt_release();
	return check_summary("test_net_defer");
}
