/* Map creation, accessors and the type-independent entry points (maps.h). The per-type code
 * lives in array.c, hash.c and ringbuf.c behind struct map_ops. */
#include "err.h"
#include "map_kind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ebpf/epoch.h"

/* Possible CPUs, as Linux counts them for per-CPU maps: the highest number listed in
 * /sys/devices/system/cpu/possible ("0-7", "0,2-3") plus one; else the configured count. */
static uint32_t possible_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	char line[256];
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	if (f) {
		if (fgets(line, sizeof(line), f)) {
			long max = -1;
			char *p = line;
			while (*p >= '0' && *p <= '9') {
				long v = strtol(p, &p, 10);
				if (v > max)
					max = v;
				if (*p == '-' || *p == ',')
					p++;
			}
			if (max >= 0)
				n = max + 1;
		}
		fclose(f);
	}
	if (n < 1)
		n = 1;
	if (n > 4096)
		n = 4096;
	return (uint32_t)n;
}

struct ebpf_map *ebpf_map__create(const struct ebpf_map_def *def, char *err, size_t err_len)
{
	if (err && err_len)
		err[0] = 0;
	if (!def || def->sz < offsetof(struct ebpf_map_def, flags) + sizeof(def->flags))
		return map_fail(err, err_len, NULL, EINVAL,
				"bad definition (NULL or sz too small)");
	if (def->name && strlen(def->name) >= EBPF_MAP_NAME_LEN)
		return map_fail(err, err_len, def, EINVAL, "name longer than %u bytes",
				EBPF_MAP_NAME_LEN - 1);
	if (def->flags & ~(EBPF_MAP_F_RDONLY_PROG | EBPF_MAP_F_PER_COMM))
		return map_fail(err, err_len, def, EINVAL, "unsupported flags 0x%x", def->flags);
	if ((def->flags & EBPF_MAP_F_PER_COMM) &&
	    ((def->type != EBPF_MAP_TYPE_ARRAY && def->type != EBPF_MAP_TYPE_HASH) ||
	     (def->flags & EBPF_MAP_F_RDONLY_PROG)))
		return map_fail(
		    err, err_len, def, EINVAL,
		    "a per-communicator map (NCCLBPF_F_PER_COMM) must be an ARRAY or a HASH "
		    "(per-CPU values and LRU eviction differ between ranks), got %s",
		    (def->flags & EBPF_MAP_F_RDONLY_PROG) ? "a read-only map"
							  : ebpf_map_type__name(def->type));
	if (def->value_size > EBPF_MAP_MAX_VALUE_SIZE)
		return map_fail(err, err_len, def, E2BIG, "value_size %u exceeds %u",
				def->value_size, EBPF_MAP_MAX_VALUE_SIZE);
	struct ebpf_map *m;
	switch (def->type) {
	case EBPF_MAP_TYPE_ARRAY:
		m = array_map_create(def, 1, err, err_len);
		break;
	case EBPF_MAP_TYPE_PERCPU_ARRAY:
		m = array_map_create(def, possible_cpus(), err, err_len);
		break;
	case EBPF_MAP_TYPE_HASH:
	case EBPF_MAP_TYPE_LRU_HASH:
		m = htab_map_create(def, 1, err, err_len);
		break;
	case EBPF_MAP_TYPE_PERCPU_HASH:
		m = htab_map_create(def, possible_cpus(), err, err_len);
		break;
	case EBPF_MAP_TYPE_RINGBUF:
		m = ringbuf_map_create(def, err, err_len);
		break;
	default:
		return map_fail(err, err_len, def, EINVAL, "unsupported map type %u", def->type);
	}
	if (!m)
		return NULL;
	snprintf(m->name, sizeof(m->name), "%s", def->name ? def->name : "");
	m->type = def->type;
	m->key_size = def->key_size;
	m->value_size = def->value_size;
	m->max_entries = def->max_entries;
	m->flags = def->flags;
	return m;
}

