/* The listener's queue of accepted sockets whose connection is not set up yet
 * (net_tcp_pending.c). Anyone who can reach the port can fill it, so it is bounded three ways:
 * each socket has NCCLBPF_NET_HELLO_MS to become part of a complete connection, a full queue
 * makes room by closing its oldest idle socket (no complete hello yet), and one address may hold
 * only TCP_PENDING_PER_ADDR entries (beyond that, its own oldest idle one is closed). Every
 * socket closed for one of these causes is counted; one WARN per cause, at most once a minute
 * per process. */
#ifndef NCCLBPF_NET_TCP_PENDING_H
#define NCCLBPF_NET_TCP_PENDING_H

#include <stddef.h>
#include <stdint.h>

#include "net_tcp_internal.h"

#define TCP_PENDING_MAX 64
/* Two connections of the most sockets a connector may use, set up at once from one host. */
#define TCP_PENDING_PER_ADDR (2 * TCP_MAX_SOCKS)

struct tcp_pending {
	int fd;
	size_t off;	   /* hello bytes read; (size_t)-1: the socket failed */
	uint64_t since_ns; /* accepted at (CLOCK_MONOTONIC) */
	uint64_t seq;	   /* accept order: the oldest has the smallest */
	struct tcp_peer from;
	struct tcp_hello h;
};

struct tcp_pending_queue {
	struct tcp_pending e[TCP_PENDING_MAX];
	int n;
	uint64_t next_seq;
};

enum tcp_pending_drop {
	TCP_DROP_LATE,	   /* no complete connection within the deadline */
	TCP_DROP_FULL,	   /* the queue was full */
	TCP_DROP_PER_ADDR, /* its address had TCP_PENDING_PER_ADDR entries */
	TCP_DROP_BAD,	   /* closed, or a hello that is not ours or not for this listener */
	TCP_DROP_CAUSES,
};

uint64_t tcp_now_ns(void);
/* Queues fd (accepted from `from`), first closing the entry the bounds above pick. */
void tcp_pending_add(struct tcp_pending_queue *q, int fd, const struct tcp_peer *from,
		     uint64_t now_ns);
/* Closes every entry accepted more than hello_ms ago. */
void tcp_pending_expire(struct tcp_pending_queue *q, uint64_t now_ns, int hello_ms);
/* Closes entry i for cause (counted and reported), the last entry takes its place. */
void tcp_pending_drop(struct tcp_pending_queue *q, int i, enum tcp_pending_drop cause);
/* Removes entry i without closing it (its socket joins a connection). */
void tcp_pending_take(struct tcp_pending_queue *q, int i);
void tcp_pending_close_all(struct tcp_pending_queue *q);

#endif
