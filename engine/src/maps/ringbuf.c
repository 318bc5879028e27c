/* RINGBUF: a multi-producer, single-consumer byte ring with BPF's record protocol.
 *
 * Each record starts with an 8-byte header: a length word (bit 31 BUSY while being written,
 * bit 30 DISCARD) and the header's offset from the data area in 8-byte units, by which submit
 * and discard find the ring from the record pointer alone. Producers serialise only the
 * reservation (a short spin lock, as in Linux); writing and submitting a record take no lock.
 * The consumer walks records in reservation order and stops at the first one still BUSY.
 *
 * Linux maps the data pages twice so that a record that wraps is contiguous; we get the same
 * effect with an overflow area: the data array is twice the ring size, a record is always laid
 * out linearly from its start, and positions are still counted modulo the ring size. */
#include "map_kind.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define RB_BUSY	    (1u << 31)
#define RB_DISCARD  (1u << 30)
#define RB_HDR	    8u
#define RB_MAX_REC  (UINT32_MAX / 4) /* Linux: RINGBUF_MAX_RECORD_SZ */
#define RB_MAX_SIZE (1u << 30)
#define RB_PAGE	    4096u

struct rb_hdr {
	uint32_t len; /* accessed atomically */
	uint32_t off; /* (header - data) / 8 */
};

struct ringbuf {
	struct ebpf_map m;
	uint64_t mask;
	unsigned char *base; /* allocation: 64 bytes (back-pointer at data - 8), then data */
	unsigned char *data;
	_Alignas(64) _Atomic uint64_t prod_pos;
	_Atomic uint32_t prod_lock;
	_Alignas(64) _Atomic uint64_t cons_pos;
	pthread_mutex_t cons_lock;
};

static struct ringbuf *rb_of(struct ebpf_map *m)
{
	return m && m->type == EBPF_MAP_TYPE_RINGBUF ? (struct ringbuf *)m : NULL;
}

void *ebpf_ringbuf__reserve(struct ebpf_map *map, uint64_t size, uint64_t flags)
{
	struct ringbuf *rb = rb_of(map);
	if (!rb)
		return NULL;
	if (flags || size > RB_MAX_REC || ROUND_UP8(size + RB_HDR) > rb->mask + 1) {
		map_stat_inc(&rb->m.n_update_fails);
		return NULL;
	}
	uint64_t len = ROUND_UP8(size + RB_HDR);
	/* Full (the consumer is behind): fail without taking the lock. A reservation may fail
	 * whenever the consumer is behind; space it freed a moment ago being missed here is the
	 * same answer as this call coming a moment earlier. The check under the lock below is the
	 * one that decides a reservation. */
	uint64_t prod0 = atomic_load_explicit(&rb->prod_pos, memory_order_relaxed);
	uint64_t cons0 = atomic_load_explicit(&rb->cons_pos, memory_order_relaxed);
	if (prod0 + len - cons0 > rb->mask + 1) {
		map_stat_inc(&rb->m.n_update_fails);
		return NULL;
	}
	while (atomic_exchange_explicit(&rb->prod_lock, 1, memory_order_acquire))
		while (atomic_load_explicit(&rb->prod_lock, memory_order_relaxed))
			sched_yield();
	uint64_t cons = atomic_load_explicit(&rb->cons_pos, memory_order_acquire);
	uint64_t prod = atomic_load_explicit(&rb->prod_pos, memory_order_relaxed);
	if (prod + len - cons > rb->mask + 1) {
		atomic_store_explicit(&rb->prod_lock, 0, memory_order_release);
		map_stat_inc(&rb->m.n_update_fails);
		return NULL;
	}
	struct rb_hdr *h = (struct rb_hdr *)(rb->data + (prod & rb->mask));
	__atomic_store_n(&h->len, (uint32_t)size | RB_BUSY, __ATOMIC_RELAXED);
	h->off = (uint32_t)(((unsigned char *)h - rb->data) / 8);
	/* Release: the consumer that sees the new producer position sees the BUSY header. */
	atomic_store_explicit(&rb->prod_pos, prod + len, memory_order_release);
	atomic_store_explicit(&rb->prod_lock, 0, memory_order_release);
	return h + 1;
}

