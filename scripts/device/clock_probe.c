/* Cost of the clocks a net hook could use, in a tight loop (throughput, not latency):
 * CLOCK_MONOTONIC through the vDSO, CLOCK_MONOTONIC_COARSE, rdtsc, rdtscp. Device probe for
 * scripts/device/runJ.sh (gcc -O2 clock_probe.c); x86-64 only. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int main(void)
{
	const int n = 5000000;
	uint64_t s = 0;
	unsigned aux;
	for (int r = 0; r < 3; r++) {
		uint64_t t0 = now(CLOCK_MONOTONIC);
		for (int i = 0; i < n; i++)
			s += now(CLOCK_MONOTONIC);
		uint64_t t1 = now(CLOCK_MONOTONIC);
		for (int i = 0; i < n; i++)
			s += now(CLOCK_MONOTONIC_COARSE);
		uint64_t t2 = now(CLOCK_MONOTONIC);
		for (int i = 0; i < n; i++)
			s += __rdtsc();
		uint64_t t3 = now(CLOCK_MONOTONIC);
		for (int i = 0; i < n; i++)
			s += __rdtscp(&aux);
		uint64_t t4 = now(CLOCK_MONOTONIC);
		printf("ns per read: monotonic %.1f coarse %.1f rdtsc %.1f rdtscp %.1f\n",
		       (double)(t1 - t0) / n, (double)(t2 - t1) / n, (double)(t3 - t2) / n,
		       (double)(t4 - t3) / n);
	}
	return s == 1;
}
