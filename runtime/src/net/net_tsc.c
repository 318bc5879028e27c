/* Posting stamps for net durations from the TSC (rt_internal.h: rt_tsc_*). A duration needs no
 * absolute time, only a tick rate, so a post is stamped with rdtsc (about half a vDSO
 * CLOCK_MONOTONIC read on the GPU host: 17 against 30 ns) and the completion converts the tick
 * difference. Used only where the kernel itself keeps time with the TSC (its clocksource is
 * "tsc": it found the counter invariant and synchronised across CPUs), or when forced with
 * NCCLBPF_NET_TSC=1 on a CPU that reports an invariant TSC; NCCLBPF_NET_TSC=0 turns it off. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclbpf/envvars.h"
#include "net.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

struct rt_tsc_state rt_tsc;

#if defined(__x86_64__)
static int kernel_uses_tsc(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) && !strcmp(buf, "tsc\n");
	fclose(f);
	return ok;
}

static int cpu_invariant_tsc(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1;
}

/* One (ticks, ns) pair: the clock read bracketed by two TSC reads, the midpoint kept; of 16
 * tries the one with the narrowest bracket, so that a preemption inside one try (which would
 * shift the pair by up to a time slice) does not count. Returns the bracket in ticks. */
static uint64_t sample(uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 16; i++) {
		uint64_t a = __rdtsc();
		uint64_t n = rt_now_ns();
		uint64_t b = __rdtsc();
		if (b >= a && b - a < best) {
			best = b - a;
			*ticks = a + (b - a) / 2;
			*ns = n;
		}
	}
	return best;
}

/* ns per tick over a 2 ms spin, 0 when a pair could not be taken cleanly. */
static double rate_over_2ms(void)
{
	uint64_t t0, n0, t1, n1;
	if (sample(&t0, &n0) == UINT64_MAX)
		return 0;
	do
		if (sample(&t1, &n1) == UINT64_MAX)
			return 0;
	while (n1 - n0 < 2000000);
	return t1 > t0 ? (double)(n1 - n0) / (double)(t1 - t0) : 0;
}

/* Two 2 ms measurements that must agree within 1e-4 (up to 4 attempts); a host where they do
 * not (a TSC that is not steady, or a CPU taken away for whole slices at every try) keeps
 * CLOCK_MONOTONIC. The rate's error is then a few 1e-5: well under a ns on any duration a
 * network message takes. */
static void setup(void)
{
	int choice = ncclbpf_env_enum("NCCLBPF_NET_TSC"); /* -1 auto, 0 off, 1 forced */
	int forced = choice == 1;
	if (choice == 0 || !cpu_invariant_tsc() || !(forced || kernel_uses_tsc()))
		return;
	for (int attempt = 0; attempt < 4; attempt++) {
		double r1 = rate_over_2ms(), r2 = rate_over_2ms();
		if (!(r1 > 0.05 && r1 < 20)) /* 50 MHz .. 20 GHz */
			continue;
		double diff = r1 > r2 ? r1 - r2 : r2 - r1;
		if (diff > r1 * 1e-4)
			continue;
		rt_tsc.mult = (uint64_t)((r1 + r2) / 2 * 4294967296.0);
		__atomic_store_n(&rt_tsc.on, 1, __ATOMIC_RELEASE);
		return;
	}
}

uint64_t rt_tsc_read(void)
{
	return __rdtsc();
}
#else
static void setup(void)
{
}

uint64_t rt_tsc_read(void)
{
	return 0;
}
#endif

void rt_tsc_setup(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, setup);
}

uint64_t rt_tsc_ticks_to_ns(uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * rt_tsc.mult) >> 32);
}

uint64_t ncclbpf_rt_net_stamp(void)
{
	/* acquire: a tagged stamp implies the completion sees mult */
	if (__atomic_load_n(&rt_tsc.on, __ATOMIC_ACQUIRE))
		return (rt_tsc_read() & ~RT_TSC_TAG) | RT_TSC_TAG;
	return rt_now_ns();
}

int ncclbpf_rt_net_tsc(void)
{
	return __atomic_load_n(&rt_tsc.on, __ATOMIC_RELAXED);
}
