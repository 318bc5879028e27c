/* Driving the exported net tables the way NCCL's proxy does (docs/design.md §6.10): the
 * library dlopened RTLD_NOW|RTLD_LOCAL, the table found by its versioned name, init per
 * communicator, listen, the 128-byte handle carried to the peer out of band (a pipe here,
 * NCCL's bootstrap there), connect/accept called again and again until they return a comm,
 * regMr, then isend/irecv called until they return a request and test until done. Shared by
 * tests/net and benchmarks/net_bench.c. */
#ifndef NCCLBPF_NET_HARNESS_H
#define NCCLBPF_NET_HARNESS_H

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl_net.h"

/* Both tables have the same entry points except getProperties/makeVDevice; nh_net is the v12
 * layout, and the v11 one is reached through it for everything else. */
struct nh_lib {
	void *dl;
	const ncclNet_v11_t *v11;
	const ncclNet_v12_t *v12;
	const ncclNet_v12_t *t; /* the one a test drives (v11 cast when ver == 11) */
	int ver;
};

static int nh_warns;
static char nh_last_warn[1024];
/* Every line logged (WARN and INFO), one per line, for tests that check what a user sees. */
static char nh_log_text[16384];
static size_t nh_log_len;
static pthread_mutex_t nh_log_lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((unused)) static void nh_logger(ncclDebugLogLevel level, unsigned long flags,
					      const char *file, int line, const char *fmt, ...)
{
	(void)flags;
	(void)file;
	(void)line;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&nh_log_lock);
	int n = snprintf(nh_log_text + nh_log_len, sizeof(nh_log_text) - nh_log_len, "%s %s\n",
			 level == NCCL_LOG_WARN ? "WARN" : "INFO", buf);
	if (n > 0 && nh_log_len + (size_t)n < sizeof(nh_log_text))
		nh_log_len += (size_t)n;
	if (level == NCCL_LOG_WARN)
		snprintf(nh_last_warn, sizeof(nh_last_warn), "%s", buf);
	pthread_mutex_unlock(&nh_log_lock);
	if (level == NCCL_LOG_WARN) {
		__atomic_add_fetch(&nh_warns, 1, __ATOMIC_RELAXED);
		if (getenv("NH_VERBOSE"))
			fprintf(stderr, "[%d WARN] %s\n", (int)getpid(), buf);
	} else if (getenv("NH_VERBOSE")) {
		fprintf(stderr, "[%d INFO] %s\n", (int)getpid(), buf);
	}
}

/* WARNs so far; 1 when the latest WARN contains needle. Safe while transport threads log. */
__attribute__((unused)) static int nh_warn_count(void)
{
	return __atomic_load_n(&nh_warns, __ATOMIC_RELAXED);
}
__attribute__((unused)) static int nh_last_warn_has(const char *needle)
{
	pthread_mutex_lock(&nh_log_lock);
	int has = strstr(nh_last_warn, needle) != NULL;
	pthread_mutex_unlock(&nh_log_lock);
	return has;
}

static inline int nh_open(struct nh_lib *l, const char *path, int ver)
{
	memset(l, 0, sizeof(*l));
	l->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!l->dl) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	l->v11 = dlsym(l->dl, "ncclNetPlugin_v11");
	l->v12 = dlsym(l->dl, "ncclNetPlugin_v12");
	l->ver = ver;
	l->t = ver == 11 ? (const ncclNet_v12_t *)l->v11 : l->v12;
	if (!l->t) {
		fprintf(stderr, "%s: no ncclNetPlugin_v%d\n", path, ver);
		return -1;
	}
	return 0;
}

static inline uint64_t nh_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Properties through whichever table is driven, as the v12 layout. */
static inline ncclResult_t nh_props(const struct nh_lib *l, int dev, ncclNetProperties_v12_t *p)
{
	if (l->ver == 12)
		return l->v12->getProperties(dev, p);
	ncclNetProperties_v11_t q;
	ncclResult_t r = l->v11->getProperties(dev, &q);
	memset(p, 0, sizeof(*p));
	p->name = q.name;
	p->ptrSupport = q.ptrSupport;
	p->maxRecvs = q.maxRecvs;
	p->speed = q.speed;
	p->maxP2pBytes = q.maxP2pBytes;
	return r;
}

