/* The profiler adapter driven through its exported tables (ncclProfiler_v4/_v5/_v6) with event
 * streams shaped as NCCL 2.27-2.30 send them, the adapter and runtime linked in so that the test
 * can read the policy's maps. Checks: the activation mask follows the policy (and its reloads);
 * COLL_END carries the GPU time from the first channel's start to the last channel's end and
 * comes exactly once, after the last channel, however late the channels arrive after the
 * collective's host stop; foreign-process proxy parents are never touched; bogus, NULL, repeated
 * and stale handles are harmless; pool exhaustion drops and counts, then recovers; a tuner that
 * reads a profiler-written map is refused.
 *
 * usage: test_profiler RECORD.o RECORD_PROXY.o POLICY_DIR [RECORD_END.o] */
#include <errno.h>
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

static const char *record_o, *record_proxy_o, *policy_dir, *record_end_o;
/* NCCL's activation mask: one process-global int (docs/design.md §6.7). */
static int mask;

static char last_info[1024];
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
	if (level == NCCL_LOG_INFO && strstr(buf, "NCCLbpf profiler:"))
		snprintf(last_info, sizeof(last_info), "%s", buf);
	else if (level == NCCL_LOG_WARN)
		fprintf(stderr, "[WARN] %s\n", buf);
}

static struct prof_api api(int v)
{
	return (struct prof_api){v, &ncclProfiler_v4, &ncclProfiler_v5, &ncclProfiler_v6};
}

static int load(const char *path)
{
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	int e = ncclbpf_rt_reload(path, &r);
	if (e)
		fprintf(stderr, "reload %s: %s\n", path, r.msg);
	return e;
}

struct coll_key {
	uint64_t comm_id, seq;
	uint32_t rank, pad;
};

static int coll_end(uint64_t comm, uint32_t rank, uint64_t seq, struct ncclbpf_profiler_ctx *out)
{
	struct coll_key k = {comm, seq, rank, 0};
	return ncclbpf_rt_map_lookup("colls", &k, out);
}

static uint64_t count_of(uint32_t ev)
{
	uint64_t n = 0;
	ncclbpf_rt_map_lookup("counts", &ev, &n);
	return n;
}

/* --- Mask ----------------------------------------------------------------------------------- */

static void test_mask(void)
{
	struct prof_api a = api(5);
	mask = -1;
	void *ctx = NULL;
	ncclbpf_rt_unload();
	CHECK(ps_init(&a, &ctx, &mask, 1, 1, 2, 0, logger) == ncclSuccess);
	CHECK(ctx != NULL);
	CHECK_EQ_U64(mask, 0); /* no policy: NCCL emits nothing */
	CHECK(load(record_o) == 0);
	CHECK_EQ_U64(mask, ncclProfileColl | ncclProfileKernelCh); /* rewritten by the reload */
	CHECK(load(record_proxy_o) == 0);
	CHECK_EQ_U64(mask, ncclProfileColl | ncclProfileKernelCh | ncclProfileProxyOp);
	char noop[4096];
	snprintf(noop, sizeof(noop), "%s/noop.o", policy_dir);
	CHECK(load(noop) == 0); /* a bundle without a profiler program: zero cost again */
	CHECK_EQ_U64(mask, 0);
	/* While the mask is 0 a stray event is still answered (NULL handle, success). */
	CHECK(ps_coll_host(&a, ctx, 0, 1, "AllReduce", 16, "ncclFloat32", 2, "RING", "LL") == NULL);
	CHECK(ps_finalize(&a, ctx) == ncclSuccess);
	/* init with a NULL context pointer or a NULL mask pointer must not fail either. */
	CHECK(ps_init(&a, NULL, &mask, 1, 1, 2, 0, logger) == ncclSuccess);
	CHECK(load(record_o) == 0);
	ctx = NULL;
	CHECK(ps_init(&a, &ctx, NULL, 1, 1, 2, 0, logger) == ncclSuccess);
	CHECK(ps_finalize(&a, ctx) == ncclSuccess);
	CHECK(ps_finalize(&a, NULL) == ncclSuccess);
}

