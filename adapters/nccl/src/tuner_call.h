/* getCollInfo, the tuner's per-call path (tuner_call.c), for the exported tables (tuner.c). */
#ifndef NCCLBPF_TUNER_CALL_H
#define NCCLBPF_TUNER_CALL_H

#include <stddef.h>

#include "nccl_tuner.h"

/* getCollInfo of the v4..v6 tables (v3 passes reg_buff 0): every path returns ncclSuccess. */
__attribute__((visibility("hidden"))) ncclResult_t
tuner_coll_info(void *context, ncclFunc_t coll_type, size_t n_bytes, int num_pipe_ops,
		float **cost_table, int num_algo, int num_proto, int reg_buff, int *n_channels);

#endif
