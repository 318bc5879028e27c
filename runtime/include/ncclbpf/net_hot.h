/* The net adapter's hot path (adapters/nccl/src/net_hooks.c), defined next to
 * ncclbpf_rt_run_net in runtime/src/run_net.c. Kept out of runtime.h only while that header is
 * being changed elsewhere; it belongs there. */
#ifndef NCCLBPF_NET_HOT_H
#define NCCLBPF_NET_HOT_H

#include "ncclbpf/runtime.h"

/* Runs the active policy's program for x->op on x, in one epoch section, and reads the clock
 * only when something will see the time:
 * - *now and x->time_ns are the CLOCK_MONOTONIC time in ns when a program runs for x->op, or,
 *   for ISEND and IRECV, when a SEC("net/complete") program is attached (its duration needs
 *   the posting time); otherwise 0. The caller keeps *now as the request's posting time.
 * - for completions, x->duration_ns = time_ns - t0, or 0 when t0 is 0 (the request was posted
 *   while no program needed a time: one was attached since).
 * The caller fills every other field; x is its scratch copy, and the program runs on it
 * directly (no second copy: every net context field is read-only to programs, verifier). *now
 * comes from a local, whatever the program does. Returns 0 and the program's r0 in *ret when
 * a program ran, -ENOENT when none is attached for the op, -EINVAL for an unknown op. */
int ncclbpf_rt_net_event(struct ncclbpf_net_ctx *x, uint64_t t0, uint64_t *now, uint64_t *ret);

#endif
