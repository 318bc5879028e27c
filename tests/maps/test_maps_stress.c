/* Multi-threaded stress of the maps, meant to run under ThreadSanitizer (and ASan):
 *  - readers look up hash/LRU/per-CPU hash keys inside epoch sections, atomically increment a
 *    counter word in the value and check an immutable word, while writers update (replace),
 *    delete and re-insert the same keys, and a user-side thread copies values out and iterates;
 *  - atomic increments on ARRAY/PERCPU_ARRAY values are never lost, even while a writer updates
 *    other words of the same array in place;
 *  - ring buffer: several producers (reserve/submit/discard/output) and one consumer that checks
 *    per-producer sequence numbers and record contents.
 * Any use-after-free of a retired value, torn list update or lost increment fails the test or
 * trips the sanitizer. Usage: test_maps_stress [iterations-per-thread] */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/epoch.h"
#include "ebpf/maps.h"
#include "check.h"

#define NKEYS	96
#define READERS 3
#define WRITERS 2
#define TAG(k)	(0xabc0000000000000ull | (uint64_t)(k)*2654435761u)

struct val {
	uint64_t counter; /* incremented atomically by readers */
	uint64_t tag;	  /* TAG(key), written once per element */
	uint64_t pad[2];
};

static int iters = 20000;
static struct ebpf_map *hmaps[3]; /* hash, lru, percpu hash */
static struct ebpf_map *arr, *pcarr, *rb;
static _Atomic uint64_t bad_tag, bad_rc, arr_incs, pc_incs, lookups_hit;
static _Atomic int writers_done;
static pthread_barrier_t start;

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *reader(void *arg)
{
	uint64_t s = 0x1234567ull + (uintptr_t)arg * 77, bad = 0, hits = 0, ai = 0, pi = 0;
	uint32_t zero = 0, one = 1;
	pthread_barrier_wait(&start);
	/* Until the writers are done, and at least iters rounds. */
	for (int i = 0;
	     i < iters || atomic_load_explicit(&writers_done, memory_order_relaxed) < WRITERS;
	     i++) {
		ebpf_epoch_enter();
		for (int j = 0; j < 3; j++) {
			uint32_t k = (uint32_t)(xs(&s) % NKEYS);
			struct val *v = ebpf_map__lookup_elem(hmaps[j], &k);
			if (v) {
				hits++;
				__atomic_fetch_add(&v->counter, 1, __ATOMIC_RELAXED);
				bad += __atomic_load_n(&v->tag, __ATOMIC_RELAXED) != TAG(k);
			}
		}
		uint64_t *a = ebpf_map__lookup_elem(arr, &zero);
		__atomic_fetch_add(a, 1, __ATOMIC_RELAXED);
		ai++;
		uint64_t *p = ebpf_map__lookup_elem(pcarr, &one);
		__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
		pi++;
		ebpf_epoch_exit();
	}
	atomic_fetch_add(&bad_tag, bad);
	atomic_fetch_add(&lookups_hit, hits);
	atomic_fetch_add(&arr_incs, ai);
	atomic_fetch_add(&pc_incs, pi);
	return NULL;
}

static void *writer(void *arg)
{
	uint64_t s = 0x9876543ull + (uintptr_t)arg * 1337, bad = 0;
	pthread_barrier_wait(&start);
	for (int i = 0; i < iters; i++) {
		uint32_t k = (uint32_t)(xs(&s) % NKEYS);
		int j = (int)(xs(&s) % 3);
		struct ebpf_map *m = hmaps[j];
		int op = (int)(xs(&s) % 4);
		if (op == 3) {
			long rc = ebpf_map__delete_elem(m, &k);
			bad += !(rc == 0 || rc == -ENOENT);
		} else if (j == 2) {
			/* Per-CPU hash: all CPUs' values from user space. */
			uint32_t n = ebpf_map__num_cpus(m);
			struct val *all = calloc(n, sizeof(*all));
			for (uint32_t c = 0; c < n; c++)
				all[c].tag = TAG(k);
			long rc =
			    ebpf_map__user_update(m, &k, all, op == 1 ? EBPF_NOEXIST : EBPF_ANY);
			bad += !(rc == 0 || rc == -EEXIST || rc == -E2BIG);
			free(all);
		} else {
			struct val v = {0, TAG(k), {0, 0}};
			long rc =
			    ebpf_map__update_elem(m, &k, &v, op == 1 ? EBPF_NOEXIST : EBPF_ANY);
			bad += !(rc == 0 || rc == -EEXIST || (j == 0 && rc == -E2BIG));
		}
		/* In-place array update of the element next to the readers' counter (same cache
		 * line): must not disturb the counter. */
		if (i % 16 == 0) {
			uint32_t idx = 1;
			uint64_t w = (uint64_t)i;
			bad += ebpf_map__user_update(arr, &idx, &w, EBPF_EXIST) != 0;
		}
	}
	atomic_fetch_add(&bad_rc, bad);
	atomic_fetch_add(&writers_done, 1);
	return NULL;
}

