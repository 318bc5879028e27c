/* One collective as NCCL reports it to a profiler plugin with Coll|KernelCh enabled: Coll start
 * and stop on the launch thread, then per channel KernelCh start, the KernelChStop state with
 * the GPU end stamp, and stop. NCCL's own gate (one relaxed load of its activation mask and a
 * test) comes before every callback. Shared by `ncclbpf bench` and benchmarks/profiler. */
#ifndef NCCLBPF_PROF_DRIVE_H
#define NCCLBPF_PROF_DRIVE_H

#include <stdint.h>
#include <string.h>

#include "nccl_profiler.h"

#define PROF_DRIVE_CHANNELS 8
#define PROF_DRIVE_EVENTS   (1 + PROF_DRIVE_CHANNELS) /* per collective */

static inline void prof_drive_collective(const ncclProfiler_v5_t *t, void *ctx, const int *mask,
					 uint64_t seq)
{
	ncclProfilerEventDescr_v5_t d;
	void *coll = NULL;
	if (__atomic_load_n(mask, __ATOMIC_RELAXED) & ncclProfileColl) {
		memset(&d, 0, sizeof(d));
		d.type = ncclProfileColl;
		d.coll.seqNumber = seq;
		d.coll.func = "AllReduce";
		d.coll.count = 1 << 20;
		d.coll.datatype = "ncclFloat32";
		d.coll.nChannels = PROF_DRIVE_CHANNELS;
		d.coll.algo = "RING";
		d.coll.proto = "SIMPLE";
		t->startEvent(ctx, &coll, &d);
		t->stopEvent(coll);
	}
	if (!(__atomic_load_n(mask, __ATOMIC_RELAXED) & ncclProfileKernelCh))
		return;
	for (int c = 0; c < PROF_DRIVE_CHANNELS; c++) {
		void *h = NULL;
		memset(&d, 0, sizeof(d));
		d.type = ncclProfileKernelCh;
		d.parentObj = coll;
		d.kernelCh.channelId = (uint8_t)c;
		d.kernelCh.pTimer = seq * 100000 + (uint64_t)c;
		t->startEvent(ctx, &h, &d);
		ncclProfilerEventStateArgs_v5_t a = {.kernelCh = {.pTimer = seq * 100000 + 5000}};
		t->recordEventState(h, ncclProfilerKernelChStop, &a);
		t->stopEvent(h);
	}
}

#endif