static void commit(void *data, int discard)
{
	if (!data)
		return;
	struct rb_hdr *h = (struct rb_hdr *)data - 1;
	unsigned char *d = (unsigned char *)h - (uint64_t)h->off * 8;
	struct ringbuf *rb;
	memcpy(&rb, d - sizeof(rb), sizeof(rb));
	uint32_t len = __atomic_load_n(&h->len, __ATOMIC_RELAXED) & ~(RB_BUSY | RB_DISCARD);
	map_stat_inc(discard ? &rb->m.n_deletes : &rb->m.n_updates);
	/* Release: the record's contents are visible to a consumer that sees it not BUSY. */
	__atomic_store_n(&h->len, len | (discard ? RB_DISCARD : 0), __ATOMIC_RELEASE);
}

void ebpf_ringbuf__submit(void *data, uint64_t flags)
{
	commit(data, 0);
}

void ebpf_ringbuf__discard(void *data, uint64_t flags)
{
	commit(data, 1);
}

long ebpf_ringbuf__output(struct ebpf_map *map, const void *data, uint64_t size, uint64_t flags)
{
	struct ringbuf *rb = rb_of(map);
	if (!rb || (flags & ~(uint64_t)(EBPF_RB_NO_WAKEUP | EBPF_RB_FORCE_WAKEUP)))
		return -EINVAL;
	if (size > RB_MAX_REC || ROUND_UP8(size + RB_HDR) > rb->mask + 1) {
		map_stat_inc(&rb->m.n_update_fails);
		return -E2BIG;
	}
	void *rec = ebpf_ringbuf__reserve(map, size, 0);
	if (!rec)
		return -EAGAIN;
	memcpy(rec, data, size);
	commit(rec, 0);
	return 0;
}

long ebpf_ringbuf__consume(struct ebpf_map *map, ebpf_ringbuf_cb cb, void *ctx, uint64_t max)
{
	struct ringbuf *rb = rb_of(map);
	if (!rb || !cb)
		return -EINVAL;
	long n = 0;
	pthread_mutex_lock(&rb->cons_lock);
	uint64_t cons = atomic_load_explicit(&rb->cons_pos, memory_order_relaxed);
	while (!max || (uint64_t)n < max) {
		uint64_t prod = atomic_load_explicit(&rb->prod_pos, memory_order_acquire);
		if (cons >= prod)
			break;
		struct rb_hdr *h = (struct rb_hdr *)(rb->data + (cons & rb->mask));
		uint32_t len = __atomic_load_n(&h->len, __ATOMIC_ACQUIRE);
		if (len & RB_BUSY)
			break;
		uint32_t size = len & ~RB_DISCARD;
		int stop = 0;
		if (!(len & RB_DISCARD)) {
			stop = cb(ctx, h + 1, size);
			n++;
			map_stat_inc(&rb->m.n_consumed);
		}
		cons += ROUND_UP8((uint64_t)size + RB_HDR);
		/* Release: producers may reuse the space only after we are done reading it. */
		atomic_store_explicit(&rb->cons_pos, cons, memory_order_release);
		if (stop)
			break;
	}
	pthread_mutex_unlock(&rb->cons_lock);
	return n;
}

long ebpf_ringbuf__poll(struct ebpf_map *map, ebpf_ringbuf_cb cb, void *ctx, int timeout_ms)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	long sleep_ns = 50000;
	for (;;) {
		long n = ebpf_ringbuf__consume(map, cb, ctx, 0);
		if (n)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t waited_ms = (int64_t)(now.tv_sec - start.tv_sec) * 1000 +
				    (now.tv_nsec - start.tv_nsec) / 1000000;
		if (timeout_ms >= 0 && waited_ms >= timeout_ms)
			return 0;
		struct timespec ts = {0, sleep_ns};
		nanosleep(&ts, NULL);
		if (sleep_ns < 5000000)
			sleep_ns *= 2;
	}
}