uint64_t ebpf_map__def_memory(const struct ebpf_map_def *def)
{
	switch (def ? def->type : 0) {
	case EBPF_MAP_TYPE_ARRAY:
		return array_map_memory(def, 1);
	case EBPF_MAP_TYPE_PERCPU_ARRAY:
		return array_map_memory(def, possible_cpus());
	case EBPF_MAP_TYPE_HASH:
	case EBPF_MAP_TYPE_LRU_HASH:
		return htab_map_memory(def, 1);
	case EBPF_MAP_TYPE_PERCPU_HASH:
		return htab_map_memory(def, possible_cpus());
	case EBPF_MAP_TYPE_RINGBUF:
		return ringbuf_map_memory(def);
	}
	return 0; /* creation refuses the type */
}

void ebpf_map__free(struct ebpf_map *map)
{
	if (map)
		map->ops->destroy(map);
}

const char *ebpf_map__name(const struct ebpf_map *map)
{
	return map->name;
}
uint32_t ebpf_map__type(const struct ebpf_map *map)
{
	return map->type;
}
uint32_t ebpf_map__key_size(const struct ebpf_map *map)
{
	return map->key_size;
}
uint32_t ebpf_map__value_size(const struct ebpf_map *map)
{
	return map->value_size;
}
uint32_t ebpf_map__max_entries(const struct ebpf_map *map)
{
	return map->max_entries;
}
uint32_t ebpf_map__flags(const struct ebpf_map *map)
{
	return map->flags;
}
uint32_t ebpf_map__num_cpus(const struct ebpf_map *map)
{
	return map->ncpus;
}

static int is_percpu(const struct ebpf_map *m)
{
	return m->type == EBPF_MAP_TYPE_PERCPU_ARRAY || m->type == EBPF_MAP_TYPE_PERCPU_HASH;
}

size_t ebpf_map__user_value_size(const struct ebpf_map *map)
{
	if (map->type == EBPF_MAP_TYPE_RINGBUF)
		return 0;
	return is_percpu(map) ? (size_t)map->ncpus * map->value_stride : map->value_size;
}

const char *ebpf_map_type__name(uint32_t type)
{
	switch (type) {
	case EBPF_MAP_TYPE_HASH:
		return "hash";
	case EBPF_MAP_TYPE_ARRAY:
		return "array";
	case EBPF_MAP_TYPE_PERCPU_HASH:
		return "percpu_hash";
	case EBPF_MAP_TYPE_PERCPU_ARRAY:
		return "percpu_array";
	case EBPF_MAP_TYPE_LRU_HASH:
		return "lru_hash";
	case EBPF_MAP_TYPE_RINGBUF:
		return "ringbuf";
	}
	return "unknown";
}

__thread const struct ebpf_map_binding *ebpf_map_binding_
    __attribute__((tls_model("initial-exec")));

/* The instance this thread has bound for a per-communicator template, or the template itself. */
static struct ebpf_map *bound(struct ebpf_map *m)
{
	const struct ebpf_map_binding *b = ebpf_map_binding_;
	for (uint32_t i = 0; b && i < b->n; i++)
		if (b->e[i].tmpl == m)
			return b->e[i].inst;
	return m;
}

void *ebpf_map__lookup_elem(struct ebpf_map *map, const void *key)
{
	if (__builtin_expect(map->flags & EBPF_MAP_F_PER_COMM, 0))
		map = bound(map);
	return map->ops->lookup(map, key);
}

long ebpf_map__update_elem(struct ebpf_map *map, const void *key, const void *value, uint64_t flags)
{
	long rc;
	if (__builtin_expect(map->flags & EBPF_MAP_F_PER_COMM, 0))
		map = bound(map);
	if (flags > EBPF_EXIST) {
		rc = -EINVAL;
	} else {
		ebpf_epoch_enter();
		rc = map->ops->update(map, key, value, flags, 0);
		ebpf_epoch_exit();
	}
	map_stat_inc(rc ? &map->n_update_fails : &map->n_updates);
	return rc;
}

