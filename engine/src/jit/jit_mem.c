/* Executable memory for the JIT, W^X: a backend writes code into a read+write mapping, which
 * jit.c then seals read+execute (never both at once). A file of its own so that the driver and
 * every backend use it without depending on each other. */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit_backend.h"

void *jit_mem_alloc(size_t size, const void *near_hint, size_t *mapped)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (size + page - 1) & ~(page - 1);
	void *hint = NULL;
	void *mem;

	/* Ask for an address below the code that holds the helpers, so that helper calls can use
	 * a 32-bit displacement. Only a hint: the kernel places the mapping elsewhere when the
	 * range is taken, and the backend then calls through a register. */
	if (near_hint) {
		uintptr_t h = (uintptr_t)near_hint & ~(uintptr_t)(page - 1);

		if (h > (64u << 20))
			hint = (void *)(h - (32u << 20));
	}
	mem = mmap(hint, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	*mapped = len;
	return mem;
}

int jit_mem_seal(void *mem, size_t mapped)
{
	/* Some architectures need the instruction cache told; a no-op on x86-64. */
	__builtin___clear_cache((char *)mem, (char *)mem + mapped);
	return mprotect(mem, mapped, PROT_READ | PROT_EXEC) ? -errno : 0;
}

void jit_mem_free(void *mem, size_t mapped)
{
	if (mem)
		munmap(mem, mapped);
}
