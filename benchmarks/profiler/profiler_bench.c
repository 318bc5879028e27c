/* profiler_bench: what a profiler event costs through the real exported callbacks.
 *
 * The plugin library is dlopened as NCCL does (RTLD_NOW | RTLD_LOCAL) and driven through
 * ncclProfiler_v5: per collective, Coll start + stop (host side) and, per channel, KernelCh
 * start + KernelChStop record + stop: 1 + CHANNELS events, 2 + 3 * CHANNELS callbacks. NCCL's
 * own gate (`if (mask & type)`) is played before every call, as NCCL does. Each case runs in its
 * own process (the runtime loads NCCLBPF_POLICY once per process), all in one run:
 *
 *   mask-0     a bundle without a profiler program: the plugin sets the mask to 0, so NCCL makes
 *              no call at all; what remains is NCCL's gate (a load and a branch).
 *   none       the same bundle, callbacks made anyway (events already in flight when a reload
 *              removed the program): the adapter's floor.
 *   noop       a profiler program that returns at once: adapter + program dispatch.
 *   latency    policies/profiler_latency.c: hash-map aggregation + ring-buffer record per
 *              collective (the shipped telemetry policy).
 *
 * usage: profiler_bench PLUGIN.so NOOP_BUNDLE.o PROF_NOOP.o PROFILER_LATENCY.o [COLLECTIVES] */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler.h"
#include "prof_drive.h"

#define CHANNELS PROF_DRIVE_CHANNELS

/* Thread CPU time: the build machines are shared, and time spent descheduled is not the
 * callbacks' cost. */
static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Warnings only (a JIT failure that falls back to the interpreter, for one, would otherwise
 * pass unnoticed and change what is measured). */
static void quiet(ncclDebugLogLevel l, unsigned long f, const char *file, int line, const char *fmt,
		  ...)
{
	(void)f;
	(void)file;
	(void)line;
	if (l != NCCL_LOG_WARN)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "profiler_bench: warning: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static int nccl_mask; /* NCCL's process-global activation mask */

/* Runs in a child process; writes ns per collective to fd. */
static int measure(const char *lib, const char *bundle, int force_calls, long n, int fd)
{
	setenv("NCCLBPF_POLICY", bundle, 1);
	setenv("NCCLBPF_WATCH", "0", 1);
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	const ncclProfiler_v5_t *t = h ? dlsym(h, "ncclProfiler_v5") : NULL;
	if (!t) {
		fprintf(stderr, "profiler_bench: %s: %s\n", lib,
			h ? "no ncclProfiler_v5" : dlerror());
		return 1;
	}
	void *ctx = NULL;
	t->init(&ctx, 0x1234, &nccl_mask, "bench", 1, 8, 0, quiet);
	int real_mask = nccl_mask;
	if (force_calls)
		nccl_mask = ncclProfileColl | ncclProfileKernelCh;
	for (long i = 0; i < n / 10; i++) /* warm-up */
		prof_drive_collective(t, ctx, &nccl_mask, (uint64_t)i);
	double best = 1e30;
	for (int rep = 0; rep < 5; rep++) {
		uint64_t t0 = now_ns();
		for (long i = 0; i < n; i++)
			prof_drive_collective(t, ctx, &nccl_mask, (uint64_t)i);
		double ns = (double)(now_ns() - t0) / (double)n;
		if (ns < best)
			best = ns;
	}
	t->finalize(ctx);
	double out[2] = {best, (double)real_mask};
	return write(fd, out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 : 1;
}

static int run_case(const char *lib, const char *bundle, int force, long n, double *ns, int *mask)
{
	int p[2];
	if (pipe(p))
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(measure(lib, bundle, force, n, p[1]));
	}
	close(p[1]);
	double out[2] = {0, 0};
	ssize_t got = read(p[0], out, sizeof(out));
	close(p[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	if (got != (ssize_t)sizeof(out) || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	*ns = out[0];
	*mask = (int)out[1];
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(
		    stderr,
		    "usage: %s PLUGIN.so NOOP_BUNDLE.o PROF_NOOP.o PROFILER_LATENCY.o [COLLS]\n",
		    argv[0]);
		return 2;
	}
	long n = argc > 5 ? atol(argv[5]) : 200000;
	static const char *names[] = {"mask-0", "none", "noop", "latency"};
	const char *bundles[] = {argv[2], argv[2], argv[3], argv[4]};
	int force[] = {0, 1, 0, 0};
	double ns[4];
	int masks[4];
	const int events = 1 + CHANNELS, calls = 2 + 3 * CHANNELS;
	printf("profiler_bench: %ld collectives x (1 Coll + %d KernelCh) = %d events, %d callbacks "
	       "each; best of 5, thread CPU time\n",
	       n, CHANNELS, events, calls);
	printf("%-8s %6s %12s %12s %14s %12s\n", "case", "mask", "ns/coll", "ns/event",
	       "ns/callback", "vs none");
	for (int i = 0; i < 4; i++) {
		if (run_case(argv[1], bundles[i], force[i], n, &ns[i], &masks[i])) {
			printf("%-8s not run\n", names[i]);
			return 1;
		}
	}
	for (int i = 0; i < 4; i++)
		printf("%-8s %6d %12.1f %12.2f %14.2f %+11.2f ns/event\n", names[i], masks[i],
		       ns[i], ns[i] / events, ns[i] / calls, (ns[i] - ns[1]) / events);
	/* The target is the cost the program adds over the adapter with none (issue #8). */
	printf("program attached (latency) vs none: %.2fx per event, +%.1f ns/event; target < 50 "
	       "ns/event added: %s\n",
	       ns[1] > 0 ? ns[3] / ns[1] : 0.0, (ns[3] - ns[1]) / events,
	       (ns[3] - ns[1]) / events < 50 ? "met" : "NOT met");
	return masks[0] == 0 && masks[3] != 0 ? 0 : 1;
}