/* --- Streams per NCCL release ----------------------------------------------------------------- */

/* N collectives of an NCCL release: host side first, then kernel channels in reverse order with
 * proxy-control noise between them (the proxy thread reports channels as their GPU counters
 * move, after the host stop). GPU times: channel c of collective i runs [base + c*7, base + 1000
 * + i + c*13]. */
static void run_release(int version, uint64_t comm, int rank)
{
	struct prof_api a = api(version);
	mask = 0;
	void *ctx = NULL;
	CHECK(ps_init(&a, &ctx, &mask, comm, 1, 4, rank, logger) == ncclSuccess);
	CHECK_EQ_U64(mask, ncclProfileColl | ncclProfileKernelCh);
	enum { N = 50, CH = 4 };
	static const char *funcs[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
				      "Reduce"};
	static const uint32_t ids[] = {4, 2, 3, 0, 1};
	for (int i = 0; i < N; i++) {
		uint64_t seq = 100 + (uint64_t)i;
		void *coll = ps_coll_host(&a, ctx, rank, seq, funcs[i % 5], 1000 + (size_t)i,
					  "ncclBfloat16", CH, i % 2 ? "TREE" : "RING", "LL128");
		CHECK(coll != NULL);
		uint64_t base = 1000000ull * (uint64_t)(i + 1);
		for (int c = CH - 1; c >= 0; c--) {
			ps_proxy_ctrl(&a, ctx, rank);
			struct ncclbpf_profiler_ctx x;
			/* Not before the last channel stopped. */
			CHECK(coll_end(comm, (uint32_t)rank, seq, &x) == -ENOENT);
			ps_kch(&a, ctx, coll, rank, c, base + (uint64_t)c * 7,
			       base + 1000 + (uint64_t)i + (uint64_t)c * 13);
		}
		if (version == 6)
			ps_ce_coll(&a, ctx, rank, seq);
		struct ncclbpf_profiler_ctx x;
		CHECK(coll_end(comm, (uint32_t)rank, seq, &x) == 0);
		CHECK_EQ_U64(x._pad0, 1); /* exactly once */
		CHECK_EQ_U64(x.start_ns, base);
		CHECK_EQ_U64(x.end_ns, base + 1000 + (uint64_t)i + (CH - 1) * 13);
		CHECK_EQ_U64(x.duration_ns, 1000 + (uint64_t)i + (CH - 1) * 13);
		CHECK_EQ_U64(x.n_bytes, (1000 + (uint64_t)i) * 2);
		CHECK_EQ_U64(x.coll_type, ids[i % 5]);
		CHECK_EQ_U64(x.algorithm, i % 2 ? NCCLBPF_ALGO_TREE : NCCLBPF_ALGO_RING);
		CHECK_EQ_U64(x.protocol, NCCLBPF_PROTO_LL128);
		CHECK_EQ_U64(x.n_channels, CH);
		CHECK_EQ_U64(x.rank, rank);
		CHECK_EQ_U64(x.n_ranks, 4);
		CHECK_EQ_U64(x.comm_id, comm);
	}
	/* A p2p's kernel channels have the p2p (untracked: NULL handle) as parent. */
	void *p2p = ps_simple(&a, ctx, ncclProfileP2p, NULL, rank);
	CHECK(p2p == NULL);
	ps_kch(&a, ctx, p2p, rank, 0, 1, 2);
	ps_stop(&a, p2p);
	last_info[0] = 0;
	CHECK(ps_finalize(&a, ctx) == ncclSuccess);
	char want[128];
	snprintf(want, sizeof(want), "%d collectives, %d timed, 0 open", N, N);
	CHECK(strstr(last_info, want) != NULL);
	if (!strstr(last_info, want))
		fprintf(stderr, "finalize said: %s\n", last_info);
}

