/* Version-independent core of the NCCL profiler adapter: per-communicator contexts, the
 * lifecycle of the events it tracks, and running the policy's SEC("profiler") program.
 *
 * Tracked events: collectives (Coll), their kernel channels (KernelCh) and, when the program
 * asks for them (SEC("profiler/proxy")), proxy operations (ProxyOp) of this process. A
 * collective's host-side stopEvent comes right after its start, long before the GPU ran it
 * (docs/design.md §6.8), so a collective is reference-counted: one reference for the host
 * side, one reserved per channel it announced (nChannels), one per proxy-operation child; its
 * record is released, and COLL_END delivered, when the last one is dropped. Kernel channels live
 * inside their collective's record (their handles point into it), so a channel event costs no
 * allocation and one atomic read-modify-write (its stop drops its reference). The program runs
 * on COLL_START, KERNEL_CH and COLL_END (and PROXY_OP when asked for); an event it does not
 * need (NCCLBPF_RT_PROF_END_ONLY, where the runtime defines it) builds no context and runs
 * nothing. Everything else NCCL may send
 * (groups, p2p, API and launch events, proxy steps/control, net plugin, CE events) is answered
 * with a NULL handle. Every function is safe to call concurrently from any thread and with any
 * handle value. */
#ifndef NCCLBPF_PROFILER_EVENTS_H
#define NCCLBPF_PROFILER_EVENTS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl_common.h"
#include "nccl_profiler.h"

struct prof_comm {
	uint64_t comm_id;
	uint32_t rank, n_ranks, n_nodes;
	uint32_t api;	 /* profiler interface version that created it */
	uint32_t serial; /* creation number in this process (trace records name it) */
	ncclDebugLogger_t log;
	_Atomic uint64_t colls;	    /* collectives tracked */
	_Atomic uint64_t colls_end; /* COLL_END delivered (GPU timing complete) */
	_Atomic uint64_t dropped;   /* events not tracked: pool empty */
	_Atomic uint64_t foreign;   /* proxy events of another process (PXN), ignored */
	_Atomic uint64_t orphans;   /* children whose parent was not a live collective */
	/* Built-in telemetry (ncclbpf/telemetry.h): where finished collectives are counted, NULL
	 * when telemetry is off or every slot is taken. */
	struct ncclbpf_telem_comm *telem;
};

/* NCCL activation mask bits the loaded policy and the built-in telemetry need (0 without a
 * profiler program and with telemetry off). Cheap: a cached copy refreshed on every policy
 * change. */
int prof_wanted_mask(void);
/* Re-reads the policy's needs and writes the mask to NCCL's mask int (if one is known). */
void prof_refresh(void);
/* Remembers NCCL's (process-global) mask int and writes the wanted mask to it. */
void prof_set_mask_ptr(int *mask);

struct prof_comm *prof_comm_new(uint64_t comm_id, const char *name, int rank, int n_ranks,
				int n_nodes, ncclDebugLogger_t log, uint32_t api);
/* Releases every record the communicator still holds, logs a one-line summary, frees it. */
void prof_comm_free(struct prof_comm *c);

void *prof_coll_start(struct prof_comm *c, uint64_t seq, const char *func, size_t count,
		      const char *datatype, uint8_t n_channels, const char *algo,
		      const char *proto);
void *prof_kch_start(struct prof_comm *c, void *parent, uint8_t channel, uint64_t gpu_start);
void *prof_proxy_start(struct prof_comm *c, void *parent, pid_t pid, uint8_t channel, int peer,
		       int n_steps, int chunk_size);
/* The communicator of a live event's handle (a collective, one of its channels, a proxy
 * operation), or NULL. */
const struct prof_comm *prof_comm_of_handle(const void *handle);

/* stopEvent and recordEventState themselves (the same in v4, v5 and v6), so that these two
 * callbacks, two thirds of all calls, reach the event code without a call in between.
 * recordEventState looks only at KernelChStop's GPU end time. */
ncclResult_t prof_stop(void *handle);
ncclResult_t prof_record_state(void *handle, ncclProfilerEventState_v4_t state,
			       ncclProfilerEventStateArgs_v4_t *args);

#endif