/* Deletes key from map itself (no binding resolved), counting a success. */
static long remove_counted(struct ebpf_map *map, const void *key)
{
	ebpf_epoch_enter();
	long rc = map->ops->remove(map, key);
	ebpf_epoch_exit();
	if (!rc)
		map_stat_inc(&map->n_deletes);
	return rc;
}

long ebpf_map__delete_elem(struct ebpf_map *map, const void *key)
{
	if (__builtin_expect(map->flags & EBPF_MAP_F_PER_COMM, 0))
		map = bound(map);
	return remove_counted(map, key);
}

int ebpf_map__user_lookup(struct ebpf_map *map, const void *key, void *value)
{
	ebpf_epoch_enter();
	int rc = map->ops->copy_out(map, key, value);
	ebpf_epoch_exit();
	return rc;
}

int ebpf_map__user_update(struct ebpf_map *map, const void *key, const void *value, uint64_t flags)
{
	long rc;
	if (atomic_load_explicit(&map->frozen, memory_order_acquire)) {
		rc = -EPERM;
	} else if (flags > EBPF_EXIST) {
		rc = -EINVAL;
	} else {
		ebpf_epoch_enter();
		rc = map->ops->update(map, key, value, flags, 1);
		ebpf_epoch_exit();
	}
	map_stat_inc(rc ? &map->n_update_fails : &map->n_updates);
	return (int)rc;
}

int ebpf_map__user_delete(struct ebpf_map *map, const void *key)
{
	if (atomic_load_explicit(&map->frozen, memory_order_acquire))
		return -EPERM;
	return (int)remove_counted(map, key); /* the map given, bound or not */
}

int ebpf_map__def_matches(const struct ebpf_map *map, const struct ebpf_map_def *def)
{
	return map && def && def->type == map->type && def->key_size == map->key_size &&
	       def->value_size == map->value_size && def->max_entries == map->max_entries &&
	       def->flags == map->flags && strcmp(def->name ? def->name : "", map->name) == 0;
}

int ebpf_map__freeze(struct ebpf_map *map)
{
	atomic_store_explicit(&map->frozen, 1, memory_order_release);
	return 0;
}

int ebpf_map__is_frozen(const struct ebpf_map *map)
{
	return atomic_load_explicit(&((struct ebpf_map *)map)->frozen, memory_order_acquire);
}

int ebpf_map__array_layout(struct ebpf_map *map, void **base, uint32_t *stride)
{
	/* a template's values are not the ones a bound program reads */
	if (map->type != EBPF_MAP_TYPE_ARRAY || (map->flags & EBPF_MAP_F_PER_COMM))
		return -EINVAL;
	*base = map->array_base;
	*stride = map->value_stride;
	return 0;
}

int ebpf_map__get_next_key(struct ebpf_map *map, const void *key, void *next_key)
{
	ebpf_epoch_enter();
	int rc = map->ops->next_key(map, key, next_key);
	ebpf_epoch_exit();
	return rc;
}

int ebpf_map__get_stats(const struct ebpf_map *map, struct ebpf_map_stats *st)
{
	if (!st || st->sz < sizeof(*st))
		return -EINVAL;
	st->entries = map->ops->count(map);
	st->updates = atomic_load_explicit(&map->n_updates, memory_order_relaxed);
	st->update_fails = atomic_load_explicit(&map->n_update_fails, memory_order_relaxed);
	st->deletes = atomic_load_explicit(&map->n_deletes, memory_order_relaxed);
	st->lru_evictions = atomic_load_explicit(&map->n_evictions, memory_order_relaxed);
	st->rb_consumed = atomic_load_explicit(&map->n_consumed, memory_order_relaxed);
	st->memory_bytes = map->memory + st->entries * map->elem_bytes;
	return 0;
}
