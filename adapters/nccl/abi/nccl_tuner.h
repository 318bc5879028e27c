/* NCCL tuner plugin interface, versions 3 to 6, vendored as ABI facts from NVIDIA/nccl
 * src/include/plugin/tuner/tuner_v{3,4,5,6}.h (v3: v2.22.3-1, v4: v2.24.3-1, v5: v2.28.9-1,
 * v6: v2.30.7-1), transcribed in docs/design.md §6.14.
 *
 * NCCL finds the table by symbol name only (ncclTunerPlugin_vN) and trusts that the name
 * implies the layout, so every size and offset is pinned below. Note the cost table: NCCL
 * passes float[numAlgo][numProto] cast to float**; index it as ((float *)t)[a * numProto + p]. */
#ifndef NCCLBPF_NCCL_TUNER_H
#define NCCLBPF_NCCL_TUNER_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_common.h"

/* Algorithm and protocol ids (cost table row and column). NCCL_NUM_ALGORITHMS was 6 up to
 * 2.22 (no PAT) and is 7 since 2.23.4; 3 protocols in every release. */
#define NCCL_ALGO_UNDEF		 -1
#define NCCL_ALGO_TREE		 0
#define NCCL_ALGO_RING		 1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN	 3
#define NCCL_ALGO_NVLS		 4
#define NCCL_ALGO_NVLS_TREE	 5
#define NCCL_ALGO_PAT		 6
#define NCCL_PROTO_UNDEF	 -1
#define NCCL_PROTO_LL		 0
#define NCCL_PROTO_LL128	 1
#define NCCL_PROTO_SIMPLE	 2
#define NCCL_ALGO_PROTO_IGNORE	 -1.0

/* How NCCL reads a cost table (topoGetAlgoInfo): a cell it could run is >= 0 and below 3.6e9
 * (NaN is neither); it runs the cheapest such cell, the first in algorithm-major order on a
 * tie. The plugin's decision rules and the CLI's replay both read the table so. */
static inline int nccl_cost_cell_valid(float v)
{
	return v >= 0.0f && v < 3.6e9f;
}

/* The cell NCCL would run of t[na][np] if only algorithm algo ran (proto: only protocol proto;
 * < 0: any): 0 with *oa and *op set, or -1 (both -1) when no such cell is valid. */
static inline int nccl_cost_winner_along(const float *t, int na, int np, int algo, int proto,
					 int *oa, int *op)
{
	int found = 0;
	float best = 0;
	*oa = *op = -1;
	for (int a = 0; a < na; a++) {
		if (algo >= 0 && a != algo)
			continue;
		for (int p = 0; p < np; p++) {
			float v = t[a * np + p];
			if ((proto < 0 || p == proto) && nccl_cost_cell_valid(v) &&
			    (!found || v < best)) {
				best = v;
				*oa = a;
				*op = p;
				found = 1;
			}
		}
	}
	return found ? 0 : -1;
}

/* The cell NCCL will run of t[na][np]: 0 with *algo and *proto set, or -1 (both -1) when no
 * cell is valid. */
static inline int nccl_cost_winner(const float *t, int na, int np, int *algo, int *proto)
{
	return nccl_cost_winner_along(t, na, np, -1, -1, algo, proto);
}
/* NCCL only picks cells >= 0 and below this (topoGetAlgoInfo). */
#define NCCL_COST_MAX_US  3.6e9
#define NCCL_MAX_CHANNELS 64

/* --- v3 (2.22.3+) ------------------------------------------------------------------------- */
typedef struct {
	const char *name;
	ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
			     void **context);
	ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes,
				    int numPipeOps, float **collCostTable, int numAlgo,
				    int numProto, int *nChannels);
	ncclResult_t (*destroy)(void *context);
} ncclTuner_v3_t;

/* --- v4 (2.24.3+): adds regBuff ------------------------------------------------------------ */
typedef struct {
	const char *name;
	ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
			     void **context);
	ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes,
				    int numPipeOps, float **collCostTable, int numAlgo,
				    int numProto, int regBuff, int *nChannels);
	ncclResult_t (*destroy)(void *context);
} ncclTuner_v4_t;

/* --- v5 (2.28.3+): per-communicator id, NVL domain info, editable model constants ----------- */
typedef struct {
	int nNvlDomains;
	int minRanksPerNvlDomain;
	int maxRanksPerNvlDomain;
} ncclNvlDomainInfo_v5_t;

