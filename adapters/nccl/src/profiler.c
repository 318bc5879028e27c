/* NCCL profiler adapter: the exported ncclProfiler_v4, _v5 and _v6 tables (NCCL 2.27-2.30;
 * docs/design.md §6.1, §6.7). Each version's descriptor is read with its own layout and
 * handed to the version-independent core (profiler_events.c).
 *
 * Activation mask: exactly what the active policy's profiler program and the built-in telemetry
 * need, nothing when neither is there, so that a bundle without a profiler program costs NCCL
 * nothing with telemetry off (it emits no events at all with a zero mask). NCCL's mask is one
 * process-global int whose address every init passes; it is rewritten whenever a reload changes
 * what the policy needs.
 *
 * Every entry point returns ncclSuccess on every path (NCCL ignores profiler errors except from
 * init, after which it would keep calling us with whatever context we left). */
#include <stddef.h>

#include "log.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/telemetry.h"
#include "ncclbpf/trace.h"
#include "nccl_profiler.h"
#include "profiler_events.h"
#include "profiler_trace.h"

#define EXPORT __attribute__((visibility("default")))

/* Once per process, at INFO: a profiler without a policy (and without telemetry) only costs
 * NCCL an event mask of 0. */
static void note_policy(void)
{
	static int said;
	enum ncclbpf_policy_state st = ncclbpf_rt_policy_state();
	if (st == NCCLBPF_POLICY_ACTIVE || ncclbpf_telem_enabled() ||
	    __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	ncclbpf_rt_log(NCCLBPF_LOG_INFO, "NCCLbpf profiler: %s; no profiler program runs",
		       st == NCCLBPF_POLICY_UNSET ? "NCCLBPF_POLICY is not set, no policy loaded"
						  : "no policy active");
}

static ncclResult_t init_common(void **context, int *mask, uint64_t comm_id, const char *name,
				int n_nodes, int n_ranks, int rank, ncclDebugLogger_t log,
				uint32_t api)
{
	if (!context) {
		if (mask)
			*mask = 0;
		return ncclSuccess;
	}
	adapter_set_logger(log);
	/* The first communicator loads the bundle (the profiler's init runs before the tuner's). */
	ncclbpf_rt_acquire();
	note_policy();
	ncclbpf_rt_add_activate_listener(prof_refresh);
	struct prof_comm *c = prof_comm_new(comm_id, name, rank, n_ranks, n_nodes, log, api);
	*context = c;
	if (!c) {
		ncclbpf_rt_release();
		if (mask)
			*mask = 0; /* out of memory: ask for nothing */
		return ncclSuccess;
	}
	prof_set_mask_ptr(mask);
	if (ncclbpf_trace_on())
		prof_trace_comm(c, NCCLBPF_TRACE_PINIT);
	return ncclSuccess;
}

static ncclResult_t finalize(void *context)
{
	if (context) {
		if (ncclbpf_trace_on())
			prof_trace_comm(context, NCCLBPF_TRACE_PFINI);
		prof_comm_free(context);
		ncclbpf_rt_release();
	}
	return ncclSuccess;
}

/* The members read below sit at the same offsets in all three descriptors (static asserts in
 * nccl_profiler.h); only the type field's width differs. */
#define START_EVENT(D, TYPE)                                                                       \
	do {                                                                                       \
		void *h = NULL;                                                                    \
		struct prof_comm *c = context;                                                     \
		if (!eHandle)                                                                      \
			return ncclSuccess;                                                        \
		if (c && D) {                                                                      \
			switch (TYPE) {                                                            \
			case ncclProfileColl:                                                      \
				h = prof_coll_start(c, D->coll.seqNumber, D->coll.func,            \
						    D->coll.count, D->coll.datatype,               \
						    D->coll.nChannels, D->coll.algo,               \
						    D->coll.proto);                                \
				if (h && __builtin_expect(ncclbpf_trace_on(), 0))                  \
					prof_trace_coll(c, h, D->coll.seqNumber, D->coll.func,     \
							D->coll.count, D->coll.datatype,           \
							D->coll.nChannels, D->coll.algo,           \
							D->coll.proto);                            \
				break;                                                             \
			case ncclProfileKernelCh:                                                  \
				h = prof_kch_start(c, D->parentObj, D->kernelCh.channelId,         \
						   D->kernelCh.pTimer);                            \
				if (h && __builtin_expect(ncclbpf_trace_on(), 0))                  \
					prof_trace_kch(c, h, D->parentObj, D->kernelCh.channelId,  \
						       D->kernelCh.pTimer);                        \
				break;                                                             \
			case ncclProfileProxyOp:                                                   \
				h = prof_proxy_start(c, D->parentObj, D->proxyOp.pid,              \
						     D->proxyOp.channelId, D->proxyOp.peer,        \
						     D->proxyOp.nSteps, D->proxyOp.chunkSize);     \
				if (h && __builtin_expect(ncclbpf_trace_on(), 0))                  \
					prof_trace_proxy(c, h, D->parentObj, D->proxyOp.pid,       \
							 D->proxyOp.channelId, D->proxyOp.peer,    \
							 D->proxyOp.nSteps, D->proxyOp.chunkSize); \
				break;                                                             \
			default:                                                                   \
				/* Group, P2p, ProxyStep, ProxyCtrl, NetPlugin, API, launch and    \
				 * CE events: not needed by any program; NULL handles are how      \
				 * NCCL's own example plugin declines an event. */                 \
				break;                                                             \
			}                                                                          \
		}                                                                                  \
		*eHandle = h;                                                                      \
		return ncclSuccess;                                                                \
	} while (0)

static ncclResult_t start_v4(void *context, void **eHandle, ncclProfilerEventDescr_v4_t *d)
{
	START_EVENT(d, d->type);
}

static ncclResult_t start_v5(void *context, void **eHandle, ncclProfilerEventDescr_v5_t *d)
{
	START_EVENT(d, d->type);
}

static ncclResult_t start_v6(void *context, void **eHandle, ncclProfilerEventDescr_v6_t *d)
{
	START_EVENT(d, d->type);
}

static ncclResult_t init_v4(void **context, int *mask, const char *comm_name, uint64_t comm_hash,
			    int n_nodes, int n_ranks, int rank, ncclDebugLogger_t log)
{
	return init_common(context, mask, comm_hash, comm_name, n_nodes, n_ranks, rank, log, 4);
}

static ncclResult_t init_v5(void **context, uint64_t comm_id, int *mask, const char *comm_name,
			    int n_nodes, int n_ranks, int rank, ncclDebugLogger_t log)
{
	return init_common(context, mask, comm_id, comm_name, n_nodes, n_ranks, rank, log, 5);
}

static ncclResult_t init_v6(void **context, uint64_t comm_id, int *mask, const char *comm_name,
			    int n_nodes, int n_ranks, int rank, ncclDebugLogger_t log)
{
	return init_common(context, mask, comm_id, comm_name, n_nodes, n_ranks, rank, log, 6);
}

/* stopEvent and recordEventState: traced here, as the starts are above, before the event code
 * retires the handle (the trace names the handle's communicator). */
static ncclResult_t stop_event(void *handle)
{
	if (__builtin_expect(ncclbpf_trace_on(), 0))
		prof_trace_stop(handle);
	return prof_stop(handle);
}

static ncclResult_t record_state(void *handle, ncclProfilerEventState_v4_t state,
				 ncclProfilerEventStateArgs_v4_t *args)
{
	if (__builtin_expect(ncclbpf_trace_on(), 0) && state == ncclProfilerKernelChStop && args)
		prof_trace_kch_end(handle, args->kernelCh.pTimer);
	return prof_record_state(handle, state, args);
}

/* NCCL's profiler tables ncclProfiler_v4, _v5 and _v6: the same functions but each version's
 * init and startEvent (their argument layouts differ). */
#define PROFILER_TABLE(v)                                                                          \
	EXPORT const ncclProfiler_v##v##_t ncclProfiler_v##v = {                                   \
	    .name = "NCCLbpf",                                                                     \
	    .init = init_v##v,                                                                     \
	    .startEvent = start_v##v,                                                              \
	    .stopEvent = stop_event,                                                               \
	    .recordEventState = record_state,                                                      \
	    .finalize = finalize,                                                                  \
	}
PROFILER_TABLE(4);
PROFILER_TABLE(5);
PROFILER_TABLE(6);
