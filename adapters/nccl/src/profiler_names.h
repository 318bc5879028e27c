/* NCCL's profiler descriptors name the collective, algorithm, protocol and datatype by string
 * (docs/design.md §6.9); policies see the numeric ids of ncclbpf.h. */
#ifndef NCCLBPF_PROFILER_NAMES_H
#define NCCLBPF_PROFILER_NAMES_H

#include <stdint.h>

/* ncclFunc_t value (NCCLBPF_COLL_* for the five collectives), 0xffffffff when unknown. */
uint32_t prof_func_id(const char *s);
/* NCCLBPF_ALGO_* / NCCLBPF_PROTO_*, -1 when unknown or NULL. */
int32_t prof_algo_id(const char *s);
int32_t prof_proto_id(const char *s);
/* Bytes per element; 1 for "Unknown" (NCCL prints ncclUint8 so), 0 when unrecognised. */
uint32_t prof_type_size(const char *s);

#endif
