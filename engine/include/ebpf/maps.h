/* Maps: array, hash, per-CPU array/hash, LRU hash and ring buffer, with Linux semantics.
 * Owner: maps component (engine/src/maps/). Lookups take no global lock; memory of deleted
 * values is reclaimed only after every running program that could hold it has finished
 * (epoch-based reclamation, epoch.h).
 *
 * Two sides:
 *  - program side (what the helpers call): ebpf_map__lookup_elem returns a pointer into the map
 *    that stays valid until the caller leaves its epoch section (ebpf_epoch_exit); per-CPU maps
 *    give this CPU's slot and an update sets this CPU's slot only.
 *  - user side (tools, the runtime, tests): ebpf_map__user_* copy values in and out, take care of
 *    the epoch themselves, and see per-CPU values as an array of ebpf_map__num_cpus() slots of
 *    round_up(value_size, 8) bytes each (as Linux's bpf() syscall does).
 * Values are 8-byte aligned so that atomic instructions on them work. Unlike in the kernel,
 * a per-CPU slot is not exclusive to one running program (threads share CPUs and migrate):
 * exact counters need atomic adds. */
#ifndef EBPF_MAPS_H
#define EBPF_MAPS_H

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
#define EBPF_ANY     0
#define EBPF_NOEXIST 1
#define EBPF_EXIST   2

/* Map flags. */
#define EBPF_MAP_F_RDONLY_PROG 0x80u /* programs may not write (frozen .rodata) */
/* One instance per communicator (ARRAY and HASH only; a host's SDK names it in its own words,
 * ebpf_platform.per_comm_decl): the map
 * created from the definition is a template, which program-side operations replace by the
 * instance the calling thread has bound (ebpf_map__bind), or use itself when none is bound. */
#define EBPF_MAP_F_PER_COMM 0x1000000u

/* Ring buffer output/submit flags (Linux's; accepted, wake-ups are the consumer's business). */
#define EBPF_RB_NO_WAKEUP    1u
#define EBPF_RB_FORCE_WAKEUP 2u

/* Limits (creation fails with -EINVAL or -E2BIG beyond them). */
#define EBPF_MAP_MAX_KEY_SIZE	512u	     /* Linux: MAX_BPF_STACK */
#define EBPF_MAP_MAX_VALUE_SIZE (1u << 20)   /* per element (per CPU slot) */
#define EBPF_MAP_MAX_MEMORY	(1ull << 32) /* bytes of values an array may preallocate */
#define EBPF_MAP_NAME_LEN	64u

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

/* Creates a map. On failure returns NULL, sets errno (EINVAL, E2BIG, ENOMEM) and writes one line
 * to err (e.g. "map 'counts': array key_size must be 4, got 8"). */
struct ebpf_map *ebpf_map__create(const struct ebpf_map_def *def, char *err, size_t err_len);
/* The most memory a map created from def can hold, from the definition alone: preallocated
 * values (all CPUs' slots), a ring buffer's data area, or a hash map's buckets plus max_entries
 * elements (header, key, value, allocator overhead). Budgets (object.h's limits) count this, so
 * a hash map is charged for what it may grow to, not what it holds at creation. 0 for a type
 * creation refuses; UINT64_MAX when the product overflows. */
uint64_t ebpf_map__def_memory(const struct ebpf_map_def *def);
/* Frees the map at once: the caller guarantees no program can still run on it (e.g. after
 * ebpf_epoch_synchronize). NULL is ignored. */
void ebpf_map__free(struct ebpf_map *map);

const char *ebpf_map__name(const struct ebpf_map *map);
uint32_t ebpf_map__type(const struct ebpf_map *map);
uint32_t ebpf_map__key_size(const struct ebpf_map *map);
uint32_t ebpf_map__value_size(const struct ebpf_map *map);
uint32_t ebpf_map__max_entries(const struct ebpf_map *map);
uint32_t ebpf_map__flags(const struct ebpf_map *map);
/* Number of per-CPU slots (fixed at creation; 1 for maps that are not per-CPU). */
uint32_t ebpf_map__num_cpus(const struct ebpf_map *map);
/* Bytes a user-side value buffer must hold: value_size, or num_cpus * round_up(value_size, 8)
 * for per-CPU maps, 0 for ring buffers. */
size_t ebpf_map__user_value_size(const struct ebpf_map *map);
/* 1 when the map was created from an equivalent definition (name, type, key/value sizes,
 * max_entries, flags): the runtime keeps such a map, and its contents, across a hot reload. */
int ebpf_map__def_matches(const struct ebpf_map *map, const struct ebpf_map_def *def);
/* Linux's BPF_MAP_FREEZE: from now on user-side updates and deletes fail with -EPERM (the
 * verifier may then treat the contents of a read-only map as constants). Irreversible. */
int ebpf_map__freeze(struct ebpf_map *map);
int ebpf_map__is_frozen(const struct ebpf_map *map);
/* ARRAY only (not per-CPU): the values' base address and the distance between elements
 * (round_up(value_size, 8)), for a JIT that inlines lookups and for global data (.data, .bss,
 * .rodata are one-element arrays). Returns 0 or -EINVAL. */
int ebpf_map__array_layout(struct ebpf_map *map, void **base, uint32_t *stride);
/* Human name of a map type ("hash", "array", ...), "unknown" otherwise. */
const char *ebpf_map_type__name(uint32_t type);

