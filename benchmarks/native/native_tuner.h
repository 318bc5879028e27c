/* The skeleton of a native tuner plugin: what a C programmer writes against NCCL's tuner ABI
 * directly (NVIDIA's example tuner does the same: a context per communicator, the decision made
 * on NCCL's float table in place, a 0.0 cell forces a choice, *nChannels sets the channels).
 *
 * These plugins are the baselines `ncclbpf bench` measures libnccl-ncclbpf.so against: each
 * native_<policy>.c makes the decisions of one shipped policy, defines decide() and includes
 * this header once; it builds to its own libnccl-tuner-native-<policy>.so exporting
 * ncclTunerPlugin_v5, loaded and called exactly as NCCL (and the benchmark) loads ours.
 * Benchmarks, not product: no logging, no validation beyond what the decision itself needs. */
#ifndef NCCLBPF_NATIVE_TUNER_H
#define NCCLBPF_NATIVE_TUNER_H

#include <stdint.h>
#include <stdlib.h>

#include "nccl_tuner.h"

struct native_comm {
	uint64_t comm_id;
	size_t n_ranks, n_nodes;
};

/* 1 when NCCL could run cell (a, p) of a num_algo x num_proto table (>= 0, below 3.6e9). */
static inline int native_cell_ok(const float *t, int na, int np, int a, int p)
{
	if (a < 0 || p < 0 || a >= na || p >= np)
		return 0;
	float v = t[a * np + p];
	return v >= 0.0f && v < (float)NCCL_COST_MAX_US;
}

/* Forces cell (a, p) when NCCL can run it; 1 when it did. */
static inline int native_pick(float *t, int na, int np, int a, int p)
{
	if (!native_cell_ok(t, na, np, a, p))
		return 0;
	t[a * np + p] = 0.0f;
	return 1;
}

static void decide(const struct native_comm *c, ncclFunc_t coll, size_t n_bytes, float *t, int na,
		   int np, int *n_channels);

static ncclResult_t native_init(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
				ncclDebugLogger_t log, ncclNvlDomainInfo_v5_t *nvl,
				ncclTunerConstants_v5_t *constants)
{
	(void)log;
	(void)nvl;
	(void)constants;
	struct native_comm *c = calloc(1, sizeof(*c));
	if (c) {
		c->comm_id = comm_id;
		c->n_ranks = n_ranks;
		c->n_nodes = n_nodes;
	}
	*context = c;
	return ncclSuccess;
}

static ncclResult_t native_coll_info(void *context, ncclFunc_t coll, size_t n_bytes,
				     int num_pipe_ops, float **cost_table, int num_algo,
				     int num_proto, int reg_buff, int *n_channels)
{
	(void)num_pipe_ops;
	(void)reg_buff;
	if (context && cost_table)
		decide(context, coll, n_bytes, (float *)cost_table, num_algo, num_proto,
		       n_channels);
	return ncclSuccess;
}

static ncclResult_t native_finalize(void *context)
{
	free(context);
	return ncclSuccess;
}

__attribute__((visibility("default"))) const ncclTuner_v5_t ncclTunerPlugin_v5 = {
    .name = "native",
    .init = native_init,
    .getCollInfo = native_coll_info,
    .finalize = native_finalize,
};

#endif
