/* ARRAY and PERCPU_ARRAY: preallocated, zero-initialised values indexed by a u32 key. Lookups
 * are pure arithmetic (no lock, never NULL below max_entries); updates copy in place with
 * word-sized atomic stores; elements cannot be deleted (-EINVAL), as in Linux.
 * Per-CPU layout is CPU-major (all of CPU 0's values, then CPU 1's) so that different CPUs
 * never share a cache line. */
#include "map_kind.h"

#include <errno.h>
#include <stdlib.h>

struct array_map {
	struct ebpf_map m;
	uint64_t cpu_stride; /* bytes per CPU block */
	unsigned char *values;
};

static inline unsigned char *slot(struct array_map *a, uint32_t idx, uint32_t cpu)
{
	return a->values + cpu * a->cpu_stride + (uint64_t)idx * a->m.value_stride;
}

static int key_index(const struct ebpf_map *m, const void *key, uint32_t *idx)
{
	memcpy(idx, key, 4);
	return *idx < m->max_entries;
}

static void *array_lookup(struct ebpf_map *m, const void *key)
{
	uint32_t idx;
	if (!key_index(m, key, &idx))
		return NULL;
	struct array_map *a = (struct array_map *)m;
	return slot(a, idx, m->ncpus > 1 ? map_cpu(m) : 0);
}

static long array_update(struct ebpf_map *m, const void *key, const void *value, uint64_t flags,
			 int all_cpus)
{
	uint32_t idx;
	if (!key_index(m, key, &idx))
		return -E2BIG; /* Linux's answer for an index beyond the array */
	if (flags == EBPF_NOEXIST)
		return -EEXIST; /* every element always exists */
	struct array_map *a = (struct array_map *)m;
	if (m->ncpus == 1) {
		map_val_store(slot(a, idx, 0), value, m->value_size);
	} else if (all_cpus) {
		for (uint32_t c = 0; c < m->ncpus; c++)
			map_val_store(slot(a, idx, c),
				      (const unsigned char *)value + (uint64_t)c * m->value_stride,
				      m->value_size);
	} else {
		map_val_store(slot(a, idx, map_cpu(m)), value, m->value_size);
	}
	return 0;
}

static long array_remove(struct ebpf_map *m, const void *key)
{
	return -EINVAL;
}

static int array_copy_out(struct ebpf_map *m, const void *key, void *value)
{
	uint32_t idx;
	if (!key_index(m, key, &idx))
		return -ENOENT;
	struct array_map *a = (struct array_map *)m;
	if (m->ncpus == 1) {
		map_val_load(value, slot(a, idx, 0), m->value_size);
		return 0;
	}
	for (uint32_t c = 0; c < m->ncpus; c++) {
		unsigned char *dst = (unsigned char *)value + (uint64_t)c * m->value_stride;
		map_val_load(dst, slot(a, idx, c), m->value_size);
		memset(dst + m->value_size, 0, m->value_stride - m->value_size);
	}
	return 0;
}

static int array_next_key(struct ebpf_map *m, const void *key, void *next_key)
{
	uint32_t idx, next;
	if (!key || !key_index(m, key, &idx))
		next = 0;
	else if (idx == m->max_entries - 1)
		return -ENOENT;
	else
		next = idx + 1;
	memcpy(next_key, &next, 4);
	return 0;
}

static void array_destroy(struct ebpf_map *m)
{
	struct array_map *a = (struct array_map *)m;
	map_mem_free(a->values, a->cpu_stride * m->ncpus);
	free(a);
}

static uint64_t array_count(const struct ebpf_map *m)
{
	return m->max_entries;
}

static const struct map_ops array_ops = MAP_OPS(array);

/* Bytes per CPU block: the values rounded to a cache line, so per-CPU blocks never share one. */
static uint64_t cpu_block(const struct ebpf_map_def *def)
{
	uint64_t values = map_sat_mul(ROUND_UP8(def->value_size), def->max_entries);
	return values > UINT64_MAX - 63 ? UINT64_MAX : (values + 63) & ~(uint64_t)63;
}

uint64_t array_map_memory(const struct ebpf_map_def *def, uint32_t ncpus)
{
	return map_sat_add(sizeof(struct array_map), map_sat_mul(cpu_block(def), ncpus));
}

struct ebpf_map *array_map_create(const struct ebpf_map_def *def, uint32_t ncpus, char *err,
				  size_t err_len)
{
	if (def->key_size != 4)
		return map_fail(err, err_len, def, EINVAL, "array key_size must be 4, got %u",
				def->key_size);
	if (def->value_size == 0 || def->max_entries == 0)
		return map_fail(err, err_len, def, EINVAL,
				"value_size and max_entries must be non-zero");
	uint64_t stride = ROUND_UP8(def->value_size);
	uint64_t cpu_stride = cpu_block(def);
	uint64_t bytes = map_sat_mul(cpu_stride, ncpus);
	if (bytes > EBPF_MAP_MAX_MEMORY)
		return map_fail(err, err_len, def, E2BIG,
				"%llu bytes of values exceed the %llu byte limit",
				(unsigned long long)bytes, (unsigned long long)EBPF_MAP_MAX_MEMORY);
	struct array_map *a = calloc(1, sizeof(*a));
	unsigned char *v = a ? map_mem_zalloc(bytes) : NULL;
	if (!v) {
		free(a);
		return map_fail(err, err_len, def, ENOMEM, "out of memory for %llu bytes",
				(unsigned long long)bytes);
	}
	a->values = v;
	a->m.array_base = v;
	a->cpu_stride = cpu_stride;
	a->m.ops = &array_ops;
	a->m.ncpus = ncpus;
	a->m.value_stride = (uint32_t)stride;
	a->m.memory = array_map_memory(def, ncpus);
	return &a->m;
}
