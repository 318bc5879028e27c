/* The net plugin's eBPF hooks: building the read-only context, running SEC("net/<op>"), and
 * the pacing an isend program can ask for. Used by the table glue (net_plugin.c) for both
 * back-ends (our TCP transport, a delegated inner plugin). Hooks never touch payload bytes. */
#ifndef NCCLBPF_NET_HOOKS_H
#define NCCLBPF_NET_HOOKS_H

#include <stdint.h>

#include "net_tcp.h"

/* Who a hook call is about. peer_rank is always unknown to a net plugin (NCCL passes no rank),
 * hence 0xffffffff in the context. */
struct net_who {
	uint64_t comm_id;
	uint32_t dev;
	uint32_t serial;      /* the net context's number in this process (c= of trace records) */
	struct tcp_peer peer; /* family 0: unknown (delegated plugins' handles are opaque) */
};

uint64_t net_now_ns(void);

/* Net contexts are numbered per process, from 1, for trace records. */
uint32_t net_next_serial(void);

/* Runs the program for op; returns 1 and its r0 in *ret when one ran, 0 when none. The clock
 * is read only when a program will see the time (ncclbpf_rt_net_event): *now (may be NULL)
 * gets it, or 0; for ISEND/IRECV that is the request's posting time, which a completion passes
 * back as t0 (duration_ns = its time - t0; 0 when t0 is 0). stamp_after (may be NULL; posts):
 * set to 1 when only the completion needs the posting time; the caller then takes it with
 * net_now_ns() right after handing the request to the transport. While NCCLBPF_TRACE records,
 * every call is recorded (ncclbpf/trace.h), with a time read for it when no program needed one;
 * *now then gets that time, so that completions of the posts recorded have a duration. */
int net_hook(uint32_t op, const struct net_who *who, uint64_t bytes, int32_t tag, uint64_t t0,
	     uint64_t *now, uint64_t *ret, int *stamp_after);

/* A completion (op NCCLBPF_NET_COMPLETE or _RECV) of a request posted at t0: its time is taken
 * now and SEC("net/complete") runs later, off NCCL's path, from q (ncclbpf_rt_net_complete;
 * inline when q is NULL). Recorded like net_hook. */
struct ncclbpf_net_queue;
void net_complete(struct ncclbpf_net_queue *q, uint32_t op, const struct net_who *who,
		  uint64_t bytes, int32_t tag, uint64_t t0);

/* Token bucket of one connection (virtual-time form): a message of bytes at rate_mbps
 * (10^6 bytes/s) may start at the returned time; a connection idle for a while may send a burst
 * of up to NET_PACE_BURST_NS worth of bytes at once. An unpaced message (rate 0) starts now and
 * leaves the bucket as it was: small unpaced messages between paced ones neither cancel the
 * debt the paced ones built up (which would let the next one exceed its rate) nor add to it. */
#define NET_PACE_BURST_NS 200000ull
uint64_t net_pace(uint64_t *vt, uint64_t rate_mbps, uint64_t bytes, uint64_t now);

/* One WARN per process for the first refused peer, INFO for the next ones. */
void net_log_refusal(uint32_t op, const struct net_who *who);

#endif
