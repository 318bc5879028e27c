/* Every element of a map as a user sees it (runtime/src/base/map_walk.c): a reload's map
 * carry-over, `ncclbpf map dump`, the telemetry's exported maps and `ncclbpf test-run`'s map
 * snapshots all walk maps so. */
#ifndef NCCLBPF_MAP_WALK_H
#define NCCLBPF_MAP_WALK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ebpf_map;

typedef int (*ncclbpf_map_elem_fn)(const void *key, const void *value, void *arg);

/* Calls fn(key, value, arg) for each element of m in ebpf_map__get_next_key order, the value as
 * ebpf_map__user_lookup gives it (a per-CPU map: every CPU's slot); an element deleted between
 * the two calls is skipped. At most limit keys (0: no limit), so that walking a map programs
 * write meanwhile ends. Stops at fn's first non-zero return and returns it; else 0 at the end,
 * -ENOMEM, or the map's error. */
int ncclbpf_map_walk(struct ebpf_map *m, uint64_t limit, ncclbpf_map_elem_fn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif
