/* Concurrent profiler callbacks as NCCL makes them: A application threads (one communicator
 * context each, the same commId: several ranks in one process) emit collectives' host events;
 * P proxy threads receive the kernel channels through queues and report them (start, KernelChStop,
 * stop), interleaved with proxy-control events, foreign-process proxy operations and stale handles;
 * a reload thread keeps replacing the policy meanwhile. The policy is native (compiled into this
 * test, so ThreadSanitizer sees it) and checks every COLL_END's GPU time against the value the
 * stream encoded; with RECORD.o a second phase runs the same with the eBPF bundle (JIT).
 *
 * usage: test_profiler_stress [APPS [PROXIES [COLLS_PER_APP [RECORD.o]]]] */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ncclbpf/runtime.h"
#include "prof_stream.h"

extern const ncclProfiler_v4_t ncclProfiler_v4;
extern const ncclProfiler_v5_t ncclProfiler_v5;
extern const ncclProfiler_v6_t ncclProfiler_v6;

#define CH	 4
#define RING	 1024 /* per (app, proxy) queue */
#define MAX_APPS 8
#define MAX_PROX 8

static int n_apps = 2, n_prox = 3, n_colls = 20000;
static int mask;

static _Atomic uint64_t ends, kchs, bad;

/* Collective seq of app r: channel c runs [T(seq) + c, T(seq) + dur(seq) - c*3]: GPU time =
 * dur(seq) (first start = T, last end = T + dur). */
static uint64_t t0_of(uint64_t seq)
{
	return 1000000ull * (seq + 1);
}
static uint64_t dur_of(uint64_t seq)
{
	return 5000 + seq % 977;
}

static uint64_t native_prof(uint64_t c, uint64_t arg)
{
	(void)arg;
	const struct ncclbpf_profiler_ctx *x = (const struct ncclbpf_profiler_ctx *)(uintptr_t)c;
	if (x->event == NCCLBPF_PROF_COLL_END) {
		atomic_fetch_add(&ends, 1);
		if (x->duration_ns != dur_of(x->seq) || x->start_ns != t0_of(x->seq) ||
		    x->n_channels != CH || x->coll_type != NCCLBPF_COLL_ALLREDUCE)
			atomic_fetch_add(&bad, 1);
	} else if (x->event == NCCLBPF_PROF_KERNEL_CH) {
		atomic_fetch_add(&kchs, 1);
		if (x->channel >= CH)
			atomic_fetch_add(&bad, 1);
	}
	return 0;
}

static const struct ncclbpf_native_policy native = {
    .sz = sizeof(native), .name = "prof_stress", .profiler = native_prof};

struct item {
	void *coll;
	uint64_t seq;
	int ch;
};

struct ring {
	_Atomic uint64_t head, tail;
	struct item items[RING];
};

static struct ring rings[MAX_APPS][MAX_PROX];
static void *ctxs[MAX_APPS];
static _Atomic int apps_done;
static struct prof_api apis[3];

static void push(struct ring *r, struct item it)
{
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	while (t - atomic_load_explicit(&r->head, memory_order_acquire) >= RING)
		sched_yield();
	r->items[t % RING] = it;
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
}

static int pop(struct ring *r, struct item *it)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (h == atomic_load_explicit(&r->tail, memory_order_acquire))
		return 0;
	*it = r->items[h % RING];
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return 1;
}

static void *app(void *arg)
{
	int r = (int)(intptr_t)arg;
	const struct prof_api *a = &apis[r % 3];
	for (int i = 0; i < n_colls; i++) {
		uint64_t seq = (uint64_t)i;
		void *coll = ps_coll_host(a, ctxs[r], r, seq, "AllReduce", 1024, "ncclFloat32", CH,
					  "RING", "SIMPLE");
		if (!coll) {
			atomic_fetch_add(&bad, 1); /* the pool is large enough for this stream */
			continue;
		}
		for (int c = 0; c < CH; c++)
			push(&rings[r][c % n_prox], (struct item){coll, seq, c});
		/* A stale handle from long ago and a stop of the collective again. */
		if (i % 64 == 0)
			ps_stop(a, coll);
	}
	atomic_fetch_add(&apps_done, 1);
	return NULL;
}

static void *proxy(void *arg)
{
	int p = (int)(intptr_t)arg;
	const struct prof_api *a = &apis[p % 3];
	for (;;) {
		int got = 0;
		for (int r = 0; r < n_apps; r++) {
			struct item it;
			while (pop(&rings[r][p], &it)) {
				got = 1;
				uint64_t t = t0_of(it.seq);
				ps_kch(a, ctxs[r], it.coll, r, it.ch, t + (uint64_t)it.ch,
				       t + dur_of(it.seq) - (uint64_t)it.ch * 3);
				if (it.seq % 16 == 0) {
					ps_proxy_ctrl(a, ctxs[r], r);
					/* PXN: a foreign parent handle (never dereferenced). */
					ps_proxy_op(a, ctxs[r], (void *)(uintptr_t)0x40, r,
						    getpid() + 100000, it.ch, 1, 1, 1);
				}
			}
		}
		if (!got && atomic_load(&apps_done) == n_apps) {
			int empty = 1;
			for (int r = 0; r < n_apps; r++)
				empty &= atomic_load(&rings[r][p].head) ==
					 atomic_load(&rings[r][p].tail);
			if (empty)
				return NULL;
		}
		if (!got)
			sched_yield();
	}
}

