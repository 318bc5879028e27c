/* What the built-in telemetry (runtime/src/telem/) offers the folders above it. */
#ifndef NCCLBPF_TELEM_H
#define NCCLBPF_TELEM_H

#include <stddef.h>

/* telem_export.c: reads the telemetry configuration and starts the exporter thread when an
 * output is configured (first acquire); stops it (last release). */
void rt_telem_start(void);
void rt_telem_stop(void);
/* telem_maps.c: a bundle's exported maps (NCCLBPF_EXPORT_*) can be rendered: map names and key
 * members that would clash with labels every sample has are refused at load (why says which).
 * 0 or -EINVAL. */
struct ebpf_object;
int telem_check_exports(const struct ebpf_object *obj, char *why, size_t len);

#endif
