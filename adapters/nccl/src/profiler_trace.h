/* Recording the profiler events the plugin tracks (NCCLBPF_TRACE, format in ncclbpf/trace.h), so
 * that `ncclbpf replay` can pass the same calls to the same entry points offline. Each function
 * is called only while recording is on (ncclbpf_trace_on()); none allocates or blocks beyond one
 * write(2). */
#ifndef NCCLBPF_PROFILER_TRACE_H
#define NCCLBPF_PROFILER_TRACE_H

#include <stdint.h>
#include <sys/types.h>

#include "profiler_events.h"

void prof_trace_comm(const struct prof_comm *c, int kind); /* pinit / pfini */
void prof_trace_coll(const struct prof_comm *c, const void *h, uint64_t seq, const char *func,
		     uint64_t count, const char *dtype, uint8_t n_channels, const char *algo,
		     const char *proto);
void prof_trace_kch(const struct prof_comm *c, const void *h, const void *parent, uint8_t channel,
		    uint64_t gpu_start);
void prof_trace_proxy(const struct prof_comm *c, const void *h, const void *parent, pid_t pid,
		      uint8_t channel, int peer, int n_steps, int chunk_size);
/* stopEvent and KernelChStop of a handle the plugin gave (ignored when it names no live event:
 * the plugin ignores such calls too). Call before the event code sees the call. */
void prof_trace_stop(const void *h);
void prof_trace_kch_end(const void *h, uint64_t gpu_end);

#endif
