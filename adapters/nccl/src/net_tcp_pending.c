/* The listener's pending queue and its bounds (net_tcp_pending.h). */
#define _GNU_SOURCE
#include "net_tcp_pending.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net_log.h"

#define WARN_INTERVAL_NS (60ull * 1000000000ull)

uint64_t tcp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int same_addr(const struct tcp_peer *a, const struct tcp_peer *b)
{
	return a->family == b->family && !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static int idle(const struct tcp_pending *p)
{
	return p->off != sizeof(p->h);
}

/* Process-wide per cause: sockets closed so far, and when the last WARN went out (0: never). */
static struct {
	_Atomic uint64_t count;
	_Atomic uint64_t warned_ns;
} drops[TCP_DROP_CAUSES];

static void report(enum tcp_pending_drop cause, const struct tcp_peer *from)
{
	uint64_t n = atomic_fetch_add_explicit(&drops[cause].count, 1, memory_order_relaxed) + 1;
	uint64_t now = tcp_now_ns(),
		 last = atomic_load_explicit(&drops[cause].warned_ns, memory_order_relaxed);
	if (last && now - last < WARN_INTERVAL_NS)
		return;
	if (!atomic_compare_exchange_strong(&drops[cause].warned_ns, &last, now))
		return; /* another listener reports this minute */
	char addr[INET6_ADDRSTRLEN] = "an unknown address", why[160];
	if (from->family == AF_INET || from->family == AF_INET6)
		inet_ntop(from->family, from->addr, addr, sizeof(addr));
	switch (cause) {
	case TCP_DROP_LATE:
		snprintf(why, sizeof(why),
			 "did not complete its set-up within %d ms (NCCLBPF_NET_HELLO_MS)",
			 tcp_config()->hello_ms);
		break;
	case TCP_DROP_FULL:
		snprintf(why, sizeof(why), "was the oldest idle one of a full queue of %d",
			 TCP_PENDING_MAX);
		break;
	case TCP_DROP_PER_ADDR:
		snprintf(why, sizeof(why),
			 "was the oldest idle one of its address's %d, the most one address may "
			 "have",
			 TCP_PENDING_PER_ADDR);
		break;
	default:
		snprintf(why, sizeof(why), "closed or sent a hello not meant for this listener");
		break;
	}
	net_warn("NET/NCCLbpf: accept: closed a pending connection from %s that %s (%llu closed "
		 "for this reason so far; said at most once a minute)",
		 addr, why, (unsigned long long)n);
}

void tcp_pending_drop(struct tcp_pending_queue *q, int i, enum tcp_pending_drop cause)
{
	report(cause, &q->e[i].from);
	close(q->e[i].fd);
	tcp_pending_take(q, i);
}

void tcp_pending_take(struct tcp_pending_queue *q, int i)
{
	q->e[i] = q->e[--q->n];
}

/* The oldest entry (from `from` only, when not NULL), an idle one if there is any. */
static int victim(const struct tcp_pending_queue *q, const struct tcp_peer *from)
{
	int best = -1;
	for (int i = 0; i < q->n; i++) {
		const struct tcp_pending *p = &q->e[i];
		if (from && !same_addr(&p->from, from))
			continue;
		if (best < 0 || idle(p) > idle(&q->e[best]) ||
		    (idle(p) == idle(&q->e[best]) && p->seq < q->e[best].seq))
			best = i;
	}
	return best;
}

void tcp_pending_add(struct tcp_pending_queue *q, int fd, const struct tcp_peer *from,
		     uint64_t now_ns)
{
	int same = 0;
	for (int i = 0; i < q->n; i++)
		same += same_addr(&q->e[i].from, from);
	if (same >= TCP_PENDING_PER_ADDR)
		tcp_pending_drop(q, victim(q, from), TCP_DROP_PER_ADDR);
	else if (q->n == TCP_PENDING_MAX)
		tcp_pending_drop(q, victim(q, NULL), TCP_DROP_FULL);
	q->e[q->n++] =
	    (struct tcp_pending){.fd = fd, .since_ns = now_ns, .seq = q->next_seq++, .from = *from};
}

void tcp_pending_expire(struct tcp_pending_queue *q, uint64_t now_ns, int hello_ms)
{
	uint64_t limit = (uint64_t)hello_ms * 1000000ull;
	for (int i = q->n - 1; i >= 0; i--)
		if (now_ns - q->e[i].since_ns > limit)
			tcp_pending_drop(q, i, TCP_DROP_LATE);
}

void tcp_pending_close_all(struct tcp_pending_queue *q)
{
	for (int i = 0; i < q->n; i++)
		close(q->e[i].fd);
	q->n = 0;
}