/* User side: copy values out and iterate keys while writers run. */
static void *observer(void *arg)
{
	unsigned char buf[4096];
	uint64_t bad = 0;
	pthread_barrier_wait(&start);
	while (atomic_load(&writers_done) < WRITERS) {
		for (int j = 0; j < 3; j++) {
			uint32_t k, prev, steps = 0;
			const void *pk = NULL;
			while (ebpf_map__get_next_key(hmaps[j], pk, &k) == 0 &&
			       steps++ < 4 * NKEYS) {
				if (ebpf_map__user_lookup(hmaps[j], &k, buf) == 0) {
					struct val v;
					memcpy(&v, buf, sizeof(v));
					bad += v.tag != TAG(k);
				}
				prev = k;
				pk = &prev;
			}
		}
	}
	atomic_fetch_add(&bad_tag, bad);
	return NULL;
}

/* Ring buffer: record = {producer, seq, seq ^ magic, ...filler}. */
#define PRODUCERS 2
static _Atomic int producers_done;
static uint64_t produced[PRODUCERS];

static void *producer(void *arg)
{
	uint64_t id = (uintptr_t)arg, seq = 0, s = id + 5;
	pthread_barrier_wait(&start);
	/* Every record is delivered: a full ring means wait for the consumer and retry. */
	while (seq < (uint64_t)iters) {
		uint64_t rec[8] = {id, seq, seq ^ 0x5a5a5a5a5a5a5a5aull};
		uint32_t sz = 24 + (uint32_t)(xs(&s) % 5) * 8;
		int how = (int)(xs(&s) % 3);
		if (how == 0) {
			if (ebpf_ringbuf__output(rb, rec, sz, 0) == 0)
				seq++;
			else
				sched_yield();
			continue;
		}
		uint64_t *r = ebpf_ringbuf__reserve(rb, sz, 0);
		if (!r) {
			sched_yield();
			continue;
		}
		if (how == 2 && xs(&s) % 4 == 0) {
			memset(r, 0xff, sz); /* garbage that must never be seen */
			ebpf_ringbuf__discard(r, 0);
			continue;
		}
		memcpy(r, rec, sz);
		ebpf_ringbuf__submit(r, 0);
		seq++;
	}
	produced[id] = seq;
	atomic_fetch_add(&producers_done, 1);
	return NULL;
}

struct cons_state {
	uint64_t next[PRODUCERS];
	uint64_t bad, n;
};

static int consume_cb(void *ctx, const void *data, uint32_t size)
{
	struct cons_state *c = ctx;
	uint64_t rec[3];
	if (size < 24 || size > 56) {
		c->bad++;
		return 0;
	}
	memcpy(rec, data, sizeof(rec));
	if (rec[0] >= PRODUCERS || rec[1] != c->next[rec[0]] ||
	    rec[2] != (rec[1] ^ 0x5a5a5a5a5a5a5a5aull))
		c->bad++;
	else
		c->next[rec[0]]++;
	c->n++;
	return 0;
}

static void *consumer(void *arg)
{
	struct cons_state *c = arg;
	pthread_barrier_wait(&start);
	while (atomic_load(&producers_done) < PRODUCERS)
		ebpf_ringbuf__consume(rb, consume_cb, c, 0);
	ebpf_ringbuf__consume(rb, consume_cb, c, 0);
	return NULL;
}

