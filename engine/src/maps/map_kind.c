/* What every map kind shares beyond map_kind.h's inline helpers: the one formatter of a map's
 * creation errors ("map 'NAME': ..."). In a file of its own so that the kinds (array.c, hash.c,
 * ringbuf.c) and map.c, which dispatches to them, all depend on it and not on one another. */
#include "err.h"
#include "map_kind.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

void *map_fail(char *err, size_t err_len, const struct ebpf_map_def *def, int errnum,
	       const char *fmt, ...)
{
	int n = err && err_len
		    ? snprintf(err, err_len, "map '%s': ", def && def->name ? def->name : "")
		    : -1;
	if (n >= 0 && (size_t)n < err_len) {
		va_list ap;
		va_start(ap, fmt);
		ebpf_verrf(err + n, err_len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	errno = errnum;
	return NULL;
}
