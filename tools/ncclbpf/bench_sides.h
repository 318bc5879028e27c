/* The sides `ncclbpf bench` measures (bench_ab.h runs them interleaved): a tuner or profiler
 * plugin library, loaded as NCCL loads it (plugin_host.h), with one communicator context, driven
 * through its exported table. Our library gets its policy through NCCLBPF_POLICY at init, as in
 * a job; a native baseline decides by itself. */
#ifndef NCCLBPF_BENCH_SIDES_H
#define NCCLBPF_BENCH_SIDES_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_profiler.h"
#include "nccl_tuner.h"
#include "plugin_host.h"

/* One getCollInfo call of a trace: NCCL's 7 x 3 cost table for a collective and size. */
struct bench_rec {
	int coll;
	size_t bytes;
	float table[21];
};

/* Reads the CALL records with 7 x 3 tables of a trace (trace.h). Returns 0, or -1 with one line
 * on stderr (unreadable, or no such record). */
int bench_load_trace(const char *path, struct bench_rec **recs, size_t *n);

struct tuner_side {
	struct plugin_host h;
	void *ctx;
	const struct bench_rec *recs;
	size_t n_recs, pos;
};

/* Loads lib, sets NCCLBPF_POLICY to policy (NULL: unset) and NCCLBPF_ENGINE, and creates one
 * communicator context. Returns 0, or -1 when the library does not load or reports that the
 * policy did not load (its WARN is in the plugin host's log). */
int tuner_side_open(struct tuner_side *s, const char *lib, const char *policy, const char *engine,
		    const struct bench_rec *recs, size_t n_recs);
/* bench_ab's round: `calls` getCollInfo calls cycling through the trace, each on a fresh copy
 * of the record's table (NCCL fills the table before every call). */
int tuner_side_round(void *arg, long calls);
/* What a getCollInfo call decided: the cell NCCL then runs (nccl_cost_winner; -1, -1 when none
 * is valid) and the channel count (0: left to NCCL). */
struct tuner_decision {
	int algo, proto, channels;
};
/* One call on record r (its own copy of the table), outside any round. */
void tuner_side_decide(struct tuner_side *s, const struct bench_rec *r, struct tuner_decision *d);
void tuner_side_close(struct tuner_side *s);

struct prof_side {
	void *handle;
	const ncclProfiler_v5_t *t;
	void *ctx;
	int mask; /* this side's NCCL activation mask */
	uint64_t seq;
};

/* Loads lib (exporting ncclProfiler_v5) with NCCLBPF_POLICY = policy (NULL: unset) and creates
 * one communicator context. Returns 0, or -1 as tuner_side_open. */
int prof_side_open(struct prof_side *s, const char *lib, const char *policy);
/* bench_ab's round: `calls` collectives as NCCL reports them (prof_drive.h: PROF_DRIVE_EVENTS
 * events each). */
int prof_side_round(void *arg, long calls);
void prof_side_close(struct prof_side *s);

#endif
