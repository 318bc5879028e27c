/* HASH, PERCPU_HASH and LRU_HASH.
 *
 * Buckets are singly linked lists. Readers walk them without any lock (inside an epoch section);
 * writers take the bucket's own spin lock, publish with release stores and never modify an
 * element that readers can reach except its value words: replacing a value of HASH/LRU_HASH
 * links a new element in place of the old one, and the old one is retired through the epoch
 * (so a pointer a program holds stays valid until its section ends). Per-CPU values are updated
 * in place, as Linux does. The element count is one atomic counter, touched by writers only.
 *
 * LRU_HASH keeps all elements on one recency list (under an LRU lock, taken by writers only).
 * Program lookups mark an element referenced; eviction takes the list's oldest element, giving
 * referenced ones a second chance (moved to the head, reference cleared). This is the kernel's
 * approximation of LRU: exact for elements never looked up by programs (user-side lookups do not
 * count as a use, also as in Linux), and never evicts a referenced element while an
 * unreferenced one is older. Unlike Linux, exactly one element is evicted per insertion into a
 * full map (the kernel frees a batch), so the map always holds max_entries elements once full. */
#include "map_kind.h"

#include <errno.h>
#include <stdlib.h>

#include "ebpf/epoch.h"

struct htab_elem {
	_Atomic(struct htab_elem *) next;
	uint32_t hash;
	_Atomic uint32_t ref;		       /* LRU: looked up by a program since last pass */
	struct htab_elem *lru_prev, *lru_next; /* LRU list, under lru_lock */
	uint64_t on_lru;		       /* under lru_lock */
	_Alignas(8) unsigned char key[];       /* key, then value at val_off */
};

struct bucket {
	_Atomic(struct htab_elem *) head;
	_Atomic uint32_t lock;
};

