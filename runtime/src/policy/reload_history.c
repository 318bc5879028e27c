/* The last RT_RELOAD_HISTORY reload attempts (success or failure), which the inspection shows
 * (`ncclbpf stat` and `ps`). Written by the reload path (under reload_lock, off the hot path),
 * read by the inspection thread; its own small lock keeps the two apart. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "policy.h"

static struct {
	pthread_mutex_t lock;
	struct rt_reload_event ev[RT_RELOAD_HISTORY];
	uint64_t n; /* attempts ever; the newest is ev[(n - 1) % RT_RELOAD_HISTORY] */
} hist = {.lock = PTHREAD_MUTEX_INITIALIZER};

void rt_reload_history_note(const char *path, const struct ncclbpf_reload_report *r)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct rt_reload_event e = {
	    .unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
	    .err = r->err,
	    .version = r->version,
	    .total_ns = r->total_ns,
	    .verify_ns = r->verify_ns,
	    .jit_ns = r->jit_ns,
	};
	/* Truncated copies: the history is for reading, the full message was logged. */
	snprintf(e.path, sizeof(e.path), "%.*s", (int)sizeof(e.path) - 1, path ? path : "");
	snprintf(e.msg, sizeof(e.msg), "%.*s", (int)sizeof(e.msg) - 1, r->msg);
	pthread_mutex_lock(&hist.lock);
	hist.ev[hist.n % RT_RELOAD_HISTORY] = e;
	hist.n++;
	pthread_mutex_unlock(&hist.lock);
}

unsigned rt_reload_history(struct rt_reload_event *out, unsigned max, uint64_t *total)
{
	pthread_mutex_lock(&hist.lock);
	uint64_t n = hist.n;
	unsigned k = n < RT_RELOAD_HISTORY ? (unsigned)n : RT_RELOAD_HISTORY;
	if (k > max)
		k = max;
	for (unsigned i = 0; i < k; i++)
		out[i] = hist.ev[(n - k + i) % RT_RELOAD_HISTORY];
	pthread_mutex_unlock(&hist.lock);
	if (total)
		*total = n;
	return k;
}
