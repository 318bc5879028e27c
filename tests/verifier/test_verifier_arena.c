/* The verifier's arena (engine/src/verifier/arena.c): blocks given back are reused by size
 * class, regrowing keeps the contents, the memory of one verification is kept for the next one
 * (its chunks, at most ARENA_KEEP bytes, taken again in the same order), and concurrent
 * verifications
 * never share memory (built with ThreadSanitizer too), and a new chunk's pages are present
 * before anything touches them. With AddressSanitizer, memory past an allocation and blocks
 * given back are poisoned.
 * Usage: test_verifier_arena [ITERATIONS per thread] */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "state.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define TEST_ASAN 1
#endif

#define THREADS 4

static void test_blocks(void)
{
	struct arena a;
	size_t cap, cap2;
	unsigned char *p, *q, *r;

	arena_init(&a);
	p = arena_block(&a, 40, &cap);
	CHECK(p && cap == 64);
	arena_unblock(&a, p, cap);
	/* the same class: the block given back */
	q = arena_block(&a, 64, &cap2);
	CHECK(q == p && cap2 == 64);
	/* another class: another block */
	r = arena_block(&a, 65, &cap2);
	CHECK(r && r != p && cap2 == 128);
	for (int i = 0; i < 64; i++)
		q[i] = (unsigned char)i;
	q = arena_regrow(&a, q, 64, 64, 1000, &cap2);
	CHECK(q && cap2 == 1024);
	for (int i = 0; i < 64; i++)
		CHECKF(q[i] == i, "byte %d lost by regrow", i);
	/* the old block was given back */
	CHECK(arena_block(&a, 64, &cap) == p);
#ifdef TEST_ASAN
	arena_unblock(&a, p, 64);
	CHECK(__asan_address_is_poisoned(p + 16));
	r = arena_alloc(&a, 24);
	CHECK(r && !__asan_address_is_poisoned(r + 23) && __asan_address_is_poisoned(r + 24));
#endif
	arena_release(&a);
}

/* What one verification takes: several chunks the first time, none the next time, which gets
 * the very memory the first one used, allocation by allocation: it touches no page the first
 * one did not (a fresh chunk of the same total size would be all new pages again). */
static void test_kept(void)
{
	struct arena a;
	size_t first_total;
	void *first[40];

	arena_init(&a);
	arena_release(&a); /* whatever an earlier part left */
	arena_init(&a);
	for (int i = 0; i < 40; i++)
		CHECK((first[i] = arena_alloc(&a, 10000)) != NULL);
	first_total = a.total;
	CHECK(first_total >= 400000);
	arena_release(&a);
	arena_init(&a);
	CHECK_EQ_U64(a.total, first_total); /* its chunks, kept */
	int same = 0;
	for (int i = 0; i < 40; i++)
		same += arena_alloc(&a, 10000) == first[i];
	CHECK_EQ_U64(same, 40);
	CHECK_EQ_U64(a.total, first_total); /* the same work took no new memory */
	arena_release(&a);

	/* more than ARENA_KEEP: at most that is kept */
	arena_init(&a);
	for (int i = 0; i < 8; i++)
		CHECK(arena_alloc(&a, ARENA_KEEP / 4) != NULL);
	CHECK(a.total > ARENA_KEEP);
	arena_release(&a);
	arena_init(&a);
	CHECK(a.total <= ARENA_KEEP);
	arena_release(&a);
}

#ifdef TEST_ASAN
/* A chunk given back to the system leaves no poison behind: the shadow outlives the mapping, so
 * whatever is mapped there next (here another thread's new chunk, whose header write was
 * reported as a use-after-poison) would inherit it. Two arenas at once: the second one's chunks
 * are not kept (the first one's are) but unmapped. */
static void test_unmapped_unpoisoned(void)
{
	struct arena a, b;
	unsigned char *p;

	arena_init(&a);
	arena_release(&a); /* whatever an earlier part left */
	arena_init(&a);
	arena_init(&b);
	CHECK(arena_alloc(&a, 1000) != NULL);
	p = arena_alloc(&b, 1000);
	CHECK(p != NULL);
	arena_release(&a); /* kept */
	arena_release(&b); /* unmapped */
	CHECKF(!__asan_region_is_poisoned(p, 60000),
	       "the unmapped chunk's addresses stay poisoned");
	arena_init(&a);
	arena_release(&a);
}
#endif

/* A new chunk comes with its pages present: the first verification in a process faulted its
 * memory in one page at a time before (169 faults for policies/tuned_table.c), each fault
 * costing microseconds on a virtual machine. mincore() says which pages are present; none of
 * these has been touched by this process. */
static void test_populated(void)
{
	struct arena a;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = ARENA_KEEP + 3 * page;
	unsigned char *p, vec[(ARENA_KEEP >> 12) + 8];
	uintptr_t start;
	size_t n, present = 0;

	/* larger than anything kept, so a chunk of its own, mapped now */
	arena_init(&a);
	p = arena_alloc(&a, len);
	CHECK(p != NULL);
	if (p) {
		start = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
		n = ((uintptr_t)p + len - start) / page;
		if (n > sizeof(vec))
			n = sizeof(vec);
		CHECK(mincore((void *)start, n * page, vec) == 0);
		for (size_t i = 0; i < n; i++)
			present += vec[i] & 1;
		CHECKF(present == n, "%zu of %zu pages of a new chunk present before any touch",
		       present, n);
	}
	arena_release(&a);
}

/* Each thread fills what it allocates with its own number and checks it before giving it
 * all back: two verifications sharing memory would overwrite each other's bytes. */
struct job {
	unsigned char id;
	long iterations;
	int bad;
};

static void *run_job(void *arg)
{
	struct job *j = arg;
	unsigned char *p[16];
	size_t cap[16];

	for (long it = 0; it < j->iterations; it++) {
		struct arena a;
		arena_init(&a);
		for (int k = 0; k < 16; k++) {
			size_t n = (size_t)(64 + (it * 7 + k * 131) % 5000);
			p[k] = arena_block(&a, n, &cap[k]);
			if (!p[k]) {
				j->bad++;
				break;
			}
			memset(p[k], j->id, cap[k]);
		}
		for (int k = 0; k < 16 && p[k]; k++)
			for (size_t b = 0; b < cap[k]; b += 61)
				j->bad += p[k][b] != j->id;
		arena_release(&a);
	}
	return NULL;
}

static void test_threads(long iterations)
{
	pthread_t t[THREADS];
	struct job j[THREADS];

	for (int i = 0; i < THREADS; i++) {
		j[i] = (struct job){.id = (unsigned char)(i + 1), .iterations = iterations};
		CHECK(pthread_create(&t[i], NULL, run_job, &j[i]) == 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		CHECKF(j[i].bad == 0, "thread %d found %d foreign bytes", i, j[i].bad);
	}
}

int main(int argc, char **argv)
{
	long iterations = argc > 1 ? atol(argv[1]) : 2000;

	test_blocks();
	test_kept();
	test_populated();
#ifdef TEST_ASAN
	test_unmapped_unpoisoned();
#endif
	test_threads(iterations);
	return check_summary("test_verifier_arena");
}