static void test_releases(void)
{
	CHECK(load(record_o) == 0);
	run_release(4, 0x2027, 0); /* NCCL 2.27: v4 */
	run_release(5, 0x2028, 1); /* NCCL 2.28 (native v5) and 2.29/2.30 through the v5 shim */
	run_release(6, 0x2030, 2); /* NCCL 2.29/2.30: v6 */
	/* Every KERNEL_CH was delivered with its channel. */
	CHECK_EQ_U64(count_of(NCCLBPF_PROF_KERNEL_CH), 3 * 50 * 4);
	CHECK_EQ_U64(count_of(NCCLBPF_PROF_COLL_START), 3 * 50);
	CHECK_EQ_U64(count_of(NCCLBPF_PROF_COLL_END), 3 * 50);
	CHECK_EQ_U64(count_of(NCCLBPF_PROF_PROXY_OP), 0); /* not asked for */
}

/* A SEC("profiler/coll_end") program is run on finished collectives only: the adapter still
 * asks NCCL for Coll and KernelCh (they make up a COLL_END) but runs nothing on them. Only once
 * the runtime knows the section (NCCLBPF_RT_PROF_END_ONLY). */
static void test_end_only(void)
{
#ifdef NCCLBPF_RT_PROF_END_ONLY
	if (!record_end_o)
		return;
	CHECK(load(record_end_o) == 0);
	CHECK((ncclbpf_rt_profiler_needs() & NCCLBPF_RT_PROF_END_ONLY) != 0);
	uint64_t s0 = count_of(NCCLBPF_PROF_COLL_START), k0 = count_of(NCCLBPF_PROF_KERNEL_CH);
	uint64_t e0 = count_of(NCCLBPF_PROF_COLL_END);
	struct prof_api a = api(5);
	mask = 0;
	void *ctx = NULL;
	CHECK(ps_init(&a, &ctx, &mask, 0xE0, 1, 2, 1, logger) == ncclSuccess);
	CHECK_EQ_U64(mask, ncclProfileColl | ncclProfileKernelCh);
	for (int i = 0; i < 10; i++) {
		void *coll = ps_coll_host(&a, ctx, 1, (uint64_t)i, "AllGather", 64, "ncclInt8", 2,
					  "RING", "SIMPLE");
		CHECK(coll != NULL);
		ps_kch(&a, ctx, coll, 1, 0, 100, 150 + (uint64_t)i);
		ps_kch(&a, ctx, coll, 1, 1, 90, 140);
		struct ncclbpf_profiler_ctx x;
		CHECK(coll_end(0xE0, 1, (uint64_t)i, &x) == 0);
		CHECK_EQ_U64(x.duration_ns, 60 + (uint64_t)i);
	}
	CHECK_EQ_U64(count_of(NCCLBPF_PROF_COLL_START), s0);
	CHECK_EQ_U64(count_of(NCCLBPF_PROF_KERNEL_CH), k0);
	CHECK_EQ_U64(count_of(NCCLBPF_PROF_COLL_END), e0 + 10);
	CHECK(ps_finalize(&a, ctx) == ncclSuccess);
#endif
}

/* --- Proxy events, PXN, bogus handles --------------------------------------------------------- */

