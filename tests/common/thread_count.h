/* The calling process's thread count, for tests that check that a library leaves no thread
 * behind (load/unload cycles). */
#ifndef NCCLBPF_TEST_THREAD_COUNT_H
#define NCCLBPF_TEST_THREAD_COUNT_H

#include <dirent.h>

static inline int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

#endif
