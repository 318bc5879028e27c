/* A/B measurement for `ncclbpf bench`: several sides (a native baseline, our library, ...) run
 * in one process, round by round, in an order that rotates every round, so that whatever the
 * machine does meanwhile (other processes, frequency changes) hits every side alike. A round of
 * a side is `calls` calls timed with the thread's CPU clock (time spent descheduled is not the
 * call's cost); the figure that matters is the per-round difference against side 0, whose
 * median and quartiles over the rounds are reported. */
#ifndef NCCLBPF_BENCH_AB_H
#define NCCLBPF_BENCH_AB_H

#include <stddef.h>

#define AB_MAX_SIDES 4

struct ab_side {
	/* Makes `calls` calls (one round); returns 0, or -1 when the side cannot run. */
	int (*round)(void *arg, long calls);
	void *arg;
};

struct ab_result {
	int ok;			 /* every round ran */
	double ns;		 /* median ns per call over the rounds */
	double diff;		 /* median over rounds of (this side - side 0), ns per call */
	double diff_lo, diff_hi; /* its quartiles (25th and 75th percentile) */
	/* The same against side ref2 of ab_run (0 when it was not given or did not run). */
	double diff2, diff2_lo, diff2_hi;
};

/* Runs one warm-up round per side, then `rounds` rounds. out[k] describes side k (out[0].diff
 * is 0), with the per-round differences against side 0 and, when ref2 >= 0, against side
 * ref2. A side that fails once is not run again (ok 0). */
void ab_run(const struct ab_side *sides, int n, int rounds, long calls, int ref2,
	    struct ab_result *out);

/* Median and quartiles of v[0..n) (sorts v). */
void ab_quartiles(double *v, size_t n, double *lo, double *mid, double *hi);

#endif
