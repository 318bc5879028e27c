/* The memory of one verification. Everything the analysis allocates (stored states, frames,
 * stack slots, histories, the pending-branch stack, per-instruction data) comes from chunks that
 * are all freed together at the end; blocks given back during the analysis (a frame's slots that
 * grew, a finished path's history) are reused by size class.
 *
 * Why: a loop's analysis stores hundreds of states. With malloc/free per state, every
 * verification grew the heap by most of a megabyte and gave it back, and the page faults and
 * TLB shootdowns of that cost half the time of verifying policies/tuned_table.c. So the chunk
 * of the last verification (one chunk of the size it needed, at most ARENA_KEEP bytes) is kept
 * for the next one: verifying the same kinds of programs again touches no new page. One chunk
 * is kept per process, handed over atomically, so concurrent verifications stay independent
 * (one of them reuses it, the others allocate their own). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#ifdef ARENA_ASAN
/* Unused and given-back arena memory stays poisoned, so AddressSanitizer still reports an
 * access past an allocation or into a block given back. */
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ARENA_ALIGN 16
#define ARENA_FIRST (64u << 10) /* the first chunk when none is kept */
#define MIN_CLASS   6		/* blocks of 64 bytes and more */

struct arena_chunk {
	struct arena_chunk *next;
	size_t size; /* bytes after the header */
	size_t used;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

static _Atomic(struct arena_chunk *) kept;

/* dlclose of a library that contains the engine, and the end of the process */
__attribute__((destructor)) static void arena_drop_kept(void)
{
	free(atomic_exchange(&kept, NULL));
}

static struct arena_chunk *chunk_new(size_t size)
{
	struct arena_chunk *c = malloc(sizeof(*c) + size);

	if (!c)
		return NULL;
	c->next = NULL;
	c->size = size;
	c->used = 0;
	POISON(c->data, size);
	return c;
}

void arena_init(struct arena *a)
{
	memset(a, 0, sizeof(*a));
	a->head = atomic_exchange(&kept, NULL);
	if (a->head)
		a->total = a->head->size;
}

void *arena_alloc(struct arena *a, size_t asked)
{
	struct arena_chunk *c = a->head;
	size_t size = (asked + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p;

	if (!asked || asked > SIZE_MAX / 4)
		return NULL;
	if (!c || c->size - c->used < size) {
		size_t want = c ? c->size * 2 : ARENA_FIRST;
		while (want < size)
			want *= 2;
		c = chunk_new(want);
		if (!c)
			return NULL;
		c->next = a->head;
		a->head = c;
		a->total += want;
	}
	p = c->data + c->used;
	c->used += size;
	UNPOISON(p, asked);
	return p;
}

void *arena_zalloc(struct arena *a, size_t size)
{
	void *p = arena_alloc(a, size);

	if (p)
		memset(p, 0, size);
	return p;
}

static unsigned size_class(size_t size)
{
	unsigned k = MIN_CLASS;

	while (((size_t)1 << k) < size)
		k++;
	return k;
}

void *arena_block(struct arena *a, size_t size, size_t *cap)
{
	unsigned k = size_class(size);
	void *p;

	if (k >= ARENA_CLASSES)
		return NULL;
	*cap = (size_t)1 << k;
	p = a->free_blocks[k];
	if (p) {
		UNPOISON(p, *cap);
		memcpy(&a->free_blocks[k], p, sizeof(void *));
		return p;
	}
	return arena_alloc(a, *cap);
}

void arena_unblock(struct arena *a, void *p, size_t cap)
{
	unsigned k;

	if (!p)
		return;
	k = size_class(cap);
	memcpy(p, &a->free_blocks[k], sizeof(void *));
	a->free_blocks[k] = p;
	POISON((unsigned char *)p + sizeof(void *), cap - sizeof(void *));
}

void *arena_regrow(struct arena *a, void *p, size_t old_cap, size_t used, size_t size, size_t *cap)
{
	void *q = arena_block(a, size, cap);

	if (!q)
		return NULL;
	if (p && used)
		memcpy(q, p, used);
	if (p)
		arena_unblock(a, p, old_cap);
	return q;
}

void arena_release(struct arena *a)
{
	struct arena_chunk *keep = a->head, *c, *next;

	/* Several chunks: the next verification gets one chunk of their total size instead (its
	 * pages are touched once, by that verification, and kept from then on). */
	if (keep && keep->next) {
		size_t size = a->total < ARENA_KEEP ? a->total : ARENA_KEEP;
		keep = chunk_new(size);
	}
	for (c = a->head; c; c = next) {
		next = c->next;
		if (c != keep)
			free(c);
	}
	if (keep && keep->size <= ARENA_KEEP) {
		struct arena_chunk *expected = NULL;
		keep->used = 0;
		keep->next = NULL;
		POISON(keep->data, keep->size);
		if (!atomic_compare_exchange_strong(&kept, &expected, keep))
			free(keep);
	} else {
		free(keep);
	}
	memset(a, 0, sizeof(*a));
}
