/* Profiler event streams shaped as NCCL sends them (docs/design.md §6.8), for the exported
 * ncclProfiler_v4 (2.27), _v5 (2.28; 2.29 through its v5 shim) and _v6 (2.29/2.30) tables.
 * The descriptors are filled exactly as each release lays them out; handles are whatever the
 * plugin returned, passed back as NCCL passes them (parentObj). */
#ifndef NCCLBPF_TEST_PROF_STREAM_H
#define NCCLBPF_TEST_PROF_STREAM_H

#include <string.h>
#include <unistd.h>

#include "nccl_profiler.h"

struct prof_api {
	int version; /* 4, 5 or 6 */
	const ncclProfiler_v4_t *v4;
	const ncclProfiler_v5_t *v5;
	const ncclProfiler_v6_t *v6;
};

/* The three tables share stop/record/finalize signatures; start and init differ. */
static inline ncclResult_t ps_init(const struct prof_api *a, void **ctx, int *mask,
				   uint64_t comm_id, int n_nodes, int n_ranks, int rank,
				   ncclDebugLogger_t log)
{
	switch (a->version) {
	case 4:
		return a->v4->init(ctx, mask, "test", comm_id, n_nodes, n_ranks, rank, log);
	case 5:
		return a->v5->init(ctx, comm_id, mask, "test", n_nodes, n_ranks, rank, log);
	default:
		return a->v6->init(ctx, comm_id, mask, NULL, n_nodes, n_ranks, rank, log);
	}
}

static inline ncclResult_t ps_finalize(const struct prof_api *a, void *ctx)
{
	return a->v4->finalize(ctx); /* same function in every table */
}

/* Starts an event from a v6-shaped descriptor (a superset of v5; v4 copies the members it has,
 * with its 8-bit type). Returns the handle (the plugin's answer). */
static inline void *ps_start(const struct prof_api *a, void *ctx, ncclProfilerEventDescr_v6_t *d)
{
	void *h = (void *)0x5a5a; /* must be overwritten on every path */
	if (a->version == 6) {
		a->v6->startEvent(ctx, &h, d);
	} else if (a->version == 5) {
		ncclProfilerEventDescr_v5_t d5;
		memcpy(&d5, d, sizeof(d5)); /* same layout, minus the CE members */
		a->v5->startEvent(ctx, &h, &d5);
	} else {
		ncclProfilerEventDescr_v4_t d4;
		memset(&d4, 0, sizeof(d4));
		d4.type = (uint8_t)d->type;
		d4.parentObj = d->parentObj;
		d4.rank = d->rank;
		/* Every v4 union member has the v5/v6 offsets (nccl_profiler.h); coll is the
		 * largest without parentGroup. */
		memcpy((char *)&d4 + 24, (const char *)d + 24, sizeof(d4) - 24);
		a->v4->startEvent(ctx, &h, &d4);
	}
	return h;
}

static inline void ps_stop(const struct prof_api *a, void *h)
{
	a->v4->stopEvent(h);
}

static inline void ps_record(const struct prof_api *a, void *h, ncclProfilerEventState_t s,
			     ncclProfilerEventStateArgs_v4_t *args)
{
	a->v4->recordEventState(h, s, args);
}

static inline void *ps_simple(const struct prof_api *a, void *ctx, uint64_t type, void *parent,
			      int rank)
{
	ncclProfilerEventDescr_v6_t d;
	memset(&d, 0, sizeof(d));
	d.type = type;
	d.parentObj = parent;
	d.rank = rank;
	return ps_start(a, ctx, &d);
}

/* Host side of one collective as hostStreamPlanTask emits it: (v5+: GroupApi, CollApi, API stop,
 * KernelLaunch,) Group, Coll, stop Coll, stop Group. Returns the Coll handle. */