static _Atomic int stop_reload;
static const char *reload_path;

static void *reloader(void *arg)
{
	(void)arg;
	int n = 0;
	while (!atomic_load(&stop_reload)) {
		struct ncclbpf_reload_report rep = {.sz = sizeof(rep)};
		if (reload_path ? ncclbpf_rt_reload(reload_path, &rep)
				: ncclbpf_rt_install_native(&native, &rep))
			atomic_fetch_add(&bad, 1);
		n++;
		usleep(300);
	}
	return (void *)(intptr_t)n;
}

static char last_info[MAX_APPS][1024];
static _Atomic int info_idx;
static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
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
	if (level == NCCL_LOG_INFO && strstr(buf, "NCCLbpf profiler:")) {
		int i = atomic_fetch_add(&info_idx, 1);
		if (i < MAX_APPS)
			snprintf(last_info[i], sizeof(last_info[i]), "%s", buf);
	} else if (level == NCCL_LOG_WARN) {
		fprintf(stderr, "[WARN] %s\n", buf);
	}
}

static void phase(const char *name, const char *bundle)
{
	atomic_store(&ends, 0);
	atomic_store(&kchs, 0);
	atomic_store(&apps_done, 0);
	atomic_store(&stop_reload, 0);
	atomic_store(&info_idx, 0);
	memset(rings, 0, sizeof(rings));
	reload_path = bundle;
	struct ncclbpf_reload_report rep = {.sz = sizeof(rep)};
	CHECK((bundle ? ncclbpf_rt_reload(bundle, &rep)
		      : ncclbpf_rt_install_native(&native, &rep)) == 0);
	for (int r = 0; r < n_apps; r++) {
		ctxs[r] = NULL;
		CHECK(ps_init(&apis[r % 3], &ctxs[r], &mask, 0xabc, 1, n_apps, r, logger) ==
		      ncclSuccess);
	}
	CHECK_EQ_U64(mask, ncclProfileColl | ncclProfileKernelCh);
	pthread_t ta[MAX_APPS], tp[MAX_PROX], tr;
	pthread_create(&tr, NULL, reloader, NULL);
	for (int p = 0; p < n_prox; p++)
		pthread_create(&tp[p], NULL, proxy, (void *)(intptr_t)p);
	for (int r = 0; r < n_apps; r++)
		pthread_create(&ta[r], NULL, app, (void *)(intptr_t)r);
	for (int r = 0; r < n_apps; r++)
		pthread_join(ta[r], NULL);
	for (int p = 0; p < n_prox; p++)
		pthread_join(tp[p], NULL);
	atomic_store(&stop_reload, 1);
	void *reloads;
	pthread_join(tr, &reloads);
	for (int r = 0; r < n_apps; r++)
		CHECK(ps_finalize(&apis[r % 3], ctxs[r]) == ncclSuccess);
	uint64_t want = (uint64_t)n_apps * (uint64_t)n_colls;
	printf("%s: %d apps x %d collectives, %d proxy threads, %ld reloads: %llu COLL_END, "
	       "%llu KERNEL_CH, %llu bad\n",
	       name, n_apps, n_colls, n_prox, (long)(intptr_t)reloads,
	       (unsigned long long)atomic_load(&ends), (unsigned long long)atomic_load(&kchs),
	       (unsigned long long)atomic_load(&bad));
	CHECK_EQ_U64(atomic_load(&bad), 0);
	if (!bundle) {
		CHECK_EQ_U64(atomic_load(&ends), want);
		CHECK_EQ_U64(atomic_load(&kchs), want * CH);
	}
	char expect[128];
	snprintf(expect, sizeof(expect), "%d collectives, %d timed, 0 open at finalize", n_colls,
		 n_colls);
	for (int r = 0; r < n_apps; r++) {
		CHECK(strstr(last_info[r], expect) != NULL);
		if (!strstr(last_info[r], expect))
			fprintf(stderr, "finalize said: %s\n", last_info[r]);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n_apps = atoi(argv[1]);
	if (argc > 2)
		n_prox = atoi(argv[2]);
	if (argc > 3)
		n_colls = atoi(argv[3]);
	if (n_apps < 1 || n_apps > MAX_APPS || n_prox < 1 || n_prox > MAX_PROX || n_colls < 1) {
		fprintf(stderr, "usage: %s [APPS<=8 [PROXIES<=8 [COLLS [RECORD.o]]]]\n", argv[0]);
		return 2;
	}
	setenv("NCCLBPF_WATCH", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	apis[0] = (struct prof_api){4, &ncclProfiler_v4, &ncclProfiler_v5, &ncclProfiler_v6};
	apis[1] = (struct prof_api){5, &ncclProfiler_v4, &ncclProfiler_v5, &ncclProfiler_v6};
	apis[2] = (struct prof_api){6, &ncclProfiler_v4, &ncclProfiler_v5, &ncclProfiler_v6};
	ncclbpf_rt_acquire();
	phase("native", NULL);
	if (argc > 4)
		phase("bpf", argv[4]);
	ncclbpf_rt_unload();
	ncclbpf_rt_release();
	return check_summary("test_profiler_stress");
}