static void test_proxy_and_bogus(void)
{
	CHECK(load(record_proxy_o) == 0);
	struct prof_api a = api(6);
	mask = 0;
	void *ctx = NULL;
	CHECK(ps_init(&a, &ctx, &mask, 0x77, 2, 8, 3, logger) == ncclSuccess);
	void *coll =
	    ps_coll_host(&a, ctx, 3, 9, "AllReduce", 4096, "ncclFloat32", 2, "RING", "SIMPLE");
	CHECK(coll != NULL);
	/* Our own proxy: a PROXY_OP event with the collective's identity. */
	void *op = ps_proxy_op(&a, ctx, coll, 3, getpid(), 1, 5, 4, 65536);
	CHECK(op != NULL);
	struct ncclbpf_profiler_ctx x;
	uint32_t zero = 0;
	CHECK(ncclbpf_rt_map_lookup("last_proxy", &zero, &x) == 0);
	CHECK_EQ_U64(x.event, NCCLBPF_PROF_PROXY_OP);
	CHECK_EQ_U64(x.peer, 5);
	CHECK_EQ_U64(x.channel, 1);
	CHECK_EQ_U64(x.seq, 9);
	CHECK_EQ_U64(x.n_bytes, 4 * 65536);
	CHECK_EQ_U64(x.coll_type, NCCLBPF_COLL_ALLREDUCE);
	/* PXN: another process's proxy, parent from its address space (unmapped here). */
	void *bad_parent = (void *)(uintptr_t)0x10;
	CHECK(ps_proxy_op(&a, ctx, bad_parent, 3, getpid() + 100000, 0, 6, 1, 1) == NULL);
	/* Same pid, parent that is not ours: tracked without a parent. */
	int local_var;
	CHECK(ps_proxy_op(&a, ctx, &local_var, 3, getpid(), 0, 6, 1, 1) != NULL);
	CHECK(ncclbpf_rt_map_lookup("last_proxy", &zero, &x) == 0);
	CHECK_EQ_U64(x.seq, 0);
	CHECK_EQ_U64(x.coll_type, 0xffffffffu);

	/* Bogus handles everywhere: NULL, small integers, stack and heap addresses, misaligned
	 * pool addresses (one byte into a live handle). */
	void *heap = malloc(64);
	void *bogus[] = {NULL, (void *)1,	 (void *)0x10,	   &local_var,
			 heap, (char *)coll + 1, (char *)coll + 64};
	for (size_t i = 0; i < sizeof(bogus) / sizeof(bogus[0]); i++) {
		ncclProfilerEventStateArgs_v4_t args = {.kernelCh = {.pTimer = 5}};
		ps_stop(&a, bogus[i]);
		ps_record(&a, bogus[i], ncclProfilerKernelChStop, &args);
		ps_record(&a, bogus[i], ncclProfilerKernelChStop, NULL);
		ps_record(&a, bogus[i], (ncclProfilerEventState_t)12345, &args);
		/* A kernel channel whose parent is bogus is not tracked. */
		ncclProfilerEventDescr_v6_t d;
		memset(&d, 0, sizeof(d));
		d.type = ncclProfileKernelCh;
		d.parentObj = bogus[i];
		CHECK(i == 0 || ps_start(&a, ctx, &d) == NULL);
	}
	free(heap);
	/* NULL eHandle pointer, NULL descriptor, NULL context, unknown type bits. */
	ncclProfilerEventDescr_v6_t d;
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileColl;
	CHECK(ncclProfiler_v6.startEvent(ctx, NULL, &d) == ncclSuccess);
	void *h = (void *)1;
	CHECK(ncclProfiler_v6.startEvent(ctx, &h, NULL) == ncclSuccess && h == NULL);
	h = (void *)1;
	CHECK(ncclProfiler_v6.startEvent(NULL, &h, &d) == ncclSuccess && h == NULL);
	d.type = 1ull << 40;
	h = (void *)1;
	CHECK(ncclProfiler_v6.startEvent(ctx, &h, &d) == ncclSuccess && h == NULL);

	/* Repeated stops: a kernel channel stopped twice counts once; the collective's host stop
	 * repeated does not release it early. */
	uint64_t before = count_of(NCCLBPF_PROF_KERNEL_CH);
	void *c2 = ps_coll_host(&a, ctx, 3, 10, "AllReduce", 8, "ncclFloat32", 2, "RING", "LL");
	ps_stop(&a, c2); /* a second host stop */
	ps_stop(&a, c2);
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileKernelCh;
	d.parentObj = c2;
	d.kernelCh.pTimer = 100;
	void *k0 = ps_start(&a, ctx, &d);
	ncclProfilerEventStateArgs_v4_t args = {.kernelCh = {.pTimer = 150}};
	ps_record(&a, k0, ncclProfilerKernelChStop, &args);
	ps_stop(&a, k0);
	ps_stop(&a, k0); /* stale now */
	CHECK_EQ_U64(count_of(NCCLBPF_PROF_KERNEL_CH), before + 1);
	CHECK(coll_end(0x77, 3, 10, &x) == -ENOENT); /* channel 1 still due */
	ps_kch(&a, ctx, c2, 3, 1, 90, 160);
	CHECK(coll_end(0x77, 3, 10, &x) == 0);
	CHECK_EQ_U64(x.duration_ns, 70);
	/* A channel without a KernelChStop record (no GPU end time) ends the collective without a
	 * timing: no COLL_END. */
	void *c3 = ps_coll_host(&a, ctx, 3, 11, "AllReduce", 8, "ncclFloat32", 1, "RING", "LL");
	d.parentObj = c3;
	void *k = ps_start(&a, ctx, &d);
	ps_stop(&a, k);
	CHECK(coll_end(0x77, 3, 11, &x) == -ENOENT);
	/* A collective finishes when its announced channels stopped: a channel beyond the
	 * announced count that is still running then is ignored; the same channel id twice is
	 * not tracked twice. */
	void *c4 = ps_coll_host(&a, ctx, 3, 12, "AllReduce", 8, "ncclFloat32", 1, "RING", "LL");
	ncclProfilerEventDescr_v6_t dk = d;
	dk.parentObj = c4;
	dk.kernelCh.channelId = 5;
	dk.kernelCh.pTimer = 10;
	void *ka = ps_start(&a, ctx, &dk);
	CHECK(ps_start(&a, ctx, &dk) == NULL); /* channel 5 again */
	dk.kernelCh.channelId = 6;
	dk.kernelCh.pTimer = 5;
	void *kb = ps_start(&a, ctx, &dk);
	CHECK(ka != NULL && kb != NULL && ka != kb);
	args.kernelCh.pTimer = 20;
	ps_record(&a, ka, ncclProfilerKernelChStop, &args);
	args.kernelCh.pTimer = 40;
	ps_record(&a, kb, ncclProfilerKernelChStop, &args);
	ps_stop(&a, ka);
	CHECK(coll_end(0x77, 3, 12, &x) == 0);
	CHECK_EQ_U64(x.duration_ns, 10);
	ps_stop(&a, kb); /* after the collective ended: ignored */
	CHECK(coll_end(0x77, 3, 12, &x) == 0 && x._pad0 == 1);
	/* No host stop yet and more channels than announced: the reference count reaches zero at
	 * the announced count + 1 channel stops, and COLL_END covers every one of them (the scan
	 * for finished channels must not stop after the announced count). */
	ncclProfilerEventDescr_v6_t dc;
	memset(&dc, 0, sizeof(dc));
	dc.type = ncclProfileColl;
	dc.coll.seqNumber = 13;
	dc.coll.func = "AllReduce";
	dc.coll.count = 8;
	dc.coll.datatype = "ncclFloat32";
	dc.coll.nChannels = 1;
	dc.coll.algo = "RING";
	dc.coll.proto = "LL";
	void *c5 = ps_start(&a, ctx, &dc);
	CHECK(c5 != NULL);
	ps_kch(&a, ctx, c5, 3, 2, 100, 130);
	CHECK(coll_end(0x77, 3, 13, &x) == -ENOENT);
	ps_kch(&a, ctx, c5, 3, 9, 50, 120);
	CHECK(coll_end(0x77, 3, 13, &x) == 0);
	CHECK_EQ_U64(x.start_ns, 50);
	CHECK_EQ_U64(x.duration_ns, 80);
	ps_stop(&a, c5); /* the late host stop: the record is gone, ignored */
	CHECK(coll_end(0x77, 3, 13, &x) == 0 && x._pad0 == 1);
	last_info[0] = 0;
	CHECK(ps_finalize(&a, ctx) == ncclSuccess);
	CHECK(strstr(last_info, "1 foreign-process") != NULL);
	/* Collective 9's channels never reported: finalize released it. */
	CHECK(strstr(last_info, "5 collectives, 3 timed, 1 open at finalize") != NULL);
	if (!strstr(last_info, "5 collectives, 3 timed, 1 open at finalize"))
		fprintf(stderr, "finalize said: %s\n", last_info);
}