uint64_t ebpf_ringbuf__avail_data(const struct ebpf_map *map)
{
	struct ringbuf *rb = rb_of((struct ebpf_map *)map);
	if (!rb)
		return 0;
	uint64_t cons = atomic_load_explicit(&rb->cons_pos, memory_order_acquire);
	uint64_t prod = atomic_load_explicit(&rb->prod_pos, memory_order_acquire);
	return prod - cons;
}

/* Map operations: a ring buffer has no keys (Linux answers -ENOTSUPP; we use -EOPNOTSUPP). */
static void *rb_lookup(struct ebpf_map *m, const void *key)
{
	return NULL;
}

static long rb_update(struct ebpf_map *m, const void *key, const void *value, uint64_t flags,
		      int all_cpus)
{
	return -EOPNOTSUPP;
}

static long rb_remove(struct ebpf_map *m, const void *key)
{
	return -EOPNOTSUPP;
}

static int rb_copy_out(struct ebpf_map *m, const void *key, void *value)
{
	return -EOPNOTSUPP;
}

static int rb_next_key(struct ebpf_map *m, const void *key, void *next_key)
{
	return -EOPNOTSUPP;
}

/* The allocation behind a ring of sz bytes: 64 bytes (the back-pointer sits at data - 8), the
 * ring, and the overflow area a record that wraps is written into (as large as the ring). */
static uint64_t area_bytes(uint64_t sz)
{
	return 64 + 2 * sz;
}

static void rb_destroy(struct ebpf_map *m)
{
	struct ringbuf *rb = (struct ringbuf *)m;
	pthread_mutex_destroy(&rb->cons_lock);
	map_mem_free(rb->base, area_bytes(rb->mask + 1));
	free(rb);
}

static uint64_t rb_count(const struct ebpf_map *m)
{
	return ebpf_ringbuf__avail_data(m);
}

static const struct map_ops rb_ops = MAP_OPS(rb);

uint64_t ringbuf_map_memory(const struct ebpf_map_def *def)
{
	return sizeof(struct ringbuf) + area_bytes(def->max_entries);
}

struct ebpf_map *ringbuf_map_create(const struct ebpf_map_def *def, char *err, size_t err_len)
{
	uint32_t sz = def->max_entries;
	if (def->key_size || def->value_size)
		return map_fail(err, err_len, def, EINVAL,
				"ring buffer key_size and value_size must be 0");
	if (sz < RB_PAGE || (sz & (sz - 1)) || sz > RB_MAX_SIZE)
		return map_fail(err, err_len, def, EINVAL,
				"ring buffer size %u must be a power of two between %u and %u", sz,
				RB_PAGE, RB_MAX_SIZE);
	struct ringbuf *rb = aligned_alloc(64, sizeof(*rb));
	unsigned char *base = rb ? map_mem_zalloc(area_bytes(sz)) : NULL;
	if (!base) {
		free(rb);
		return map_fail(err, err_len, def, ENOMEM, "out of memory for a %u byte ring", sz);
	}
	memset(rb, 0, sizeof(*rb));
	rb->base = base;
	rb->data = base + 64;
	memcpy(rb->data - sizeof(rb), &rb, sizeof(rb));
	rb->mask = sz - 1;
	atomic_init(&rb->prod_pos, 0);
	atomic_init(&rb->cons_pos, 0);
	atomic_init(&rb->prod_lock, 0);
	pthread_mutex_init(&rb->cons_lock, NULL);
	rb->m.ops = &rb_ops;
	rb->m.ncpus = 1;
	rb->m.memory = ringbuf_map_memory(def);
	return &rb->m;
}
