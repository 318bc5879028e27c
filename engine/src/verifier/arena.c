/* The memory of one verification. Everything the analysis allocates (stored states, frames,
 * stack slots, histories, the pending-branch stack, per-instruction data) comes from chunks that
 * are all freed together at the end; blocks given back during the analysis (a frame's slots that
 * grew, a finished path's history) are reused by size class.
 *
 * Why: a loop's analysis stores hundreds of states. With malloc/free per state, every
 * verification grew the heap by most of a megabyte and gave it back, and the page faults and
 * TLB shootdowns of that cost half the time of verifying policies/tuned_table.c. So the chunks
 * of the last verification (at most ARENA_KEEP bytes) are kept for the next one, which takes
 * them in the order they were allocated: verifying the same program again allocates the same
 * sizes in the same order, so it touches exactly the pages the last one did, and none is new.
 * (Keeping one fresh chunk of their total size instead made the second verification of a
 * process touch all its memory for the first time again: 184 page faults for
 * policies/tuned_table.c.) The chunks are kept per process as one list, handed over
 * atomically, so concurrent verifications stay independent (one of them reuses it, the others
 * allocate their own).
 *
 * Chunks are mapped with their pages populated (MAP_POPULATE): a process's first verification
 * otherwise faulted its memory in one page at a time, and on a virtual machine a fault costs
 * microseconds (the GPU host about 2.5 us: the first verification's time over the second,
 * divided by its faults; the development machine about 12 us), where populating costs well
 * under 1 us a page: policies/tuned_table.c's first verification in a process faulted 169
 * times. Chunks double in size up to ARENA_GROW only, so at most that much of what is
 * populated goes unused. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
#define ARENA_FIRST (64u << 10)	 /* the first chunk when none is kept */
#define ARENA_GROW  (256u << 10) /* chunks double up to this size (or what one request needs) */
#define MIN_CLASS   6		 /* blocks of 64 bytes and more */

struct arena_chunk {
	struct arena_chunk *next;
	size_t size; /* bytes after the header */
	size_t used;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

static _Atomic(struct arena_chunk *) kept;

/* AddressSanitizer's shadow outlives the mapping: a later mapping at these addresses (another
 * thread's chunk, any mmap of the process) would inherit the poison and report its first write
 * (seen as a use-after-poison on a new chunk's header). */
static void chunk_unmap(struct arena_chunk *c)
{
	size_t len = sizeof(*c) + c->size;

	UNPOISON(c, len);
	munmap(c, len);
}

static void chunks_free(struct arena_chunk *c)
{
	for (struct arena_chunk *next; c; c = next) {
		next = c->next;
		chunk_unmap(c);
	}
}

/* dlclose of a library that contains the engine, and the end of the process */
__attribute__((destructor)) static void arena_drop_kept(void)
{
	chunks_free(atomic_exchange(&kept, NULL));
}

/* A chunk of at least size bytes after its header, its pages present (c->size: all of them). */
static struct arena_chunk *chunk_new(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len;
	struct arena_chunk *c;

	if (size > SIZE_MAX / 2)
		return NULL;
	len = (sizeof(*c) + size + page - 1) & ~(page - 1);
	c = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1,
		 0);
	if (c == MAP_FAILED)
		return NULL;
	c->next = NULL;
	c->size = len - sizeof(*c);
	c->used = 0;
	POISON(c->data, c->size); /* the whole mapping: the page tail too */
	return c;
}

void arena_init(struct arena *a)
{
	memset(a, 0, sizeof(*a));
	a->spare = atomic_exchange(&kept, NULL);
	for (struct arena_chunk *c = a->spare; c; c = c->next)
		a->total += c->size;
}

/* The chunk to allocate size bytes from once the current one is full: the next kept chunk
 * (one too small for this request is passed over, still kept), else a new one twice the size
 * of the last. */
static struct arena_chunk *next_chunk(struct arena *a, size_t size)
{
	struct arena_chunk *c;

	while ((c = a->spare)) {
		a->spare = c->next;
		c->next = a->head;
		a->head = c;
		if (c->size >= size)
			return c;
	}
	size_t want = a->head ? a->head->size * 2 : ARENA_FIRST;

	if (want > ARENA_GROW) /* its pages are populated: keep what may go unused small */
		want = ARENA_GROW;
	while (want < size)
		want *= 2;
	c = chunk_new(want);
	if (c) {
		c->next = a->head;
		a->head = c;
		a->total += c->size;
	}
	return c;
}

void *arena_alloc(struct arena *a, size_t asked)
{
	struct arena_chunk *c = a->head;
	size_t size = (asked + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p;

	if (!asked || asked > SIZE_MAX / 4)
		return NULL;
	if (!c || c->size - c->used < size) {
		c = next_chunk(a, size);
		if (!c)
			return NULL;
	}
	p = c->data + c->used;
	c->used += size;
	a->allocated += size;
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
	/* Allocation order: the chunks allocated from, oldest first, then the unused kept ones. */
	struct arena_chunk *order = a->spare, *c, *next, *keep = NULL, **tail = &keep;
	size_t total = 0;

	for (c = a->head; c; c = next) {
		next = c->next;
		c->next = order;
		order = c;
	}
	for (c = order; c; c = next) {
		next = c->next;
		c->next = NULL;
		if (total + c->size > ARENA_KEEP) {
			chunk_unmap(c);
			continue;
		}
		total += c->size;
		c->used = 0;
		POISON(c->data, c->size);
		*tail = c;
		tail = &c->next;
	}
	struct arena_chunk *expected = NULL;
	if (keep && !atomic_compare_exchange_strong(&kept, &expected, keep))
		chunks_free(keep);
	memset(a, 0, sizeof(*a));
}