/* --- Per-communicator instances ---------------------------------------------------------------
 * A binding maps templates (EBPF_MAP_F_PER_COMM) to instances (maps created from the template's
 * definition without the flag). While a thread has a binding, the program-side operations
 * (lookup, update, delete) on a template act on its instance; the JIT never inlines lookups in
 * templates, and direct value access to one is refused. The runtime binds a communicator's
 * instances around each of its decision program runs (runtime/src/policy/comm_maps.c) and unbinds
 * (NULL) after; the binding and its instances must outlive the run. */
struct ebpf_map_binding {
	uint32_t n;
	struct {
		const struct ebpf_map *tmpl;
		struct ebpf_map *inst;
	} e[];
};
extern __thread const struct ebpf_map_binding *ebpf_map_binding_
    __attribute__((tls_model("initial-exec")));
static inline void ebpf_map__bind(const struct ebpf_map_binding *b)
{
	ebpf_map_binding_ = b;
}

/* --- Program side (what the helpers call; caller is inside an epoch section) ---------------- */

/* Returns a stable pointer to the value (this CPU's slot for per-CPU maps) or NULL. */
void *ebpf_map__lookup_elem(struct ebpf_map *map, const void *key);
/* 0 or -errno: -EINVAL bad flags or wrong map type, -EEXIST (NOEXIST and present), -ENOENT
 * (EXIST and absent), -E2BIG (full), -ENOMEM. */
long ebpf_map__update_elem(struct ebpf_map *map, const void *key, const void *value,
			   uint64_t flags);
/* 0, -ENOENT, or -EINVAL for arrays (which cannot delete). */
long ebpf_map__delete_elem(struct ebpf_map *map, const void *key);

/* --- User side (enters/leaves the epoch itself; safe while programs run) -------------------- */

/* Copies the value (all CPUs for per-CPU maps) into value, which holds
 * ebpf_map__user_value_size(map) bytes. 0 or -ENOENT / -EINVAL. */
int ebpf_map__user_lookup(struct ebpf_map *map, const void *key, void *value);
/* Like ebpf_map__update_elem, but per-CPU maps take all CPUs' values (user_value_size bytes);
 * -EPERM once the map is frozen. */
int ebpf_map__user_update(struct ebpf_map *map, const void *key, const void *value, uint64_t flags);
int ebpf_map__user_delete(struct ebpf_map *map, const void *key);
/* Linux's BPF_MAP_GET_NEXT_KEY: key NULL (or not present) gives the first key; -ENOENT after
 * the last one. Hash order is unspecified and may change under concurrent updates. */
int ebpf_map__get_next_key(struct ebpf_map *map, const void *key, void *next_key);

/* Statistics, read without stopping writers (each field is individually atomic). */
struct ebpf_map_stats {
	size_t sz;
	uint64_t entries;	/* live elements (array: max_entries; ring buffer: unread bytes) */
	uint64_t updates;	/* successful updates (incl. ring buffer records submitted) */
	uint64_t update_fails;	/* updates refused: full, flags, ring buffer reservation failed */
	uint64_t deletes;	/* successful deletes (ring buffer: records discarded) */
	uint64_t lru_evictions; /* LRU hash only */
	uint64_t rb_consumed;	/* ring buffer: records handed to a consumer */
	uint64_t memory_bytes;	/* approximate memory held by the map */
};
int ebpf_map__get_stats(const struct ebpf_map *map, struct ebpf_map_stats *stats);

/* --- Ring buffer (EBPF_MAP_TYPE_RINGBUF) ------------------------------------------------------
 * Records are BPF-style: reserve, fill, submit or discard; records become visible to the
 * consumer in reservation order once submitted. One consumer at a time (consumers serialise on
 * a lock of their own; producers never wait for consumers). */

/* Program side: returns size bytes of 8-aligned record memory or NULL (too big, no room, bad
 * flags, not a ring buffer). */
void *ebpf_ringbuf__reserve(struct ebpf_map *map, uint64_t size, uint64_t flags);
void ebpf_ringbuf__submit(void *data, uint64_t flags);
void ebpf_ringbuf__discard(void *data, uint64_t flags);
/* reserve + copy + submit: 0, -EINVAL, -E2BIG (record larger than the ring) or -EAGAIN (full). */
long ebpf_ringbuf__output(struct ebpf_map *map, const void *data, uint64_t size, uint64_t flags);

/* Consumer side: calls cb for every submitted record in order, until a record is still being
 * written, the buffer is empty, max records were handed out (0 = no limit) or cb returns
 * non-zero (that record counts as consumed). Returns the number of records consumed, or -EINVAL
 * when map is not a ring buffer. */
typedef int (*ebpf_ringbuf_cb)(void *ctx, const void *data, uint32_t size);
long ebpf_ringbuf__consume(struct ebpf_map *map, ebpf_ringbuf_cb cb, void *ctx, uint64_t max);
/* Like consume, but waits up to timeout_ms (negative: forever) for at least one record. Producers
 * signal nothing, so waiting is a sleep-poll with back-off from 50 us to 5 ms. Returns the
 * number of records consumed (0 on timeout) or -EINVAL. */
long ebpf_ringbuf__poll(struct ebpf_map *map, ebpf_ringbuf_cb cb, void *ctx, int timeout_ms);
/* Bytes reserved or submitted but not yet consumed. */
uint64_t ebpf_ringbuf__avail_data(const struct ebpf_map *map);

#ifdef __cplusplus
}
#endif
#endif