#define NCCL_NUM_ALGORITHMS_V5	  7
#define NCCL_NUM_PROTOCOLS_V5	  3
#define NCCL_NUM_HW_LINKS_V5	  3
#define NCCL_NUM_COMPCAPS_V5	  4
#define NCCL_NUM_TUNING_SCALES_V5 3

typedef struct {
	double baseLatencies[NCCL_NUM_ALGORITHMS_V5][NCCL_NUM_PROTOCOLS_V5];
	double hwLatencies[NCCL_NUM_HW_LINKS_V5][NCCL_NUM_ALGORITHMS_V5][NCCL_NUM_PROTOCOLS_V5];
	double llMaxBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES_V5];
	double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES_V5];
	double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES_V5];
	double perChMaxTreeBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES_V5];
	double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES_V5];
} ncclTunerConstants_v5_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
			     ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
			     ncclTunerConstants_v5_t *constants);
	ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes,
				    int numPipeOps, float **collCostTable, int numAlgo,
				    int numProto, int regBuff, int *nChannels);
	ncclResult_t (*finalize)(void *context);
} ncclTuner_v5_t;

/* --- v6 (2.30.3+): v5 plus getChunkSize (may be NULL) -------------------------------------- */
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v6_t;
typedef ncclTunerConstants_v5_t ncclTunerConstants_v6_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
			     ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v6_t *nvlDomainInfo,
			     ncclTunerConstants_v6_t *constants);
	ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes,
				    int numPipeOps, float **collCostTable, int numAlgo,
				    int numProto, int regBuff, int *nChannels);
	ncclResult_t (*finalize)(void *context);
	ncclResult_t (*getChunkSize)(void *context, ncclFunc_t collType, size_t nBytes, int algo,
				     int proto, int nChannels, size_t *chunkSize);
} ncclTuner_v6_t;

/* --- Layout pins (LP64; docs/design.md §6.14) ------------------------------------------ */
_Static_assert(sizeof(void *) == 8, "the vendored layouts are LP64");
_Static_assert(sizeof(ncclTuner_v3_t) == 32, "tuner v3 is 32 bytes");
_Static_assert(sizeof(ncclTuner_v4_t) == 32, "tuner v4 is 32 bytes");
_Static_assert(sizeof(ncclTuner_v5_t) == 32, "tuner v5 is 32 bytes");
_Static_assert(sizeof(ncclTuner_v6_t) == 40, "tuner v6 is 40 bytes");
_Static_assert(offsetof(ncclTuner_v3_t, init) == 8, "tuner v3 layout");
_Static_assert(offsetof(ncclTuner_v3_t, getCollInfo) == 16, "tuner v3 layout");
_Static_assert(offsetof(ncclTuner_v3_t, destroy) == 24, "tuner v3 layout");
_Static_assert(offsetof(ncclTuner_v4_t, getCollInfo) == 16, "tuner v4 layout");
_Static_assert(offsetof(ncclTuner_v4_t, destroy) == 24, "tuner v4 layout");
_Static_assert(offsetof(ncclTuner_v5_t, getCollInfo) == 16, "tuner v5 layout");
_Static_assert(offsetof(ncclTuner_v5_t, finalize) == 24, "tuner v5 layout");
_Static_assert(offsetof(ncclTuner_v6_t, finalize) == 24, "tuner v6 layout");
_Static_assert(offsetof(ncclTuner_v6_t, getChunkSize) == 32, "tuner v6 layout");
_Static_assert(sizeof(ncclNvlDomainInfo_v5_t) == 12, "nvl domain info is 12 bytes");
_Static_assert(sizeof(ncclTunerConstants_v5_t) == 1152, "tuner constants are 1152 bytes");
_Static_assert(offsetof(ncclTunerConstants_v5_t, hwLatencies) == 168, "tuner constants layout");
_Static_assert(offsetof(ncclTunerConstants_v5_t, llMaxBws) == 672, "tuner constants layout");
_Static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxRingLL128Bws) == 768,
	       "tuner constants layout");
_Static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxTreeLL128Bws) == 864,
	       "tuner constants layout");
_Static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxTreeBws) == 960, "tuner constants layout");
_Static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws) == 1056,
	       "tuner constants layout");

#endif
