/* Interleaved A/B rounds (bench_ab.h). */
#include "bench_ab.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void ab_quartiles(double *v, size_t n, double *lo, double *mid, double *hi)
{
	*lo = *mid = *hi = 0;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	*lo = v[(n - 1) / 4];
	*mid = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*hi = v[(3 * (n - 1) + 3) / 4];
}

/* Median and quartiles over the rounds of a[r] - b[r] into *mid, *lo, *hi (d: scratch). */
static void round_diffs(const double *a, const double *b, int rounds, double *d, double *lo,
			double *mid, double *hi)
{
	for (int r = 0; r < rounds; r++)
		d[r] = a[r] - b[r];
	ab_quartiles(d, (size_t)rounds, lo, mid, hi);
}

void ab_run(const struct ab_side *sides, int n, int rounds, long calls, int ref2,
	    struct ab_result *out)
{
	double *ns[AB_MAX_SIDES] = {0};
	int ok[AB_MAX_SIDES];
	if (n > AB_MAX_SIDES)
		n = AB_MAX_SIDES;
	for (int k = 0; k < n; k++) {
		ns[k] = calloc((size_t)rounds, sizeof(double));
		ok[k] = ns[k] && sides[k].round(sides[k].arg, calls / 4 + 1) == 0; /* warm-up */
	}
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < n; i++) {
			int k = (i + r) % n; /* each side goes first in turn */
			if (!ok[k])
				continue;
			uint64_t t0 = cpu_ns();
			ok[k] = sides[k].round(sides[k].arg, calls) == 0;
			ns[k][r] = (double)(cpu_ns() - t0) / (double)calls;
		}
	/* Differences first: the medians below sort each side's samples in place. */
	double *d = calloc((size_t)rounds, sizeof(double));
	if (ref2 >= n)
		ref2 = -1;
	for (int k = 0; k < n; k++) {
		struct ab_result *o = &out[k];
		o->ok = ok[k] && d;
		o->ns = o->diff = o->diff_lo = o->diff_hi = 0;
		o->diff2 = o->diff2_lo = o->diff2_hi = 0;
		if (o->ok && ref2 >= 0 && ok[ref2])
			round_diffs(ns[k], ns[ref2], rounds, d, &o->diff2_lo, &o->diff2,
				    &o->diff2_hi);
		if (o->ok && ok[0])
			round_diffs(ns[k], ns[0], rounds, d, &o->diff_lo, &o->diff, &o->diff_hi);
	}
	for (int k = 0; k < n; k++)
		if (out[k].ok) {
			double lo, hi;
			ab_quartiles(ns[k], (size_t)rounds, &lo, &out[k].ns, &hi);
		}
	free(d);
	for (int k = 0; k < n; k++)
		free(ns[k]);
}
