/* The NCCL platform of the engine (progtype.h): the program types of include/ncclbpf.h (tuner,
 * tuner/chunk, profiler, profiler/coll_end, profiler/proxy, net/<event>) with their context
 * tables, helper allow-lists and budgets. Everything that opens a policy object (the runtime,
 * the CLI, tests and benchmarks) opens it through these, so the engine itself stays generic. */
#ifndef NCCLBPF_NCCL_PLATFORM_H
#define NCCLBPF_NCCL_PLATFORM_H

#include <stddef.h>

#include "ebpf/object.h"
#include "ebpf/progtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The index of "complete/time_every=N" among the net type's names (ebpf_prog_type.names); the
 * events' names come first, at their NCCLBPF_NET_* number - 1. */
#define NCCLBPF_NET_NAME_SAMPLED 5

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