/* --- Pool exhaustion -------------------------------------------------------------------------- */

static void test_exhaustion(void)
{
	CHECK(load(record_o) == 0);
	struct prof_api a = api(5);
	mask = 0;
	void *ctx = NULL;
	CHECK(ps_init(&a, &ctx, &mask, 0xE1, 1, 1, 0, logger) == ncclSuccess);
	/* Collectives whose channels never report hold their records: the pool runs dry. */
	enum { MANY = 20000 };
	int got = 0, dropped = 0;
	for (int i = 0; i < MANY; i++) {
		void *h = ps_coll_host(&a, ctx, 0, (uint64_t)i, "AllReduce", 4, "ncclInt32", 2,
				       "RING", "LL");
		if (h)
			got++;
		else
			dropped++;
	}
	CHECK(got > 1000 && dropped > 1000);
	/* Dropped collectives' channels arrive with a NULL parent: ignored. */
	ps_kch(&a, ctx, NULL, 0, 0, 1, 2);
	last_info[0] = 0;
	CHECK(ps_finalize(&a, ctx) == ncclSuccess);
	char want[128];
	snprintf(want, sizeof(want), "%d open at finalize, %d events dropped (pool full)", got,
		 dropped);
	CHECK(strstr(last_info, want) != NULL);
	if (!strstr(last_info, want))
		fprintf(stderr, "finalize said: %s (want %s)\n", last_info, want);
	/* Finalize released them: a new communicator has the whole pool again. */
	ctx = NULL;
	CHECK(ps_init(&a, &ctx, &mask, 0xE2, 1, 1, 0, logger) == ncclSuccess);
	for (int i = 0; i < 1000; i++) {
		void *h = ps_coll_host(&a, ctx, 0, (uint64_t)i, "AllReduce", 4, "ncclInt32", 1,
				       "RING", "LL");
		CHECK(h != NULL);
		ps_kch(&a, ctx, h, 0, 0, 10, 20 + (uint64_t)i);
	}
	struct ncclbpf_profiler_ctx x;
	CHECK(coll_end(0xE2, 0, 999, &x) == 0 && x.duration_ns == 1009);
	CHECK(ps_finalize(&a, ctx) == ncclSuccess);
}

