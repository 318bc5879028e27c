/* Paths relative to the running executable (self_path.h). */
#include "self_path.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int self_path(const char *rel, char *out, size_t len)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash = NULL;
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
	}
	if (slash) {
		*slash = 0;
		int w = snprintf(out, len, "%s/%s", exe, rel);
		char real[PATH_MAX];
		if (w > 0 && (size_t)w < len && realpath(out, real) && strlen(real) < len)
			strcpy(out, real); /* shown to users: without the bin/.. detour */
		if (w > 0 && (size_t)w < len)
			return 0;
	}
	snprintf(out, len, "%s", rel);
	return -1;
}