/* Establishes a send comm to the handle's listener and accepts one connection on lc, calling
 * both until done as NCCL's proxy service thread does. Returns 0, or the first error (both
 * calls are still driven until each has failed or finished, so a refusal is seen by both). */
struct nh_setup {
	ncclResult_t connect_res, accept_res;
	void *send, *recv;
};
static inline int nh_connect_accept(const struct nh_lib *l, void *ctx, int dev, void *handle,
				    void *lc, struct nh_setup *s, double timeout_s)
{
	memset(s, 0, sizeof(*s));
	int cdone = handle == NULL, adone = lc == NULL;
	uint64_t end = nh_now_ns() + (uint64_t)(timeout_s * 1e9);
	while (!(cdone && adone)) {
		if (!cdone) {
			ncclNetDeviceHandle_v12_t *dh = NULL;
			s->connect_res = l->t->connect(ctx, dev, handle, &s->send, &dh);
			cdone = s->connect_res != ncclSuccess || s->send;
		}
		if (!adone) {
			ncclNetDeviceHandle_v12_t *dh = NULL;
			s->accept_res = l->t->accept(lc, &s->recv, &dh);
			adone = s->accept_res != ncclSuccess || s->recv;
		}
		if (nh_now_ns() > end)
			return -ETIMEDOUT;
		if (!(cdone && adone))
			usleep(100);
	}
	return s->connect_res != ncclSuccess  ? -(int)s->connect_res
	       : s->accept_res != ncclSuccess ? -(int)s->accept_res
					      : 0;
}

/* Posts until the table hands out a request (NULL request = "call again"). */
static inline ncclResult_t nh_isend(const struct nh_lib *l, void *sc, void *buf, size_t size,
				    int tag, void *mh, void **req)
{
	ncclResult_t r;
	*req = NULL;
	do
		r = l->t->isend(sc, buf, size, tag, mh, NULL, req);
	while (r == ncclSuccess && !*req);
	return r;
}

static inline ncclResult_t nh_irecv(const struct nh_lib *l, void *rc, int n, void **bufs,
				    size_t *sizes, int *tags, void **mhs, void **req)
{
	ncclResult_t r;
	*req = NULL;
	void *ph[NCCL_NET_MAX_REQUESTS] = {0};
	do
		r = l->t->irecv(rc, n, bufs, sizes, tags, mhs, ph, req);
	while (r == ncclSuccess && !*req);
	return r;
}

/* Tests until done, an error, or the deadline (returns ncclInProgress then). */
static inline ncclResult_t nh_wait(const struct nh_lib *l, void *req, int *sizes, double timeout_s)
{
	uint64_t end = nh_now_ns() + (uint64_t)(timeout_s * 1e9);
	for (;;) {
		int done = 0;
		ncclResult_t r = l->t->test(req, &done, sizes);
		if (r != ncclSuccess || done)
			return r;
		if (nh_now_ns() > end)
			return ncclInProgress;
	}
}

/* Tests a send and a receive in turn until both are done (a NULL one counts as done). */
static inline ncclResult_t nh_wait2(const struct nh_lib *l, void *sq, void *rq, int *sizes,
				    double timeout_s)
{
	uint64_t end = nh_now_ns() + (uint64_t)(timeout_s * 1e9);
	int sdone = !sq, rdone = !rq;
	while (!(sdone && rdone)) {
		ncclResult_t r;
		if (!sdone && (r = l->t->test(sq, &sdone, NULL)) != ncclSuccess)
			return r;
		if (!rdone && (r = l->t->test(rq, &rdone, sizes)) != ncclSuccess)
			return r;
		if (nh_now_ns() > end)
			return ncclInProgress;
	}
	return ncclSuccess;
}

/* The byte pattern of message k from rank s. */
static inline uint8_t nh_byte(size_t i, int s, int k)
{
	return (uint8_t)(i * 131u + (unsigned)s * 7u + (unsigned)k * 13u + (i >> 12));
}

static inline void nh_fill(uint8_t *p, size_t n, int s, int k)
{
	for (size_t i = 0; i < n; i++)
		p[i] = nh_byte(i, s, k);
}

static inline long nh_check(const uint8_t *p, size_t n, int s, int k)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != nh_byte(i, s, k))
			return (long)i;
	return -1;
}

/* Pipes carrying handles between forked ranks. */
static inline int nh_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static inline int nh_read_all(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

#endif
