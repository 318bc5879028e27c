/* Shared by the telemetry tests: the profiler tables driven as NCCL drives them
 * (tests/profiler/prof_stream.h), a logger that counts WARN lines, and file helpers. */
#ifndef NCCLBPF_TEST_TELEM_HARNESS_H
#define NCCLBPF_TEST_TELEM_HARNESS_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ncclbpf/proc_registry.h"
#include "prof_stream.h"

extern const ncclProfiler_v4_t ncclProfiler_v4;
extern const ncclProfiler_v5_t ncclProfiler_v5;
extern const ncclProfiler_v6_t ncclProfiler_v6;

static int th_mask;
static int th_warns;	/* WARN lines about telemetry */
static int th_infos_ok; /* "works again" lines */
static char th_last_warn[1024];

static void th_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		      const char *fmt, ...)
{
	(void)flags;
	(void)file;
	(void)line;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!strstr(buf, "telemetry"))
		return;
	if (level == NCCL_LOG_WARN) {
		__atomic_fetch_add(&th_warns, 1, __ATOMIC_RELAXED);
		snprintf(th_last_warn, sizeof(th_last_warn), "%s", buf);
		fprintf(stderr, "[WARN] %s\n", buf);
	} else if (strstr(buf, "works again")) {
		__atomic_fetch_add(&th_infos_ok, 1, __ATOMIC_RELAXED);
	}
}

static inline struct prof_api th_api(int v)
{
	return (struct prof_api){v, &ncclProfiler_v4, &ncclProfiler_v5, &ncclProfiler_v6};
}

/* A communicator through the v5 table (NCCL 2.28) with NCCL's commName. */
static inline void *th_comm(uint64_t id, const char *name, int n_ranks, int rank)
{
	void *ctx = NULL;
	ncclProfiler_v5.init(&ctx, id, &th_mask, name, 1, n_ranks, rank, th_logger);
	return ctx;
}

static inline void th_finalize(void *ctx)
{
	ncclProfiler_v5.finalize(ctx);
}

/* One collective, its n_ch channels reporting GPU times: channel c runs
 * [base + 7c, base + dur + 13c], so the collective's GPU time is dur + 13 (n_ch - 1). */
static inline void th_coll(void *ctx, int rank, uint64_t seq, const char *func, size_t count,
			   const char *dtype, int n_ch, const char *algo, const char *proto,
			   uint64_t base, uint64_t dur)
{
	struct prof_api a = th_api(5);
	void *coll = ps_coll_host(&a, ctx, rank, seq, func, count, dtype, n_ch, algo, proto);
	for (int c = n_ch - 1; c >= 0; c--)
		ps_kch(&a, ctx, coll, rank, c, base + 7 * (uint64_t)c,
		       base + dur + 13 * (uint64_t)c);
}

static inline char *th_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap + 1);
	for (;;) {
		size_t k = fread(p + n, 1, cap - n, f);
		n += k;
		if (n < cap)
			break;
		cap *= 2;
		p = realloc(p, cap + 1);
	}
	fclose(f);
	p[n] = 0;
	*len = n;
	return p;
}

static inline uint64_t th_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline void th_sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* A fresh private directory under TMPDIR. */
static inline void th_tmpdir(char *out, size_t len, const char *tag)
{
	const char *t = getenv("TMPDIR");
	snprintf(out, len, "%s/ncclbpf-telem-%s-XXXXXX", t && *t ? t : "/tmp", tag);
	if (!mkdtemp(out)) {
		perror("mkdtemp");
		exit(1);
	}
}

/* The file name the exporter uses for this process. */
static inline void th_out_name(char *out, size_t len, const char *dir, const char *ext)
{
	char host[256];
	ncclbpf_rt_host_name(host, sizeof(host));
	snprintf(out, len, "%s/ncclbpf_%s_%d.%s", dir, host, (int)getpid(), ext);
}

/* Clears every telemetry variable (each phase sets its own). */
static inline void th_env_clear(void)
{
	static const char *const vars[] = {
	    "NCCLBPF_TELEMETRY",   "NCCLBPF_PROM_DIR",	      "NCCLBPF_PROM_INTERVAL_MS",
	    "NCCLBPF_PROM_PORT",   "NCCLBPF_PROM_MAX_BYTES",  "NCCLBPF_JSONL_DIR",
	    "NCCLBPF_JSONL_EVERY", "NCCLBPF_JSONL_MIN_BYTES", NULL};
	for (int i = 0; vars[i]; i++)
		unsetenv(vars[i]);
}

#endif
