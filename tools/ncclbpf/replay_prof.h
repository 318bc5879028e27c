/* `ncclbpf replay` of profiler records (ncclbpf/trace.h): each recorded init, event start,
 * KernelChStop and stop is passed to the plugin's own ncclProfiler_v5 table, as NCCL passes it
 * (descriptors rebuilt from the record, recorded handles mapped to the ones the plugin returns
 * now, and, like NCCL, an event only when the activation mask the plugin set asks for it). So a
 * profiler program runs on the events of the recorded job, with the GPU timestamps NCCL gave. */
#ifndef NCCLBPF_REPLAY_PROF_H
#define NCCLBPF_REPLAY_PROF_H

#include <stdint.h>

#include "ncclbpf/trace.h"

struct replay_prof_counts {
	uint64_t comms;	   /* profiler contexts created */
	uint64_t colls;	   /* collectives started */
	uint64_t channels; /* kernel channels started */
	uint64_t proxies;  /* proxy operations started */
	uint64_t masked;   /* events the plugin's activation mask did not ask for */
	uint64_t orphans;  /* records naming a context or handle the replay does not know */
};

struct replay_prof;
/* The profiler side of a replay through the plugin dlopened as handle (NULL, with a message on
 * stderr, when it has no ncclProfiler_v5 table). log is passed to init as NCCL's logger. */
struct replay_prof *replay_prof_new(void *handle, void *log);
/* 1 when r is a profiler record (and was replayed), 0 when it is not. */
int replay_prof_record(struct replay_prof *rp, const struct ncclbpf_trace_rec *r);
/* Finalizes the contexts the trace left open and frees rp; counts (may be NULL) gets what was
 * replayed. */
void replay_prof_end(struct replay_prof *rp, struct replay_prof_counts *counts);
/* Is r a profiler record? */
int replay_prof_is_record(const struct ncclbpf_trace_rec *r);

#endif
