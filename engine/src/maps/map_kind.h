/* Shared by the map implementations in engine/src/maps: the common map header, the per-type
 * operation table and small helpers for copying values with word-sized atomic accesses. */
#ifndef EBPF_MAP_KIND_H
#define EBPF_MAP_KIND_H

#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ebpf/maps.h"

struct ebpf_map;

struct map_ops {
	/* Program side (caller inside an epoch section). */
	void *(*lookup)(struct ebpf_map *m, const void *key);
	long (*update)(struct ebpf_map *m, const void *key, const void *value, uint64_t flags,
		       int all_cpus);
	long (*remove)(struct ebpf_map *m, const void *key);
	/* User side (caller inside an epoch section): copies all CPUs for per-CPU maps. */
	int (*copy_out)(struct ebpf_map *m, const void *key, void *value);
	int (*next_key)(struct ebpf_map *m, const void *key, void *next_key);
	void (*destroy)(struct ebpf_map *m);
	uint64_t (*count)(const struct ebpf_map *m);
};

/* The operations of a map type whose functions are called <prefix>_lookup ... <prefix>_count:
 * every type implements all of them. */
#define MAP_OPS(prefix)                                                                            \
	{                                                                                          \
		.lookup = prefix##_lookup, .update = prefix##_update, .remove = prefix##_remove,   \
		.copy_out = prefix##_copy_out, .next_key = prefix##_next_key,                      \
		.destroy = prefix##_destroy, .count = prefix##_count,                              \
	}

struct ebpf_map {
	const struct map_ops *ops;
	char name[EBPF_MAP_NAME_LEN];
	uint32_t type, key_size, value_size, max_entries, flags;
	uint32_t ncpus;	       /* per-CPU slots (1 unless per-CPU) */
	uint32_t value_stride; /* round_up(value_size, 8) */
	uint64_t memory;       /* bytes allocated at creation */
	uint64_t elem_bytes;   /* bytes allocated per live element (hash maps) */
	_Atomic int frozen;    /* user-side writes refused */
	/* ARRAY: values and stride, for ebpf_map__array_layout. */
	unsigned char *array_base;
	_Atomic uint64_t n_updates, n_update_fails, n_deletes, n_evictions, n_consumed;
};

#define ROUND_UP8(x) (((x) + 7u) & ~(uint64_t)7u)

/* Byte counts of map definitions that cannot overflow: a definition no map could have
 * saturates at UINT64_MAX, which every limit refuses. */
static inline uint64_t map_sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
static inline uint64_t map_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Zeroed, 64-byte aligned memory for values, buckets and rings, committed lazily when large
 * (mem.c). map_mem_free takes the size it was allocated with. */
void *map_mem_zalloc(uint64_t size);
void map_mem_free(void *p, uint64_t size);

static inline void map_stat_inc(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* This thread's per-CPU slot, bounded by the CPU count fixed at creation. */
static inline uint32_t map_cpu(const struct ebpf_map *m)
{
	int c = sched_getcpu();
	if (c < 0)
		c = 0;
	return (uint32_t)c < m->ncpus ? (uint32_t)c : (uint32_t)c % m->ncpus;
}

/* Copies into map memory (8-aligned) with relaxed atomic word stores, so that programs doing
 * atomic adds on the same value concurrently never race in the C11 sense. src may be
 * unaligned. */
static inline void map_val_store(void *dst, const void *src, uint32_t size)
{
	uint64_t *d = dst;
	const unsigned char *s = src;
	uint32_t i = 0;
	for (; i + 8 <= size; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		__atomic_store_n(d++, w, __ATOMIC_RELAXED);
	}
	for (unsigned char *db = (unsigned char *)dst; i < size; i++)
		__atomic_store_n(db + i, s[i], __ATOMIC_RELAXED);
}

/* The reverse: reads map memory (8-aligned) word by word into a possibly unaligned buffer. */
static inline void map_val_load(void *dst, const void *src, uint32_t size)
{
	const uint64_t *s = src;
	unsigned char *d = dst;
	uint32_t i = 0;
	for (; i + 8 <= size; i += 8) {
		uint64_t w = __atomic_load_n(s++, __ATOMIC_RELAXED);
		memcpy(d + i, &w, 8);
	}
	for (const unsigned char *sb = src; i < size; i++)
		d[i] = __atomic_load_n(sb + i, __ATOMIC_RELAXED);
}

static inline void map_val_zero(void *dst, uint32_t size)
{
	uint64_t *d = dst;
	uint32_t i = 0;
	for (; i + 8 <= size; i += 8)
		__atomic_store_n(d++, 0, __ATOMIC_RELAXED);
	for (unsigned char *db = dst; i < size; i++)
		__atomic_store_n(db + i, 0, __ATOMIC_RELAXED);
}

/* Constructors: fill the type-specific part; the common header is set by ebpf_map__create.
 * Return the map or NULL with errno set and err written. */
struct ebpf_map *array_map_create(const struct ebpf_map_def *def, uint32_t ncpus, char *err,
				  size_t err_len);
struct ebpf_map *htab_map_create(const struct ebpf_map_def *def, uint32_t ncpus, char *err,
				 size_t err_len);
struct ebpf_map *ringbuf_map_create(const struct ebpf_map_def *def, char *err, size_t err_len);

/* The most memory a map of the type can hold (ebpf_map__def_memory), from the definition
 * alone; each constructor allocates by the same formula. */
uint64_t array_map_memory(const struct ebpf_map_def *def, uint32_t ncpus);
uint64_t htab_map_memory(const struct ebpf_map_def *def, uint32_t ncpus);
uint64_t ringbuf_map_memory(const struct ebpf_map_def *def);

/* A map constructor's refusal: writes "map 'NAME': " and the message into err (when given),
 * sets errno to errnum and returns NULL, so that every refusal is one statement. */
void *map_fail(char *err, size_t err_len, const struct ebpf_map_def *def, int errnum,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