static inline void *ps_coll_host(const struct prof_api *a, void *ctx, int rank, uint64_t seq,
				 const char *func, size_t count, const char *dtype, int n_channels,
				 const char *algo, const char *proto)
{
	void *gapi = NULL, *capi = NULL;
	if (a->version >= 5) {
		ncclProfilerEventDescr_v6_t d;
		memset(&d, 0, sizeof(d));
		d.type = ncclProfileGroupApi;
		d.rank = rank;
		d.groupApi.groupDepth = 1;
		gapi = ps_start(a, ctx, &d);
		memset(&d, 0, sizeof(d));
		d.type = ncclProfileCollApi;
		d.parentObj = gapi;
		d.rank = rank;
		d.collApi.func = func;
		d.collApi.count = count;
		d.collApi.datatype = dtype;
		capi = ps_start(a, ctx, &d);
		ps_stop(a, capi);
		ps_record(a, gapi, ncclProfilerGroupEndApiStart, NULL);
		void *kl = ps_simple(a, ctx, ncclProfileKernelLaunch, gapi, rank);
		ps_stop(a, kl);
	}
	void *grp = ps_simple(a, ctx, ncclProfileGroup, a->version >= 5 ? gapi : NULL, rank);
	ncclProfilerEventDescr_v6_t d;
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileColl;
	d.parentObj = a->version >= 5 ? capi : grp;
	d.rank = rank;
	d.coll.seqNumber = seq;
	d.coll.func = func;
	d.coll.count = count;
	d.coll.datatype = dtype;
	d.coll.nChannels = (uint8_t)n_channels;
	d.coll.nWarps = 16;
	d.coll.algo = algo;
	d.coll.proto = proto;
	if (a->version >= 5)
		d.coll.parentGroup = grp;
	void *coll = ps_start(a, ctx, &d);
	ps_stop(a, coll); /* host side done right away, long before the GPU ran it */
	ps_stop(a, grp);
	if (a->version >= 5)
		ps_stop(a, gapi);
	return coll;
}

/* One kernel channel as the proxy thread reports it: start with the GPU start time, KernelChStop
 * with the GPU end time, stop. */
static inline void ps_kch(const struct prof_api *a, void *ctx, void *coll, int rank, int ch,
			  uint64_t gpu_start, uint64_t gpu_end)
{
	ncclProfilerEventDescr_v6_t d;
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileKernelCh;
	d.parentObj = coll;
	d.rank = rank;
	d.kernelCh.channelId = (uint8_t)ch;
	d.kernelCh.pTimer = gpu_start;
	void *h = ps_start(a, ctx, &d);
	ncclProfilerEventStateArgs_v4_t args = {.kernelCh = {.pTimer = gpu_end}};
	ps_record(a, h, ncclProfilerKernelChStop, &args);
	ps_stop(a, h);
}

/* Proxy-thread noise NCCL interleaves: ProxyCtrl state changes (no parent). */
static inline void ps_proxy_ctrl(const struct prof_api *a, void *ctx, int rank)
{
	void *h = ps_simple(a, ctx, ncclProfileProxyCtrl, NULL, rank);
	ncclProfilerEventStateArgs_v4_t args = {.proxyCtrl = {.appendedProxyOps = 2}};
	ps_record(a, h, ncclProfilerProxyCtrlAppend, &args);
	ps_record(a, h, ncclProfilerProxyCtrlAppendEnd, &args);
	ps_stop(a, h);
}

/* A ProxyOp (with one ProxyStep child) as the proxy thread reports it; pid may be another
 * process's (PXN). Returns the ProxyOp handle the plugin gave (already stopped). */
static inline void *ps_proxy_op(const struct prof_api *a, void *ctx, void *coll, int rank,
				pid_t pid, int ch, int peer, int steps, int chunk)
{
	ncclProfilerEventDescr_v6_t d;
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileProxyOp;
	d.parentObj = coll;
	d.rank = rank;
	d.proxyOp.pid = pid;
	d.proxyOp.channelId = (uint8_t)ch;
	d.proxyOp.peer = peer;
	d.proxyOp.nSteps = steps;
	d.proxyOp.chunkSize = chunk;
	d.proxyOp.isSend = 1;
	void *op = ps_start(a, ctx, &d);
	ps_record(a, op, ncclProfilerProxyOpInProgress_v4, NULL);
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileProxyStep;
	d.parentObj = op;
	d.rank = rank;
	d.proxyStep.step = 0;
	void *st = ps_start(a, ctx, &d);
	ncclProfilerEventStateArgs_v4_t args = {.proxyStep = {.transSize = (size_t)chunk}};
	ps_record(a, st, ncclProfilerProxyStepSendGPUWait, &args);
	ps_record(a, st, ncclProfilerProxyStepSendWait, &args);
	ps_stop(a, st);
	ps_stop(a, op);
	return op;
}

/* v6 copy-engine collective (2.29+): start/stop only, no state records, no KernelCh. */
static inline void ps_ce_coll(const struct prof_api *a, void *ctx, int rank, uint64_t seq)
{
	ncclProfilerEventDescr_v6_t d;
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileCeColl;
	d.rank = rank;
	d.ceColl.seqNumber = seq;
	d.ceColl.func = "AllGather";
	d.ceColl.count = 1024;
	d.ceColl.datatype = "ncclFloat32";
	d.ceColl.syncStrategy = "barrier";
	void *h = ps_start(a, ctx, &d);
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileCeSync;
	d.parentObj = h;
	d.ceCollSync.nRanks = 4;
	void *s = ps_start(a, ctx, &d);
	ps_stop(a, s);
	ps_stop(a, h);
}

#endif
