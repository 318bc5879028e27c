/* Hot reload through the shipped plugin, as an operator does it: NCCLBPF_POLICY names a file,
 * the plugin's inotify watcher reloads it when a new bundle is renamed over it, while 8 threads
 * call getCollInfo on their own communicators. The bundles are tests/plugin/policies/version.c
 * compiled as versions 1..4 (each decision encodes the version); one rejected bundle in the
 * middle must leave the running version in place.
 * usage: test_hot_reload PLUGIN.so VERSION-DIR UNSAFE.o [RELOADS] */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "harness.h"

#define THREADS 8

static int activated, rejected;
static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		   const char *fmt, ...)
{
	(void)level;
	(void)flags;
	(void)file;
	(void)line;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (strstr(buf, "active as version"))
		__atomic_add_fetch(&activated, 1, __ATOMIC_SEQ_CST);
	if (strstr(buf, "rejected")) {
		__atomic_add_fetch(&rejected, 1, __ATOMIC_SEQ_CST);
		fprintf(stderr, "plugin: %s\n", buf);
	}
}

static struct harness_plugin P;
static volatile int stop;
static int last_seen[THREADS];
static long calls[THREADS], mixed[THREADS], none[THREADS];

static void *caller(void *arg)
{
	int id = (int)(intptr_t)arg;
	void *ctx = NULL;
	P.v5->init(&ctx, 77, 8, 1, logger, NULL, NULL);
	float base[21];
	harness_table(base, 7, 3, 4, 1 << 20);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		float t[21];
		memcpy(t, base, sizeof(t));
		int ch = 0;
		P.v5->getCollInfo(ctx, 4, 1 << 20, 1, (float **)t, 7, 3, 0, &ch);
		int a = -1, p = -1;
		for (int k = 0; k < 21 && a < 0; k++)
			if (t[k] == 0.0f) {
				a = k / 3;
				p = k % 3;
			}
		int v = ch - 1; /* versions 1..4: channels 2..5 */
		if (ch == 0 || a < 0)
			none[id]++;
		else if (v < 1 || v > 4 || a != v % 2 || p != (v % 6) / 2)
			mixed[id]++;
		else
			__atomic_store_n(&last_seen[id], v, __ATOMIC_RELAXED);
		calls[id]++;
	}
	P.v5->finalize(ctx);
	return NULL;
}

static int install(const char *from, const char *dir, const char *live)
{
	char tmp[4200], cmd[9000];
	snprintf(tmp, sizeof(tmp), "%s/next.tmp", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, tmp);
	if (system(cmd) != 0)
		return -1;
	return rename(tmp, live);
}

/* Waits until every thread has made a decision with version v (a 60 s hang guard). */
static int wait_all_see(int v)
{
	for (int i = 0; i < 60000; i++) {
		int all = 1;
		for (int t = 0; t < THREADS; t++)
			all &= __atomic_load_n(&last_seen[t], __ATOMIC_RELAXED) == v;
		if (all)
			return 0;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

static int wait_count(int *counter, int target)
{
	for (int i = 0; i < 60000 && __atomic_load_n(counter, __ATOMIC_SEQ_CST) < target; i++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	return __atomic_load_n(counter, __ATOMIC_SEQ_CST) >= target ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s PLUGIN.so VERSION-DIR UNSAFE.o [RELOADS]\n", argv[0]);
		return 2;
	}
	int reloads = argc > 4 ? atoi(argv[4]) : 40;
	char dir[] = "/tmp/ncclbpf-hot-XXXXXX", live[4200], ver[4][4200];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(live, sizeof(live), "%s/policy.o", dir);
	for (int v = 1; v <= 4; v++)
		snprintf(ver[v - 1], sizeof(ver[0]), "%s/version%d.o", argv[2], v);
	CHECK(install(ver[0], dir, live) == 0);
	setenv("NCCLBPF_POLICY", live, 1);
	setenv("NCCLBPF_WATCH", "1", 1);
	unsetenv("NCCLBPF_TRACE");
	CHECK(harness_open(&P, argv[1]) == 0);
	if (!P.v5)
		return check_summary("test_hot_reload");

	/* The first communicator loads version 1 before any call. */
	void *first = NULL;
	P.v5->init(&first, 1, 8, 1, logger, NULL, NULL);
	pthread_t th[THREADS];
	for (int t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, caller, (void *)(intptr_t)t);
	CHECK(wait_all_see(1) == 0);

	int cur = 1, ok = 0;
	for (int i = 0; i < reloads; i++) {
		int v = 1 + (cur % 4); /* 2, 3, 4, 1, ... */
		int before = __atomic_load_n(&activated, __ATOMIC_SEQ_CST);
		CHECK(install(ver[v - 1], dir, live) == 0);
		if (wait_count(&activated, before + 1) == 0 && wait_all_see(v) == 0)
			ok++;
		cur = v;
		if (i == reloads / 2) {
			/* A bundle the verifier rejects: the running version stays. */
			int rej = __atomic_load_n(&rejected, __ATOMIC_SEQ_CST);
			CHECK(install(argv[3], dir, live) == 0);
			CHECK(wait_count(&rejected, rej + 1) == 0);
			for (int t = 0; t < THREADS; t++)
				__atomic_store_n(&last_seen[t], 0, __ATOMIC_RELAXED);
			CHECK(wait_all_see(cur) == 0);
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	long total = 0, bad = 0, nodec = 0;
	for (int t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		total += calls[t];
		bad += mixed[t];
		nodec += none[t];
	}
	P.v5->finalize(first);
	harness_close(&P);
	printf(
	    "%d threads, %ld calls, %d/%d hot reloads seen by every thread, %d rejected bundle(s); "
	    "%ld mixed decisions, %ld calls without a decision\n",
	    THREADS, total, ok, reloads, rejected, bad, nodec);
	CHECK_EQ_U64(ok, reloads);
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(nodec, 0);
	CHECK(rejected == 1);
	unlink(live);
	rmdir(dir);
	return check_summary("test_hot_reload");
}
