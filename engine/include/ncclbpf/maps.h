/* Maps: array, hash, per-CPU array/hash, LRU hash and ring buffer, with Linux semantics.
 * Owner: maps component (engine/src/maps/). Lookups take no global lock; memory of deleted
 * values is reclaimed only after every running program that could hold it has finished
 * (epoch-based reclamation, epoch.h). */
#ifndef NCCLBPF_MAPS_H
#define NCCLBPF_MAPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Map types carry Linux's numbers so that BTF-defined maps need no translation. */
enum ebpf_map_type {
	EBPF_MAP_TYPE_HASH = 1,
	EBPF_MAP_TYPE_ARRAY = 2,
	EBPF_MAP_TYPE_PERCPU_HASH = 5,
	EBPF_MAP_TYPE_PERCPU_ARRAY = 6,
	EBPF_MAP_TYPE_LRU_HASH = 9,
	EBPF_MAP_TYPE_RINGBUF = 27,
};

/* Update flags (Linux's). */
#define EBPF_ANY 0
#define EBPF_NOEXIST 1
#define EBPF_EXIST 2

/* Map flags. */
#define EBPF_MAP_F_RDONLY_PROG 0x80u /* programs may not write (frozen .rodata) */

struct ebpf_map_def {
	size_t sz;
	const char *name;
	uint32_t type; /* enum ebpf_map_type */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries; /* ring buffer: byte size, a power of two multiple of the page size */
	uint32_t flags;
};

struct ebpf_map;

struct ebpf_map *ebpf_map__create(const struct ebpf_map_def *def, char *err, size_t err_len);
void ebpf_map__free(struct ebpf_map *map);

const char *ebpf_map__name(const struct ebpf_map *map);
uint32_t ebpf_map__type(const struct ebpf_map *map);
uint32_t ebpf_map__key_size(const struct ebpf_map *map);
uint32_t ebpf_map__value_size(const struct ebpf_map *map);
uint32_t ebpf_map__max_entries(const struct ebpf_map *map);
uint32_t ebpf_map__flags(const struct ebpf_map *map);

/* Program-side operations (what the helpers call): lookup returns a stable pointer to the
 * value (this CPU's slot for per-CPU maps) or NULL; update/delete return 0 or -errno. */
void *ebpf_map__lookup_elem(struct ebpf_map *map, const void *key);
long ebpf_map__update_elem(struct ebpf_map *map, const void *key, const void *value,
			   uint64_t flags);
long ebpf_map__delete_elem(struct ebpf_map *map, const void *key);

#ifdef __cplusplus
}
#endif
#endif