struct htab {
	struct ebpf_map m;
	struct bucket *buckets;
	uint32_t n_buckets; /* power of two */
	uint32_t val_off;   /* offset of the value from key[] */
	uint32_t val_bytes; /* value bytes per element (all CPUs) */
	int lru;
	int percpu; /* values per CPU, updated in place */
	_Atomic uint64_t count;
	_Atomic uint32_t lru_lock;
	struct htab_elem *lru_head, *lru_tail; /* head = most recent */
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void spin_lock(_Atomic uint32_t *l)
{
	unsigned spins = 0;
	while (atomic_exchange_explicit(l, 1, memory_order_acquire)) {
		while (atomic_load_explicit(l, memory_order_relaxed)) {
			if (++spins > 64)
				sched_yield(); /* the holder may be preempted: let it run */
			else
				cpu_relax();
		}
	}
}

static void spin_unlock(_Atomic uint32_t *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

static inline uint32_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

/* Multiply-xorshift hash over 8-byte words with fast paths for the 4- and 8-byte keys policies
 * mostly use and for struct keys of up to four words; quality is enough for bucket
 * selection. */
static inline __attribute__((always_inline)) uint32_t hash_key(const void *key, uint32_t len)
{
	uint64_t w;
	if (len == 4) {
		uint32_t k;
		memcpy(&k, key, 4);
		return mix64(k ^ 0x9e3779b97f4a7c15ull);
	}
	if (len == 8) {
		memcpy(&w, key, 8);
		return mix64(w ^ 0x9e3779b97f4a7c15ull);
	}
	const unsigned char *p = key;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
	if (len % 8 == 0 && len >= 16 && len <= 32) {
		/* Struct keys of two to four words: one multiply per word by its own odd constant,
		 * independent of each other (the loop below chains them), then the finaliser. A
		 * key differing in one word differs in that word's product (odd constants are
		 * invertible modulo 2^64). */
		uint64_t w1;
		memcpy(&w, p, 8);
		memcpy(&w1, p + 8, 8);
		h += w * 0xbf58476d1ce4e5b9ull + w1 * 0x94d049bb133111ebull;
		if (len >= 24) {
			memcpy(&w, p + 16, 8);
			h += w * 0xd6e8feb86659fd93ull;
		}
		if (len == 32) {
			memcpy(&w, p + 24, 8);
			h += w * 0xa0761d6478bd642full;
		}
		return mix64(h);
	}
	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
		p += 8;
		len -= 8;
	}
	if (len) {
		w = 0;
		for (uint32_t i = 0; i < len; i++)
			w |= (uint64_t)p[i] << (8 * i);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
	}
	return mix64(h);
}

static inline int key_eq(const void *a, const void *b, uint32_t len)
{
	if (len == 4) {
		uint32_t x, y;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		return x == y;
	}
	if (len == 8) {
		uint64_t x, y;
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		return x == y;
	}
	if (len % 8 == 0 && len >= 16 && len <= 32) {
		/* Struct keys of two to four words (a profiler key is three): compared inline,
		 * without a call to memcmp. */
		const unsigned char *x = a, *y = b;
		uint64_t x0, y0, x1, y1, diff;
		memcpy(&x0, x, 8);
		memcpy(&y0, y, 8);
		memcpy(&x1, x + 8, 8);
		memcpy(&y1, y + 8, 8);
		diff = (x0 ^ y0) | (x1 ^ y1);
		if (len >= 24) {
			memcpy(&x0, x + 16, 8);
			memcpy(&y0, y + 16, 8);
			diff |= x0 ^ y0;
		}
		if (len == 32) {
			memcpy(&x0, x + 24, 8);
			memcpy(&y0, y + 24, 8);
			diff |= x0 ^ y0;
		}
		return diff == 0;
	}
	return memcmp(a, b, len) == 0;
}

static inline unsigned char *elem_value(struct htab *h, struct htab_elem *e)
{
	return e->key + h->val_off;
}

static inline struct bucket *bucket_of(struct htab *h, uint32_t hash)
{
	return &h->buckets[hash & (h->n_buckets - 1)];
}

static inline struct htab_elem *find(struct htab *h, struct bucket *b, uint32_t hash,
				     const void *key)
{
	for (struct htab_elem *e = atomic_load_explicit(&b->head, memory_order_acquire); e;
	     e = atomic_load_explicit(&e->next, memory_order_acquire))
		if (e->hash == hash && key_eq(e->key, key, h->m.key_size))
			return e;
	return NULL;
}

static void *htab_lookup(struct ebpf_map *m, const void *key)
{
	struct htab *h = (struct htab *)m;
	uint32_t hash = hash_key(key, m->key_size);
	struct htab_elem *e = find(h, bucket_of(h, hash), hash, key);
	if (!e)
		return NULL;
	if (h->lru && !atomic_load_explicit(&e->ref, memory_order_relaxed))
		atomic_store_explicit(&e->ref, 1, memory_order_relaxed);
	unsigned char *v = elem_value(h, e);
	return m->ncpus > 1 ? v + (uint64_t)map_cpu(m) * m->value_stride : v;
}

/* --- LRU list (lru_lock held) --- */

static void lru_unlink(struct htab *h, struct htab_elem *e)
{
	if (!e->on_lru)
		return; /* already taken off by an evictor */
	e->on_lru = 0;
	if (e->lru_prev)
		e->lru_prev->lru_next = e->lru_next;
	else
		h->lru_head = e->lru_next;
	if (e->lru_next)
		e->lru_next->lru_prev = e->lru_prev;
	else
		h->lru_tail = e->lru_prev;
	e->lru_prev = e->lru_next = NULL;
}

static void lru_push_head(struct htab *h, struct htab_elem *e)
{
	e->on_lru = 1;
	e->lru_prev = NULL;
	e->lru_next = h->lru_head;
	if (h->lru_head)
		h->lru_head->lru_prev = e;
	else
		h->lru_tail = e;
	h->lru_head = e;
}

/* Replaces old by new on the recency list (new becomes most recent), or just adds new. */
static void lru_insert(struct htab *h, struct htab_elem *old, struct htab_elem *new)
{
	spin_lock(&h->lru_lock);
	if (old)
		lru_unlink(h, old);
	lru_push_head(h, new);
	spin_unlock(&h->lru_lock);
}

static void lru_remove(struct htab *h, struct htab_elem *e)
{
	spin_lock(&h->lru_lock);
	lru_unlink(h, e);
	spin_unlock(&h->lru_lock);
}

/* Unlinks e from bucket b if it is still there (bucket lock held). */
static int bucket_unlink(struct bucket *b, struct htab_elem *e)
{
	_Atomic(struct htab_elem *) *pp = &b->head;
	struct htab_elem *cur;
	while ((cur = atomic_load_explicit(pp, memory_order_relaxed))) {
		if (cur == e) {
			atomic_store_explicit(pp,
					      atomic_load_explicit(&e->next, memory_order_relaxed),
					      memory_order_release);
			return 1;
		}
		pp = &cur->next;
	}
	return 0;
}

/* Evicts one element (the oldest unreferenced). Returns 1 if an element was evicted. */
static int lru_evict_one(struct htab *h)
{
	struct htab_elem *victim = NULL;
	spin_lock(&h->lru_lock);
	/* At most one full pass clears every reference bit; then the tail is a victim. */
	for (uint64_t n = 0; h->lru_tail; n++) {
		struct htab_elem *t = h->lru_tail;
		if (atomic_load_explicit(&t->ref, memory_order_relaxed) && n <= h->m.max_entries) {
			atomic_store_explicit(&t->ref, 0, memory_order_relaxed);
			lru_unlink(h, t);
			lru_push_head(h, t);
			continue;
		}
		victim = t;
		lru_unlink(h, t);
		break;
	}
	spin_unlock(&h->lru_lock);
	if (!victim)
		return 0;
	/* victim stays allocated: we are inside an epoch section and only its unlinker retires
	 * it. A concurrent delete/replace of the same key may win the bucket unlink. */
	struct bucket *b = bucket_of(h, victim->hash);
	spin_lock(&b->lock);
	int ok = bucket_unlink(b, victim);
	spin_unlock(&b->lock);
	if (ok) {
		atomic_fetch_sub_explicit(&h->count, 1, memory_order_relaxed);
		map_stat_inc(&h->m.n_evictions);
		ebpf_epoch_retire(victim, free);
	}
	return 1;
}

static int reserve_slot(struct htab *h)
{
	uint64_t c = atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
	if (c < h->m.max_entries)
		return 1;
	atomic_fetch_sub_explicit(&h->count, 1, memory_order_relaxed);
	return 0;
}

static void fill_value(struct htab *h, unsigned char *dst, const void *value, int all_cpus,
		       int fresh)
{
	struct ebpf_map *m = &h->m;
	if (m->ncpus == 1) {
		map_val_store(dst, value, m->value_size);
		return;
	}
	if (all_cpus) {
		for (uint32_t c = 0; c < m->ncpus; c++)
			map_val_store(dst + (uint64_t)c * m->value_stride,
				      (const unsigned char *)value + (uint64_t)c * m->value_stride,
				      m->value_size);
		return;
	}
	/* Program-side update of a per-CPU map: this CPU's slot; a new element starts zeroed. */
	uint32_t cpu = map_cpu(m);
	if (fresh)
		map_val_zero(dst, h->val_bytes);
	map_val_store(dst + (uint64_t)cpu * m->value_stride, value, m->value_size);
}

/* A new, unpublished element holding key and value. */
static struct htab_elem *elem_new(struct htab *h, uint32_t hash, const void *key, const void *value,
				  int all_cpus)
{
	struct htab_elem *e = malloc(h->m.elem_bytes);
	if (!e)
		return NULL;
	e->hash = hash;
	atomic_init(&e->ref, 0);
	e->lru_prev = e->lru_next = NULL;
	e->on_lru = 0;
	memcpy(e->key, key, h->m.key_size);
	fill_value(h, elem_value(h, e), value, all_cpus, 1);
	return e;
}

static long htab_update(struct ebpf_map *m, const void *key, const void *value, uint64_t flags,
			int all_cpus)
{
	struct htab *h = (struct htab *)m;
	uint32_t hash = hash_key(key, m->key_size);
	struct bucket *b = bucket_of(h, hash);
	/* Allocate and fill outside the bucket lock, which readers never take but other writers
	 * of this bucket do. Per-CPU maps update existing elements in place: allocate only when
	 * the key looks absent (rechecked under the lock). */
	struct htab_elem *e = NULL;
	if (!(h->percpu && find(h, b, hash, key))) {
		e = elem_new(h, hash, key, value, all_cpus);
		if (!e)
			return -ENOMEM;
	}
	long rc;
	for (int attempt = 0;; attempt++) {
		spin_lock(&b->lock);
		struct htab_elem *old = find(h, b, hash, key);
		if (old && flags == EBPF_NOEXIST) {
			rc = -EEXIST;
			break;
		}
		if (!old && flags == EBPF_EXIST) {
			rc = -ENOENT;
			break;
		}
		if (old && h->percpu) {
			fill_value(h, elem_value(h, old), value, all_cpus, 0);
			rc = 0;
			break;
		}
		if (!e) { /* the key vanished since the unlocked check */
			spin_unlock(&b->lock);
			e = elem_new(h, hash, key, value, all_cpus);
			if (!e)
				return -ENOMEM;
			continue;
		}
		if (!old && !reserve_slot(h)) {
			spin_unlock(&b->lock);
			/* Full: LRU evicts (outside our bucket lock: the victim's bucket lock may
			 * be taken by a writer that next wants the LRU lock) and tries again. */
			if (h->lru && attempt < 8 && lru_evict_one(h))
				continue;
			free(e);
			return -E2BIG;
		}
		if (old) {
			/* Readers standing on old keep walking from old->next, which stays. */
			atomic_init(&e->next,
				    atomic_load_explicit(&old->next, memory_order_relaxed));
			_Atomic(struct htab_elem *) *pp = &b->head;
			while (atomic_load_explicit(pp, memory_order_relaxed) != old)
				pp = &atomic_load_explicit(pp, memory_order_relaxed)->next;
			if (h->lru)
				lru_insert(h, old, e);
			atomic_store_explicit(pp, e, memory_order_release);
		} else {
			atomic_init(&e->next, atomic_load_explicit(&b->head, memory_order_relaxed));
			if (h->lru)
				lru_insert(h, NULL, e);
			atomic_store_explicit(&b->head, e, memory_order_release);
		}
		spin_unlock(&b->lock);
		if (old)
			ebpf_epoch_retire(old, free);
		return 0;
	}
	spin_unlock(&b->lock);
	free(e);
	return rc;
}

static long htab_remove(struct ebpf_map *m, const void *key)
{
	struct htab *h = (struct htab *)m;
	uint32_t hash = hash_key(key, m->key_size);
	struct bucket *b = bucket_of(h, hash);
	spin_lock(&b->lock);
	struct htab_elem *e = find(h, b, hash, key);
	if (!e) {
		spin_unlock(&b->lock);
		return -ENOENT;
	}
	if (h->lru)
		lru_remove(h, e);
	bucket_unlink(b, e);
	atomic_fetch_sub_explicit(&h->count, 1, memory_order_relaxed);
	spin_unlock(&b->lock);
	ebpf_epoch_retire(e, free);
	return 0;
}

static int htab_copy_out(struct ebpf_map *m, const void *key, void *value)
{
	struct htab *h = (struct htab *)m;
	uint32_t hash = hash_key(key, m->key_size);
	struct htab_elem *e = find(h, bucket_of(h, hash), hash, key);
	if (!e)
		return -ENOENT;
	unsigned char *v = elem_value(h, e);
	if (m->ncpus == 1) {
		map_val_load(value, v, m->value_size);
		return 0;
	}
	for (uint32_t c = 0; c < m->ncpus; c++) {
		unsigned char *dst = (unsigned char *)value + (uint64_t)c * m->value_stride;
		map_val_load(dst, v + (uint64_t)c * m->value_stride, m->value_size);
		memset(dst + m->value_size, 0, m->value_stride - m->value_size);
	}
	return 0;
}

static int htab_next_key(struct ebpf_map *m, const void *key, void *next_key)
{
	struct htab *h = (struct htab *)m;
	uint32_t start = 0;
	if (key) {
		uint32_t hash = hash_key(key, m->key_size);
		struct bucket *b = bucket_of(h, hash);
		struct htab_elem *e = find(h, b, hash, key);
		if (e) {
			struct htab_elem *n = atomic_load_explicit(&e->next, memory_order_acquire);
			if (n) {
				memcpy(next_key, n->key, m->key_size);
				return 0;
			}
			start = (uint32_t)(b - h->buckets) + 1;
		}
		/* Not found: Linux restarts from the first key. */
	}
	for (uint32_t i = start; i < h->n_buckets; i++) {
		struct htab_elem *e =
		    atomic_load_explicit(&h->buckets[i].head, memory_order_acquire);
		if (e) {
			memcpy(next_key, e->key, m->key_size);
			return 0;
		}
	}
	return -ENOENT;
}

static void htab_destroy(struct ebpf_map *m)
{
	struct htab *h = (struct htab *)m;
	for (uint32_t i = 0; i < h->n_buckets; i++) {
		struct htab_elem *e =
		    atomic_load_explicit(&h->buckets[i].head, memory_order_relaxed);
		while (e) {
			struct htab_elem *n = atomic_load_explicit(&e->next, memory_order_relaxed);
			free(e);
			e = n;
		}
	}
	map_mem_free(h->buckets, (uint64_t)h->n_buckets * sizeof(*h->buckets));
	free(h);
}

static uint64_t htab_count(const struct ebpf_map *m)
{
	const struct htab *h = (const struct htab *)m;
	return atomic_load_explicit(&((struct htab *)h)->count, memory_order_relaxed);
}

static const struct map_ops htab_ops = MAP_OPS(htab);

/* Linux: one bucket per entry, rounded to a power of two; we cap the table (chains get longer
 * beyond 4M entries, nothing breaks). */
static uint32_t n_buckets(const struct ebpf_map_def *def)
{
	uint32_t nb = 1;
	while (nb < def->max_entries && nb < (1u << 22))
		nb <<= 1;
	return nb;
}

/* Bytes of one element: header, key and value slots (each 8-aligned), all CPUs' values. */
static uint64_t elem_bytes(const struct ebpf_map_def *def, uint32_t ncpus)
{
	return sizeof(struct htab_elem) + ROUND_UP8(def->key_size) +
	       map_sat_mul(ROUND_UP8(def->value_size), ncpus);
}

/* What malloc adds to each element (its chunk header and rounding), as far as the budget
 * goes. */
#define ELEM_ALLOC_OVERHEAD 16u

uint64_t htab_map_memory(const struct ebpf_map_def *def, uint32_t ncpus)
{
	uint64_t table = sizeof(struct htab) + (uint64_t)n_buckets(def) * sizeof(struct bucket);
	uint64_t elem = map_sat_add(elem_bytes(def, ncpus), ELEM_ALLOC_OVERHEAD);
	return map_sat_add(table, map_sat_mul(elem, def->max_entries));
}

struct ebpf_map *htab_map_create(const struct ebpf_map_def *def, uint32_t ncpus, char *err,
				 size_t err_len)
{
	if (def->key_size == 0 || def->value_size == 0 || def->max_entries == 0)
		return map_fail(err, err_len, def, EINVAL,
				"key_size, value_size and max_entries must be non-zero");
	if (def->key_size > EBPF_MAP_MAX_KEY_SIZE)
		return map_fail(err, err_len, def, E2BIG, "key_size %u exceeds %u", def->key_size,
				EBPF_MAP_MAX_KEY_SIZE);
	uint32_t nb = n_buckets(def);
	struct htab *h = calloc(1, sizeof(*h));
	struct bucket *bk = h ? map_mem_zalloc((uint64_t)nb * sizeof(*bk)) : NULL;
	if (!bk) {
		free(h);
		return map_fail(err, err_len, def, ENOMEM, "out of memory for %u buckets", nb);
	}
	h->buckets = bk;
	h->n_buckets = nb;
	h->lru = def->type == EBPF_MAP_TYPE_LRU_HASH;
	h->percpu = def->type == EBPF_MAP_TYPE_PERCPU_HASH;
	h->val_off = (uint32_t)ROUND_UP8(def->key_size);
	h->m.ops = &htab_ops;
	h->m.ncpus = ncpus;
	h->m.value_stride = (uint32_t)ROUND_UP8(def->value_size);
	h->val_bytes = h->m.value_stride * ncpus;
	h->m.elem_bytes = elem_bytes(def, ncpus);
	h->m.memory = sizeof(*h) + (uint64_t)nb * sizeof(*bk);
	return &h->m;
}
