/* What the net folder (runtime/src/net/: the net hooks' hot path, posting stamps, deferred
 * completions) offers the folders above it. */
#ifndef NCCLBPF_NET_H
#define NCCLBPF_NET_H

#include "policy/policy.h"

/* net_tsc.c: TSC posting stamps (ncclbpf_rt_net_stamp). A stamp with RT_TSC_TAG set holds TSC
 * ticks, without it CLOCK_MONOTONIC ns; a completion converts whichever it gets. */
#define RT_TSC_TAG (1ull << 63)
struct rt_tsc_state {
	int on;
	uint64_t mult; /* ns per tick, 32.32 fixed point */
};
extern struct rt_tsc_state rt_tsc;
void rt_tsc_setup(void); /* once per process, at the first acquire (a 2 ms calibration) */
uint64_t rt_tsc_read(void);
uint64_t rt_tsc_ticks_to_ns(uint64_t ticks);

/* Both completions (send, receive) are served by SEC("net/complete"). */
static inline uint32_t rt_net_slot(uint32_t op)
{
	return op == NCCLBPF_NET_COMPLETE_RECV ? NCCLBPF_NET_COMPLETE - 1 : op - 1;
}

/* Runs one net hook's program on x (inside the caller's epoch section): 0 and r0 in *ret, or
 * -ENOENT when none is attached. */
static inline int rt_net_run_hook(const struct rt_hook *h, struct ncclbpf_net_ctx *x, uint64_t *ret)
{
	int err = 0;
	if (h->fn)
		*ret = h->fn((uint64_t)(uintptr_t)x, h->arg);
	else
		err = h->prog ? rt_bundle_run_interp_r0(h->prog, x, ret) : -ENOENT;
	if (err == 0)
		ncclbpf_rt__count_run(NCCLBPF_RT_RUNS_NET + rt_net_slot(x->op));
	return err;
}

/* net_defer.c: queues a completion whose time is filled in for a later run of SEC("net/complete")
 * (ncclbpf_rt_net_complete). Returns 0 when the caller must run it now (no queue, or the queue
 * is full and another thread is emptying it). */
int rt_net_defer(struct ncclbpf_net_queue *q, const struct ncclbpf_net_ctx *x);

#endif