static struct ebpf_map *mk(uint32_t type, uint32_t ks, uint32_t vs, uint32_t n)
{
	char err[128];
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = "s",
				 .type = type,
				 .key_size = ks,
				 .value_size = vs,
				 .max_entries = n};
	struct ebpf_map *m = ebpf_map__create(&d, err, sizeof(err));
	if (!m) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return m;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iters = atoi(argv[1]);
	hmaps[0] = mk(EBPF_MAP_TYPE_HASH, 4, sizeof(struct val), NKEYS * 3 / 4);
	hmaps[1] = mk(EBPF_MAP_TYPE_LRU_HASH, 4, sizeof(struct val), NKEYS / 3);
	hmaps[2] = mk(EBPF_MAP_TYPE_PERCPU_HASH, 4, sizeof(struct val), NKEYS);
	arr = mk(EBPF_MAP_TYPE_ARRAY, 4, 8, 4);
	pcarr = mk(EBPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 2);
	rb = mk(EBPF_MAP_TYPE_RINGBUF, 0, 0, 4096);

	pthread_t t[READERS + WRITERS + 1 + PRODUCERS + 1];
	struct cons_state cs = {{0}, 0, 0};
	int n = 0;
	pthread_barrier_init(&start, NULL, (unsigned)(sizeof(t) / sizeof(t[0])));
	for (uintptr_t i = 0; i < READERS; i++)
		pthread_create(&t[n++], NULL, reader, (void *)i);
	for (uintptr_t i = 0; i < WRITERS; i++)
		pthread_create(&t[n++], NULL, writer, (void *)i);
	pthread_create(&t[n++], NULL, observer, NULL);
	for (uintptr_t i = 0; i < PRODUCERS; i++)
		pthread_create(&t[n++], NULL, producer, (void *)i);
	pthread_create(&t[n++], NULL, consumer, &cs);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);

	CHECK_EQ_U64(atomic_load(&bad_tag), 0);
	CHECK_EQ_U64(atomic_load(&bad_rc), 0);
	/* No increment lost: array element 0 is only ever incremented. */
	uint32_t k0 = 0, k1 = 1;
	uint64_t a0;
	CHECK(ebpf_map__user_lookup(arr, &k0, &a0) == 0);
	CHECK_EQ_U64(a0, atomic_load(&arr_incs));
	uint32_t ncpu = ebpf_map__num_cpus(pcarr);
	uint64_t *pc = calloc(ncpu, 8), sum = 0;
	CHECK(ebpf_map__user_lookup(pcarr, &k1, pc) == 0);
	for (uint32_t c = 0; c < ncpu; c++)
		sum += pc[c];
	CHECK_EQ_U64(sum, atomic_load(&pc_incs));
	free(pc);
	/* Ring buffer: every submitted record arrived once, in order per producer. */
	CHECK_EQ_U64(cs.bad, 0);
	for (int i = 0; i < PRODUCERS; i++)
		CHECK_EQ_U64(cs.next[i], produced[i]);
	/* Hash counts agree with iteration. */
	for (int j = 0; j < 3; j++) {
		struct ebpf_map_stats st = {.sz = sizeof(st)};
		CHECK(ebpf_map__get_stats(hmaps[j], &st) == 0);
		uint32_t k, prev, cnt = 0;
		const void *pk = NULL;
		while (ebpf_map__get_next_key(hmaps[j], pk, &k) == 0 && cnt <= NKEYS) {
			cnt++;
			prev = k;
			pk = &prev;
		}
		CHECK_EQ_U64(cnt, st.entries);
		CHECK(st.entries <= ebpf_map__max_entries(hmaps[j]));
	}
	CHECK(ebpf_epoch_synchronize() == 0);
	struct ebpf_epoch_stats es;
	ebpf_epoch_get_stats(&es);
	CHECK_EQ_U64(es.retired, es.freed);
	printf("stress: %d iterations x %d readers/%d writers/%d producers; %llu lookups hit, "
	       "%llu ring records, %llu objects retired and freed\n",
	       iters, READERS, WRITERS, PRODUCERS, (unsigned long long)atomic_load(&lookups_hit),
	       (unsigned long long)cs.n, (unsigned long long)es.freed);
	for (int j = 0; j < 3; j++)
		ebpf_map__free(hmaps[j]);
	ebpf_map__free(arr);
	ebpf_map__free(pcarr);
	ebpf_map__free(rb);
	return check_summary("maps_stress");
}
