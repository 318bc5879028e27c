/* The calling process's resident set in bytes (/proc/self/statm), for tests that show memory is
 * committed lazily; 0 when it cannot be read. */
#ifndef NCCLBPF_TEST_RSS_H
#define NCCLBPF_TEST_RSS_H

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static inline uint64_t test_rss_bytes(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%llu %llu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

#endif
