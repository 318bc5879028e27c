/* Memory behind map values (map_kind.h: map_mem_zalloc).
 *
 * A large area comes straight from the kernel as a private anonymous mapping with MAP_NORESERVE:
 * its pages are zero and cost no RSS (nor, where overcommit allows, commit charge) until a
 * program or user-side update touches them, so a bundle that declares a big array but uses a
 * corner of it pays for the corner. Small areas come from the heap, where sanitizer builds keep
 * their red zones around them; the heap's own large blocks would also be mmapped, but
 * aligned_alloc plus the zeroing a map needs would commit every page. */
#include "map_kind.h"

#include <stdlib.h>
#include <sys/mman.h>

/* Below this, a mapping's page granularity and system call cost more than they save. */
#define MAP_MEM_LAZY_MIN (256u << 10)

void *map_mem_zalloc(uint64_t size)
{
	if (size == 0 || size > SIZE_MAX - 63)
		return NULL;
	if (size < MAP_MEM_LAZY_MIN) {
		size_t rounded = ((size_t)size + 63) & ~(size_t)63; /* aligned_alloc's rule */
		void *p = aligned_alloc(64, rounded);
		if (p)
			memset(p, 0, rounded);
		return p;
	}
	void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p; /* page aligned, zero filled */
}

void map_mem_free(void *p, uint64_t size)
{
	if (!p)
		return;
	if (size < MAP_MEM_LAZY_MIN)
		free(p);
	else
		munmap(p, (size_t)size);
}