/* --- The verifier keeps telemetry out of tuner decisions ----------------------------------------
 */

static void test_direct_loop_rejected(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/unsafe/closed_loop_direct.o", policy_dir);
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	CHECK(ncclbpf_rt_reload(path, &r) != 0);
	CHECK(strstr(r.msg, "rank-local map `lat_by_bucket`") != NULL);
	if (!strstr(r.msg, "rank-local map"))
		fprintf(stderr, "reload said: %s\n", r.msg);
	/* The safe form of the same loop loads: the tuner reads only the uniform map. */
	snprintf(path, sizeof(path), "%s/closed_loop_channels.o", policy_dir);
	CHECK(load(path) == 0);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s RECORD.o RECORD_PROXY.o POLICY_DIR\n", argv[0]);
		return 2;
	}
	record_o = argv[1];
	record_proxy_o = argv[2];
	policy_dir = argv[3];
	record_end_o = argc > 4 ? argv[4] : NULL;
	setenv("NCCLBPF_WATCH", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	ncclbpf_rt_acquire();
	test_mask();
	test_releases();
	test_end_only();
	test_proxy_and_bogus();
	test_exhaustion();
	test_direct_loop_rejected();
	ncclbpf_rt_unload();
	ncclbpf_rt_release();
	return check_summary("test_profiler");
}
