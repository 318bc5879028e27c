/* The runtime's leaf: its process-wide state, logging and clock, which every folder of
 * runtime/src uses and which uses none of them. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "rt_internal.h"

struct rt_state rt = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .reload_lock = PTHREAD_MUTEX_INITIALIZER,
    .next_version = 1,
};

/* The words every call reads (rt_hot.h: the active policy, which the policy folder swaps, its
 * keeping hint and the trace descriptor), in a cache line of their own. */
struct ncclbpf_rt_hot ncclbpf_rt_hot_ = {.trace_fd = -1};
_Static_assert(sizeof(struct ncclbpf_rt_hot) == 64, "one cache line of its own");

static _Atomic(ncclbpf_log_fn) log_fn;

void ncclbpf_rt_set_logger(ncclbpf_log_fn fn)
{
	atomic_store(&log_fn, fn);
}

void ncclbpf_rt_log(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ncclbpf_log_fn fn = atomic_load(&log_fn);
	if (fn)
		fn(level, buf);
	else if (level == NCCLBPF_LOG_WARN || rt.debug)
		fprintf(stderr, "NCCLbpf %s: %s\n", level == NCCLBPF_LOG_WARN ? "WARN" : "INFO",
			buf);
}
/* The runtime's files call it by its short name (rt_internal.h): the same function. */
void rt_log(int level, const char *fmt, ...) __attribute__((alias("ncclbpf_rt_log")));

uint64_t rt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct timespec rt_time_after(clockid_t clk, uint64_t ns)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	ns += (uint64_t)ts.tv_nsec;
	ts.tv_sec += (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	return ts;
}
