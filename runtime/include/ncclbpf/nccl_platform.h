/* The NCCL platform of the engine (progtype.h): the program types of include/ncclbpf.h (tuner,
 * tuner/chunk, profiler, profiler/coll_end, profiler/proxy, net/<event>) with their context
 * tables, helper allow-lists and budgets. Everything that opens a policy object (the runtime,
 * the CLI, tests and benchmarks) opens it through these, so the engine itself stays generic. */
#ifndef NCCLBPF_NCCL_PLATFORM_H
#define NCCLBPF_NCCL_PLATFORM_H

#include <stddef.h>

#include "ebpf/object.h"
#include "ebpf/progtype.h"
#include "ncclbpf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The index of "complete/time_every=N" among the net type's names (ebpf_prog_type.names); the
 * events' names come first, at their NCCLBPF_NET_* number - 1. */
#define NCCLBPF_NET_NAME_SAMPLED 5

/* How a tuner program the runtime loads reads cost_ns (ebpf_ctx_from_f32): each read converts
 * the cell of NCCL's float table (microseconds, 7 x 3) to integer nanoseconds, or to
 * NCCLBPF_COST_NA where NCCL could not run the cell (NCCL's rule: >= 0 and below 3.6e9, NaN
 * neither). The table's address follows the context (struct ncclbpf_rt_tuner_ctx, runtime.h).
 * The adapter converts by the same description where it fills cost_ns itself. */
#define NCCLBPF_TUNER_CELLS_SRC_OFF sizeof(struct ncclbpf_tuner_ctx)
#define NCCLBPF_TUNER_CELLS_INIT                                                                   \
	{                                                                                          \
		.field_off = offsetof(struct ncclbpf_tuner_ctx, cost_ns),                          \
		.n = NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS,                                       \
		.src_off = NCCLBPF_TUNER_CELLS_SRC_OFF, .lo = 0.0f, .hi = 3.6e9f, .scale = 1000.0, \
		.none = NCCLBPF_COST_NA,                                                           \
	}
/* The description as a constant the compiler folds into an inline conversion. */
static inline const struct ebpf_ctx_from_f32 *ncclbpf_tuner_cells(void)
{
	static const struct ebpf_ctx_from_f32 cells = NCCLBPF_TUNER_CELLS_INIT;
	return &cells;
}

const struct ebpf_platform *ncclbpf_platform(void);
/* The NCCL program type called name ("tuner", "net", ...), or NULL. */
const struct ebpf_prog_type *ncclbpf_prog_type(const char *name);
/* ebpf_object__open_file / _mem with the NCCL platform (unless opts names another). */
struct ebpf_object *ncclbpf_object_open_file(const char *path,
					     const struct ebpf_object_open_opts *opts, char *err,
					     size_t err_len);
struct ebpf_object *ncclbpf_object_open_mem(const void *buf, size_t size,
					    const struct ebpf_object_open_opts *opts, char *err,
					    size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
