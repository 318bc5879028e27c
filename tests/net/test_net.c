/* Net plugin tests through the exported tables, with ranks as forked processes talking over
 * loopback TCP (net_harness.h explains the calling pattern, which is NCCL's proxy's).
 *
 *   test_net LIB ring N VER          N ranks in a ring, every size class, data verified; set-up
 *                                    on the main thread, data on a second ("progress") thread
 *   test_net LIB multirecv           one irecv with 4 buffers, sends in another tag order
 *   test_net LIB refuse SIDE POLICY  POLICY (denies everything) loaded by rank SIDE only: both
 *                                    ranks' connect and accept must fail, nobody hangs
 *   test_net LIB killed              the peer dies mid-run: receive and send report an error
 *   test_net LIB api                 bad input, finalize(NULL), no devices
 *   test_net LIB inner FAKE [POLICY] delegation to a fake inner plugin that counts calls
 *   test_net LIB probe POLICY        every hook runs once per event with a filled context
 *   test_net LIB pace POLICY MBPS    an isend program's rate is enforced
 *   test_net LIB quiet               no policy: what a net-only user is told (no WARN, one INFO
 *                                    that the transport runs without hooks, nothing on tuning)
 *                                    and what a user who named the tuner is told (one WARN)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "check.h"
#include "net_harness.h"
#include "run_cli.h"
#include "thread_count.h"
#include "nccl_tuner.h"
#include "net_hooks.h" /* NET_PACE_BURST_NS */

#define COMM_ID	  0x1234abcdull
#define MAX_RANKS 8

static const char *lib_path;
static int failures;

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "[%d] FAIL %s:%d: %s: ", (int)getpid(), __FILE__,          \
				__LINE__, #cond);                                                  \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static const size_t size_classes[] = {0, 1, 4096, 1u << 20, 64u << 20};
#define N_SIZES (sizeof(size_classes) / sizeof(size_classes[0]))

/* --- a rank --------------------------------------------------------------------------------- */

struct rank {
	struct nh_lib l;
	void *ctx, *lc;
	struct nh_setup s;
	int id, n;
	char handle[NCCL_NET_HANDLE_MAXSIZE], peer_handle[NCCL_NET_HANDLE_MAXSIZE];
};

/* init, devices, properties, listen; the handle goes to the previous rank, the next rank's
 * handle comes back; then connect/accept until both are done. */
static int rank_setup(struct rank *r, int ver, int id, int n, int (*pipes)[2], int expect_ok)
{
	r->id = id;
	r->n = n;
	if (nh_open(&r->l, lib_path, ver))
		return -1;
	ncclNetCommConfig_v12_t cfg = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
	EXPECT(r->l.t->init(&r->ctx, COMM_ID, &cfg, nh_logger, NULL) == ncclSuccess, "init");
	int nd = 0;
	EXPECT(r->l.t->devices(&nd) == ncclSuccess && nd >= 1, "devices %d", nd);
	ncclNetProperties_v12_t p;
	EXPECT(nh_props(&r->l, 0, &p) == ncclSuccess, "props");
	EXPECT(p.ptrSupport == NCCL_PTR_HOST && p.name && p.maxRecvs >= 4 && p.speed > 0,
	       "props: ptr %d maxRecvs %d", p.ptrSupport, p.maxRecvs);
	memset(r->handle, 0xee, sizeof(r->handle));
	EXPECT(r->l.t->listen(r->ctx, 0, r->handle, &r->lc) == ncclSuccess && r->lc, "listen");
	if (nh_write_all(pipes[id][1], r->handle, sizeof(r->handle)) ||
	    nh_read_all(pipes[(id + 1) % n][0], r->peer_handle, sizeof(r->peer_handle)))
		return -1;
	int e = nh_connect_accept(&r->l, r->ctx, 0, r->peer_handle, r->lc, &r->s, 30);
	EXPECT(e != -ETIMEDOUT, "connect/accept did not finish in 30 s");
	if (expect_ok)
		EXPECT(e == 0 && r->s.send && r->s.recv, "connect %d accept %d", r->s.connect_res,
		       r->s.accept_res);
	return e;
}

static void rank_close(struct rank *r)
{
	EXPECT(r->l.t->closeSend(r->s.send) == ncclSuccess, "closeSend");
	EXPECT(r->l.t->closeRecv(r->s.recv) == ncclSuccess, "closeRecv");
	EXPECT(r->l.t->closeListen(r->lc) == ncclSuccess, "closeListen");
	EXPECT(r->l.t->finalize(r->ctx) == ncclSuccess, "finalize");
}

/* Forks n ranks running fn(id); returns the number of ranks that failed. */
static int run_ranks(int n, int (*fn)(int id, int n, int (*pipes)[2], void *arg), void *arg,
		     int timeout_s)
{
	int pipes[MAX_RANKS][2];
	for (int i = 0; i < n; i++)
		if (pipe(pipes[i]))
			return n;
	pid_t pids[MAX_RANKS];
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			alarm((unsigned)timeout_s); /* a hang is a failure, not a stuck suite */
			int rc = fn(i, n, pipes, arg);
			fflush(stderr);
			_exit(rc || failures ? 1 : 0);
		}
	}
	int bad = 0;
	for (int i = 0; i < n; i++) {
		int st = 0;
		waitpid(pids[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "rank %d: %s %d\n", i, WIFSIGNALED(st) ? "signal" : "exit",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			bad++;
		}
	}
	for (int i = 0; i < n; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	return bad;
}

/* --- ring: every size class, data checked, on a progress thread ---------------------------- */

struct ring_data {
	struct rank *r;
	uint8_t *sbuf, *rbuf;
	int rc;
};

static void *ring_progress(void *arg)
{
	struct ring_data *d = arg;
	struct rank *r = d->r;
	const ncclNet_v12_t *t = r->l.t;
	size_t max = size_classes[N_SIZES - 1] + 64;
	void *smh = NULL, *rmh = NULL;
	EXPECT(t->regMr(r->s.send, d->sbuf, max, NCCL_PTR_HOST, &smh) == ncclSuccess && smh,
	       "regMr send");
	EXPECT(t->regMr(r->s.recv, d->rbuf, max, NCCL_PTR_HOST, &rmh) == ncclSuccess && rmh,
	       "regMr recv");
	int from = (r->id + r->n - 1) % r->n;
	for (size_t k = 0; k < N_SIZES; k++) {
		size_t size = size_classes[k];
		nh_fill(d->sbuf, size, r->id, (int)k);
		memset(d->rbuf, 0xa5, size + 64);
		void *rq = NULL, *sq = NULL;
		void *bufs[1] = {d->rbuf};
		size_t caps[1] = {size + 64}; /* posted larger than sent: test reports the size */
		int tags[1] = {100 + (int)k}, got[1] = {-1};
		EXPECT(nh_irecv(&r->l, r->s.recv, 1, bufs, caps, tags, &rmh, &rq) == ncclSuccess,
		       "irecv");
		EXPECT(nh_isend(&r->l, r->s.send, d->sbuf, size, 100 + (int)k, smh, &sq) ==
			   ncclSuccess,
		       "isend");
		/* Both tested in turn, as NCCL's progress thread does: waiting on the send alone
		 * could stall while the peer waits for our receive to drain its socket. */
		EXPECT(nh_wait2(&r->l, sq, rq, got, 60) == ncclSuccess, "exchange %zu", size);
		EXPECT(got[0] == (int)size, "size %zu reported as %d", size, got[0]);
		long bad = nh_check(d->rbuf, size, from, (int)k);
		EXPECT(bad < 0, "size %zu: byte %ld differs", size, bad);
		EXPECT(d->rbuf[size] == 0xa5, "size %zu: wrote past the message", size);
		/* iflush on host memory: nothing to do, no request */
		void *fq = (void *)1;
		int fs[1] = {(int)size};
		EXPECT(t->iflush(r->s.recv, 1, bufs, fs, &rmh, &fq) == ncclSuccess && !fq,
		       "iflush");
	}
	EXPECT(t->deregMr(r->s.send, smh) == ncclSuccess, "deregMr");
	EXPECT(t->deregMr(r->s.recv, rmh) == ncclSuccess, "deregMr");
	return NULL;
}

struct ring_arg {
	int ver;
};

static int ring_rank(int id, int n, int (*pipes)[2], void *arg)
{
	struct ring_arg *a = arg;
	struct rank r;
	if (rank_setup(&r, a->ver, id, n, pipes, 1))
		return 1;
	size_t max = size_classes[N_SIZES - 1] + 64;
	struct ring_data d = {.r = &r, .sbuf = malloc(max), .rbuf = malloc(max)};
	if (!d.sbuf || !d.rbuf)
		return 1;
	pthread_t th;
	if (pthread_create(&th, NULL, ring_progress, &d))
		return 1;
	pthread_join(th, NULL);
	rank_close(&r);
	free(d.sbuf);
	free(d.rbuf);
	return 0;
}

/* --- multi-receive ---------------------------------------------------------------------------- */

static int multi_rank(int id, int n, int (*pipes)[2], void *arg)
{
	(void)arg;
	struct rank r;
	if (rank_setup(&r, 12, id, n, pipes, 1))
		return 1;
	/* Rank 0 sends four messages in tag order 7,5,6,4; rank 1 posts one irecv with buffers
	 * tagged 4,5,6,7 (sizes spanning inline and split paths, one empty). */
	static const int send_tags[4] = {7, 5, 6, 4};
	static const size_t send_sizes[4] = {100, 0, 3u << 20, 5000};
	const ncclNet_v12_t *t = r.l.t;
	if (id == 0) {
		uint8_t *b[4];
		void *q[4];
		for (int i = 0; i < 4; i++) {
			b[i] = malloc(send_sizes[i] + 1);
			nh_fill(b[i], send_sizes[i], 0, send_tags[i]);
			EXPECT(nh_isend(&r.l, r.s.send, b[i], send_sizes[i], send_tags[i], NULL,
					&q[i]) == ncclSuccess,
			       "isend");
		}
		for (int i = 0; i < 4; i++) {
			EXPECT(nh_wait(&r.l, q[i], NULL, 30) == ncclSuccess, "send %d", i);
			free(b[i]);
		}
	} else {
		void *bufs[4];
		size_t caps[4];
		int tags[4] = {4, 5, 6, 7}, got[4] = {-1, -1, -1, -1};
		void *mh[4] = {0};
		for (int i = 0; i < 4; i++) {
			caps[i] = 4u << 20;
			bufs[i] = malloc(caps[i]);
		}
		void *q;
		EXPECT(nh_irecv(&r.l, r.s.recv, 4, bufs, caps, tags, mh, &q) == ncclSuccess,
		       "irecv");
		EXPECT(nh_wait(&r.l, q, got, 30) == ncclSuccess, "multi-receive");
		for (int i = 0; i < 4; i++) {
			int j = 0;
			while (send_tags[j] != tags[i])
				j++;
			EXPECT(got[i] == (int)send_sizes[j],
			       "buffer %d (tag %d): size %d, want %zu", i, tags[i], got[i],
			       send_sizes[j]);
			EXPECT(nh_check(bufs[i], send_sizes[j], 0, tags[i]) < 0, "buffer %d data",
			       i);
			free(bufs[i]);
		}
	}
	(void)t;
	rank_close(&r);
	return 0;
}

/* --- refusal ---------------------------------------------------------------------------------- */

struct refuse_arg {
	int side;
	const char *policy;
};

static int refuse_rank(int id, int n, int (*pipes)[2], void *arg)
{
	struct refuse_arg *a = arg;
	if (id == a->side)
		setenv("NCCLBPF_POLICY", a->policy, 1);
	struct rank r;
	int e = rank_setup(&r, 12, id, n, pipes, 0);
	/* Both directions of the pair involve the refusing rank: each connect and each accept
	 * must fail, on both ranks, by the refusal (not by the harness's set-up time-out). */
	EXPECT(e != -ETIMEDOUT, "set-up timed out instead of being refused");
	EXPECT(r.s.connect_res != ncclSuccess && !r.s.send, "connect succeeded (%d)",
	       r.s.connect_res);
	EXPECT(r.s.accept_res != ncclSuccess && !r.s.recv, "accept succeeded (%d)", r.s.accept_res);
	if (id == a->side)
		EXPECT(nh_warn_count() >= 1 && nh_last_warn_has("refused"),
		       "no WARN about the refusal");
	EXPECT(r.l.t->closeListen(r.lc) == ncclSuccess, "closeListen");
	EXPECT(r.l.t->finalize(r.ctx) == ncclSuccess, "finalize");
	return 0;
}

/* --- killed peer -------------------------------------------------------------------------------
 */

static int killed_rank(int id, int n, int (*pipes)[2], void *arg)
{
	(void)arg;
	struct rank r;
	if (rank_setup(&r, 12, id, n, pipes, 1))
		return 1;
	size_t size = 1u << 20;
	uint8_t *buf = malloc(64u << 20);
	void *q;
	if (id == 1) {
		/* One message, then die without closing anything (as a crashed rank would). */
		nh_fill(buf, size, 1, 0);
		EXPECT(nh_isend(&r.l, r.s.send, buf, size, 1, NULL, &q) == ncclSuccess, "isend");
		EXPECT(nh_wait(&r.l, q, NULL, 30) == ncclSuccess, "send");
		usleep(200000);
		raise(SIGKILL);
	}
	void *bufs[1] = {buf};
	size_t caps[1] = {size};
	int tags[1] = {1}, got[1];
	EXPECT(nh_irecv(&r.l, r.s.recv, 1, bufs, caps, tags, NULL, &q) == ncclSuccess, "irecv");
	EXPECT(nh_wait(&r.l, q, got, 30) == ncclSuccess && nh_check(buf, size, 1, 0) < 0,
	       "first message");
	/* The peer is gone: a posted receive must fail with an error, not stay in progress until
	 * the harness gives up (60 s: a hang guard, ncclInProgress). */
	EXPECT(nh_irecv(&r.l, r.s.recv, 1, bufs, caps, tags, NULL, &q) == ncclSuccess, "irecv 2");
	ncclResult_t res = nh_wait(&r.l, q, got, 60);
	EXPECT(res != ncclSuccess && res != ncclInProgress, "receive from a dead peer: %d", res);
	/* Sends to it fail too (the first ones may still fit in kernel buffers; 60 s hang guard).
	 */
	uint64_t t0 = nh_now_ns();
	res = ncclSuccess;
	for (int i = 0; res == ncclSuccess && nh_now_ns() - t0 < 60000000000ull; i++) {
		res = nh_isend(&r.l, r.s.send, buf, 64u << 20, 2, NULL, &q);
		if (res == ncclSuccess)
			res = nh_wait(&r.l, q, NULL, 60);
	}
	EXPECT(res != ncclSuccess && res != ncclInProgress, "send to a dead peer never failed");
	EXPECT(nh_warn_count() >= 1, "no WARN");
	rank_close(&r);
	free(buf);
	return 0;
}

static int run_killed(void)
{
	/* Rank 1 dies by SIGKILL on purpose: only rank 0's status counts. */
	int pipes[2][2];
	if (pipe(pipes[0]) || pipe(pipes[1]))
		return 1;
	pid_t p[2];
	for (int i = 0; i < 2; i++)
		if ((p[i] = fork()) == 0) {
			alarm(60);
			int rc = killed_rank(i, 2, pipes, NULL);
			_exit(rc || failures ? 1 : 0);
		}
	int st0, st1;
	waitpid(p[0], &st0, 0);
	waitpid(p[1], &st1, 0);
	EXPECT(WIFSIGNALED(st1) && WTERMSIG(st1) == SIGKILL, "rank 1 status %x", st1);
	EXPECT(WIFEXITED(st0) && WEXITSTATUS(st0) == 0, "surviving rank status %x", st0);
	return failures;
}

/* --- bad input, NULL finalize, no devices ---------------------------------------------------- */

static int run_api(void)
{
	/* First, before this process loads the library (discovery runs once per process). */
	/* No usable interface: devices() says 0 and NCCL then finalizes (possibly NULL). */
	pid_t child = fork();
	if (child == 0) {
		setenv("NCCL_SOCKET_IFNAME", "=no-such-interface0", 1);
		struct nh_lib l;
		if (nh_open(&l, lib_path, 12))
			_exit(1);
		void *ctx = NULL;
		int nd = -1;
		EXPECT(l.t->init(&ctx, 1, NULL, nh_logger, NULL) == ncclSuccess, "init");
		EXPECT(l.t->devices(&nd) == ncclSuccess && nd == 0, "devices = %d", nd);
		EXPECT(l.t->finalize(ctx) == ncclSuccess, "finalize");
		EXPECT(l.t->finalize(NULL) == ncclSuccess, "finalize(NULL)");
		_exit(failures ? 1 : 0);
	}
	int st;
	waitpid(child, &st, 0);
	EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "no-device child %x", st);
	for (int ver = 11; ver <= 12; ver++) {
		struct nh_lib l;
		if (nh_open(&l, lib_path, ver))
			return 1;
		const ncclNet_v12_t *t = l.t;
		EXPECT(t->name && !strcmp(t->name, "NCCLbpf"), "name");
		EXPECT(t->finalize(NULL) == ncclSuccess, "finalize(NULL)");
		EXPECT(t->init(NULL, 1, NULL, nh_logger, NULL) != ncclSuccess, "init(NULL)");
		EXPECT(t->devices(NULL) != ncclSuccess, "devices(NULL)");
		EXPECT(t->getProperties(-1, NULL) != ncclSuccess, "props(NULL)");
		ncclNetProperties_v12_t p;
		EXPECT(nh_props(&l, 999, &p) != ncclSuccess, "props(999)");
		void *ctx = NULL, *c = (void *)1, *req = (void *)1;
		EXPECT(t->init(&ctx, 7, NULL, nh_logger, NULL) == ncclSuccess && ctx, "init");
		char handle[NCCL_NET_HANDLE_MAXSIZE] = {0};
		EXPECT(t->listen(ctx, 999, handle, &c) != ncclSuccess && !c, "listen bad dev");
		EXPECT(t->listen(ctx, 0, NULL, &c) != ncclSuccess, "listen NULL handle");
		ncclNetDeviceHandle_v12_t *dh = NULL;
		c = (void *)1;
		EXPECT(t->connect(ctx, 0, handle, &c, &dh) != ncclSuccess && !c, "connect zeros");
		EXPECT(t->accept(NULL, &c, &dh) != ncclSuccess, "accept(NULL)");
		uint64_t junk[64] = {0};
		EXPECT(t->accept(junk, &c, &dh) != ncclSuccess, "accept(junk)");
		int done = 7, sizes[4];
		EXPECT(t->test(NULL, &done, sizes) != ncclSuccess && done == 0, "test(NULL)");
		EXPECT(t->test(junk, &done, sizes) != ncclSuccess, "test(junk)");
		EXPECT(t->isend(NULL, junk, 8, 0, NULL, NULL, &req) != ncclSuccess && !req,
		       "isend");
		EXPECT(t->isend(junk, junk, 8, 0, NULL, NULL, &req) != ncclSuccess, "isend junk");
		void *bufs[1] = {junk};
		size_t caps[1] = {8};
		EXPECT(t->irecv(junk, 1, bufs, caps, NULL, NULL, NULL, &req) != ncclSuccess,
		       "irecv junk");
		EXPECT(t->regMr(NULL, junk, 8, NCCL_PTR_HOST, &req) != ncclSuccess, "regMr(NULL)");
		EXPECT(t->deregMr(junk, NULL) != ncclSuccess, "deregMr junk");
		EXPECT(t->closeSend(NULL) == ncclSuccess, "closeSend(NULL)");
		EXPECT(t->closeRecv(junk) != ncclSuccess, "closeRecv(junk)");
		EXPECT(t->closeListen(NULL) == ncclSuccess, "closeListen(NULL)");
		EXPECT(t->setNetAttr(ctx, NULL) == ncclSuccess, "setNetAttr");
		EXPECT(t->regMrDmaBuf == NULL && t->getDeviceMr == NULL &&
			   t->irecvConsumed == NULL && t->makeVDevice == NULL,
		       "optional entries are NULL for our transport");
		/* A real comm: CUDA memory is refused cleanly. */
		void *lc = NULL;
		EXPECT(t->listen(ctx, 0, handle, &lc) == ncclSuccess, "listen");
		struct nh_setup s;
		EXPECT(nh_connect_accept(&l, ctx, 0, handle, lc, &s, 60) == 0, "loopback pair");
		void *mh = (void *)1;
		EXPECT(t->regMr(s.send, junk, 8, NCCL_PTR_CUDA, &mh) != ncclSuccess && !mh,
		       "CUDA pointer refused");
		EXPECT(t->irecv(s.recv, NCCL_NET_MAX_REQUESTS + 1, bufs, caps, NULL, NULL, NULL,
				&req) != ncclSuccess,
		       "too many buffers");
		EXPECT(t->closeSend(s.send) == ncclSuccess && t->closeRecv(s.recv) == ncclSuccess &&
			   t->closeListen(lc) == ncclSuccess,
		       "close");
		EXPECT(t->finalize(ctx) == ncclSuccess, "finalize");
	}
	return failures;
}

/* --- delegation ------------------------------------------------------------------------------ */

struct fake_counts {
	int init, devices, props, listen, connect, accept, regmr, deregmr, isend, irecv, test,
	    close_send, close_recv, close_listen, finalize, iflush;
	long long bytes;
};

static int run_inner(const char *fake, const char *deny_policy)
{
	setenv("NCCLBPF_NET_INNER", fake, 1);
	if (deny_policy)
		setenv("NCCLBPF_POLICY", deny_policy, 1);
	for (int ver = 11; ver <= 12; ver++) {
		struct nh_lib l;
		if (nh_open(&l, lib_path, ver))
			return 1;
		void *fdl = dlopen(fake, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
		EXPECT(fdl, "the fake plugin was loaded by ours");
		if (!fdl)
			return failures;
		/* The fake keeps a pointer to its counters right after its table. */
		const char *ft = dlsym(fdl, "ncclNetPlugin_v11");
		struct fake_counts *fc = NULL;
		if (ft)
			memcpy(&fc, ft + sizeof(ncclNet_v11_t), sizeof(fc));
		EXPECT(fc, "the fake's counters");
		if (!fc)
			return failures;
		struct fake_counts before = *fc;
		const ncclNet_v12_t *t = l.t;
		void *ctx = NULL;
		EXPECT(t->init(&ctx, COMM_ID, NULL, nh_logger, NULL) == ncclSuccess, "init");
		int nd = 0;
		EXPECT(t->devices(&nd) == ncclSuccess && nd == 2, "devices %d (fake has 2)", nd);
		ncclNetProperties_v12_t p;
		EXPECT(nh_props(&l, 1, &p) == ncclSuccess && p.name && !strcmp(p.name, "fake1") &&
			   p.maxRecvs == 3,
		       "props forwarded");
		EXPECT(t->regMrDmaBuf == NULL && t->makeVDevice == NULL && t->getDeviceMr != NULL,
		       "optional entries mirror the inner plugin's");
		char handle[NCCL_NET_HANDLE_MAXSIZE];
		void *lc = NULL;
		EXPECT(t->listen(ctx, 0, handle, &lc) == ncclSuccess && lc, "listen");
		struct nh_setup s;
		int e = nh_connect_accept(&l, ctx, 0, handle, lc, &s, 60);
		if (deny_policy) {
			EXPECT(e != 0 && !s.send && !s.recv, "denied connection succeeded");
			EXPECT(fc->close_send - before.close_send == 1 &&
				   fc->close_recv - before.close_recv == 1,
			       "inner comms of a refused connection closed (%d %d)",
			       fc->close_send - before.close_send,
			       fc->close_recv - before.close_recv);
			t->closeListen(lc);
			t->finalize(ctx);
			continue;
		}
		EXPECT(e == 0, "connect/accept");
		char sbuf[3000], rbuf[3000];
		nh_fill((uint8_t *)sbuf, sizeof(sbuf), 3, 3);
		void *smh, *rmh;
		EXPECT(t->regMr(s.send, sbuf, sizeof(sbuf), NCCL_PTR_HOST, &smh) == ncclSuccess &&
			   t->regMr(s.recv, rbuf, sizeof(rbuf), NCCL_PTR_HOST, &rmh) == ncclSuccess,
		       "regMr");
		for (int k = 0; k < 5; k++) {
			void *rq, *sq, *bufs[1] = {rbuf};
			size_t caps[1] = {sizeof(rbuf)};
			int tags[1] = {k}, got[1] = {0};
			memset(rbuf, 0, sizeof(rbuf));
			EXPECT(nh_irecv(&l, s.recv, 1, bufs, caps, tags, &rmh, &rq) == ncclSuccess,
			       "irecv");
			EXPECT(nh_isend(&l, s.send, sbuf, 1000 + (size_t)k, k, smh, &sq) ==
				   ncclSuccess,
			       "isend");
			EXPECT(nh_wait(&l, sq, NULL, 60) == ncclSuccess, "send");
			EXPECT(nh_wait(&l, rq, got, 60) == ncclSuccess && got[0] == 1000 + k,
			       "recv %d", got[0]);
			EXPECT(nh_check((uint8_t *)rbuf, 1000 + (size_t)k, 3, 3) < 0, "data");
			void *fq = NULL;
			int fs[1] = {1000};
			EXPECT(t->iflush(s.recv, 1, bufs, fs, &rmh, &fq) == ncclSuccess && fq,
			       "iflush forwarded");
			EXPECT(nh_wait(&l, fq, NULL, 60) == ncclSuccess, "flush");
		}
		void *dptr = NULL;
		EXPECT(t->getDeviceMr(s.send, smh, &dptr) == ncclSuccess && dptr == smh,
		       "getDeviceMr forwarded");
		ncclNetAttr_v12_t attr = {.op = 1};
		EXPECT(t->setNetAttr(ctx, &attr) == ncclSuccess, "setNetAttr");
		EXPECT(t->deregMr(s.send, smh) == ncclSuccess &&
			   t->deregMr(s.recv, rmh) == ncclSuccess,
		       "deregMr");
		EXPECT(t->closeSend(s.send) == ncclSuccess && t->closeRecv(s.recv) == ncclSuccess &&
			   t->closeListen(lc) == ncclSuccess,
		       "close");
		EXPECT(t->finalize(ctx) == ncclSuccess, "finalize");
		struct fake_counts d;
		int *a = (int *)&d, *x = (int *)fc, *b = (int *)&before;
		for (size_t i = 0; i < offsetof(struct fake_counts, bytes) / sizeof(int); i++)
			a[i] = x[i] - b[i];
		EXPECT(
		    d.init == 1 && d.finalize == 1 && d.devices >= 1 && d.props >= 1 &&
			d.listen == 1 && d.connect >= 1 && d.accept >= 1 && d.regmr == 2 &&
			d.deregmr == 2 && d.isend == 5 && d.irecv == 5 && d.iflush == 5 &&
			d.test >= 15 && d.close_send == 1 && d.close_recv == 1 &&
			d.close_listen == 1,
		    "inner calls: init %d fin %d listen %d connect %d accept %d regmr %d isend %d "
		    "irecv %d iflush %d test %d close %d/%d/%d",
		    d.init, d.finalize, d.listen, d.connect, d.accept, d.regmr, d.isend, d.irecv,
		    d.iflush, d.test, d.close_send, d.close_recv, d.close_listen);
		EXPECT(fc->bytes - before.bytes == 5 * 1000 + 10,
		       "bytes moved by the inner plugin");
	}
	return failures;
}

/* --- hooks: every program sees its event with a filled context ------------------------------ */

/* probe.c logs one line per hook run (bpf_trace_printk to stderr); this rank captures its
 * own stderr and checks the lines against what it did. */
static int count_lines(const char *text, const char *prefix)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, prefix)); p++)
		n++;
	return n;
}

struct probe_arg {
	const char *policy;
	const char *dir;
	int complete_only; /* probe_complete.o: SEC("net/complete") only */
};

static int probe_rank(int id, int n, int (*pipes)[2], void *arg)
{
	struct probe_arg *a = arg;
	char path[512];
	snprintf(path, sizeof(path), "%s/probe%s.rank%d.log", a->dir,
		 a->complete_only ? "_complete" : "", id);
	FILE *f = freopen(path, "w+", stderr);
	if (!f)
		return 1;
	setenv("NCCLBPF_POLICY", a->policy, 1);
	setenv("NCCLBPF_WATCH", "0", 1);
	struct rank r;
	if (rank_setup(&r, 12, id, n, pipes, 1))
		return 1;
	static const size_t sizes[3] = {10, 200000, 0};
	uint8_t *sb = calloc(1, 200000), *rb = calloc(1, 200000);
	for (int k = 0; k < 3; k++) {
		void *rq, *sq, *bufs[1] = {rb};
		size_t caps[1] = {200000};
		int tags[1] = {40 + k}, got[1];
		EXPECT(nh_irecv(&r.l, r.s.recv, 1, bufs, caps, tags, NULL, &rq) == ncclSuccess,
		       "irecv");
		EXPECT(nh_isend(&r.l, r.s.send, sb, sizes[k], 40 + k, NULL, &sq) == ncclSuccess,
		       "isend");
		EXPECT(nh_wait(&r.l, sq, NULL, 60) == ncclSuccess, "send");
		EXPECT(nh_wait(&r.l, rq, got, 60) == ncclSuccess, "recv");
	}
	rank_close(&r);
	free(sb);
	free(rb);
	fflush(stderr);
	/* Read back what the programs logged. */
	FILE *in = fopen(path, "r");
	char text[16384] = "";
	size_t len = in ? fread(text, 1, sizeof(text) - 1, in) : 0;
	text[len] = 0;
	if (in)
		fclose(in);
	int ok = 1;
#define LINE(cond, ...)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			ok = 0;                                                                    \
			fprintf(stdout, "[rank %d] FAIL: ", id);                                   \
			fprintf(stdout, __VA_ARGS__);                                              \
			fprintf(stdout, "\n");                                                     \
		}                                                                                  \
	} while (0)
	/* 127.0.0.1 as the context's u32 (network order read on a little-endian host). */
	if (a->complete_only) {
		/* Exactly one line per request (3 sends, 3 receives), each with a posting time
		 * although no isend/irecv program needed one. */
		LINE(count_lines(text, "probe complete op=5 bytes=10 ") == 1, "send complete 10");
		LINE(count_lines(text, "probe complete op=5 bytes=200000 ") == 1,
		     "send complete 200000");
		LINE(count_lines(text, "probe complete op=5 bytes=0 ") == 1, "send complete 0");
		LINE(count_lines(text, "probe complete op=6 bytes=10 ") == 1, "recv complete 10");
		LINE(count_lines(text, "probe complete op=6 bytes=200000 ") == 1,
		     "recv complete 200000");
		LINE(count_lines(text, "probe complete op=6 bytes=0 ") == 1, "recv complete 0");
		LINE(count_lines(text, "timed=1") == 6, "completions with time and duration: %d",
		     count_lines(text, "timed=1"));
		LINE(count_lines(text, "probe ") == 6, "%d probe lines (want 6)",
		     count_lines(text, "probe "));
		goto done;
	}
	LINE(count_lines(text, "probe connect dev=0 comm=1234abcd addr=100007f") == 1,
	     "connect line");
	LINE(count_lines(text, "probe accept dev=0 comm=1234abcd addr=100007f") == 1,
	     "accept line");
	LINE(count_lines(text, "probe isend bytes=10 tag=40 peer=ffffffff") == 1, "isend 10");
	LINE(count_lines(text, "probe isend bytes=200000 tag=41 peer=ffffffff") == 1,
	     "isend 200000");
	LINE(count_lines(text, "probe isend bytes=0 tag=42") == 1, "isend 0");
	LINE(count_lines(text, "probe irecv bytes=200000 tag=4") == 3, "irecv x3");
	LINE(count_lines(text, "probe complete op=5 bytes=10 ") == 1, "send complete 10");
	LINE(count_lines(text, "probe complete op=6 bytes=200000 ") == 1, "recv complete 200000");
	LINE(count_lines(text, "probe complete op=6 bytes=0 ") == 1, "recv complete 0");
	LINE(count_lines(text, "timed=1") == 6, "completions with time and duration: %d",
	     count_lines(text, "timed=1"));
	LINE(count_lines(text, "probe ") == 14, "%d probe lines (want 14)",
	     count_lines(text, "probe "));
	LINE(count_lines(text, "port=0") == 0, "a connect/accept port of 0");
done:
	if (!ok)
		fprintf(stdout, "[rank %d] log:\n%s\n", id, text);
	fflush(stdout);
	return ok ? 0 : 1;
}

/* --- completion programs off the critical path ---------------------------------------------
 * With net_counters attached, every completion is queued on the communicator's queue (runtime
 * net_defer.c). Modes: "defer": the drain thread runs the programs while the connections stay
 * open and nobody reads; "nodrain" (NCCLBPF_NET_DRAIN=0): they wait, and a read of the map
 * through live inspection (`ncclbpf map dump`) runs them first, so the counts are exact;
 * "inline" (NCCLBPF_NET_DEFER=0): no queue at all; "sample": as "defer" with sampled timing
 * (NCCLBPF_NET_TIME_EVERY=5 over the policy's one in 8): every message counted, one in five of
 * each connection timed. */
struct defer_arg {
	const char *policy, *cli;
	int mode; /* 0 defer, 1 nodrain, 2 inline, 3 sample (defer, NCCLBPF_NET_TIME_EVERY=5) */
};

/* The u64 at index i of the first value `ncclbpf map dump` prints: the i-th member of a value
 * typed by the bundle's BTF ({"sends":50,...}), or the i-th little-endian word of a hex one. */
static long long dump_u64(const char *text, int i)
{
	const char *p = strstr(text, ": value ");
	if (p && p[8] == '{') {
		const char *q = p + 8;
		for (int k = 0; k <= i; k++) {
			q = strchr(q + 1, ':');
			if (!q)
				return -1;
		}
		unsigned long long v;
		return sscanf(q + 1, "%llu", &v) == 1 ? (long long)v : -1;
	}
	if (p)
		p += 2;
	if (!p || strlen(p + 6) < (size_t)(i + 1) * 16)
		return -1;
	unsigned long long v = 0;
	for (int b = 7; b >= 0; b--) {
		unsigned x;
		if (sscanf(p + 6 + i * 16 + b * 2, "%2x", &x) != 1)
			return -1;
		v = v << 8 | x;
	}
	return (long long)v;
}

/* The number after "key": in `ncclbpf stat --json` output from text on. */
static long long json_u64(const char *text, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(text, pat);
	return p ? atoll(p + strlen(pat)) : -1;
}

#define DEFER_MSGS 50

static int defer_rank(int id, int n, int (*pipes)[2], void *arg)
{
	struct defer_arg *a = arg;
	setenv("NCCLBPF_POLICY", a->policy, 1);
	setenv("NCCLBPF_WATCH", "0", 1);
	setenv("NCCLBPF_INSPECT_INTERVAL_US", "0", 1);
	if (a->mode == 1)
		setenv("NCCLBPF_NET_DRAIN", "0", 1);
	if (a->mode == 2)
		setenv("NCCLBPF_NET_DEFER", "0", 1);
	if (a->mode == 3)
		setenv("NCCLBPF_NET_TIME_EVERY", "5", 1);
	struct rank r;
	if (rank_setup(&r, 12, id, n, pipes, 1))
		return 1;
	static uint8_t sb[4096], rb[4096];
	for (int k = 0; k < DEFER_MSGS; k++) {
		void *rq, *sq, *bufs[1] = {rb};
		size_t caps[1] = {sizeof(rb)};
		int tags[1] = {k}, got[1];
		EXPECT(nh_irecv(&r.l, r.s.recv, 1, bufs, caps, tags, NULL, &rq) == ncclSuccess,
		       "irecv");
		EXPECT(nh_isend(&r.l, r.s.send, sb, 1000 + (size_t)k, k, NULL, &sq) == ncclSuccess,
		       "isend");
		EXPECT(nh_wait2(&r.l, sq, rq, got, 60) == ncclSuccess, "exchange %d", k);
	}
	char out[16384], args[256];
	const char *net = NULL;
	snprintf(args, sizeof(args), "stat %d --json", (int)getpid());
	/* Live, connections open; `stat` reads no map, so it leaves the queue alone. */
	for (int i = 0; i < 500; i++) {
		int rc = run_cli_tool(a->cli, out, sizeof(out), "%s", args);
		EXPECT(rc == 0, "stat rc %d: %s", rc, out);
		net = strstr(out, "\"net\":{");
		if ((a->mode != 0 && a->mode != 3) || (net && json_u64(net, "pending") == 0) || rc)
			break;
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	/* The policy's record names the completion hook and how its durations are sampled. */
	const char *prog = strstr(out, "\"hook\":\"net/complete\"");
	long long every = a->mode == 3 ? 5 : 8;
	EXPECT(prog && json_u64(prog, "time_every") == every,
	       "stat: net/complete program timing one request in %lld: %s", every, out);
	if (a->mode == 2) {
		EXPECT(strstr(out, "\"net\":null") != NULL, "no queues when inline: %s", out);
	} else {
		EXPECT(net && json_u64(net, "queues") == 1 &&
			   json_u64(net, "queued") == 2 * DEFER_MSGS &&
			   json_u64(net, "other_thread") == 0,
		       "every completion queued, on the communicator's one queue: %s", out);
		if (a->mode == 0 || a->mode == 3)
			EXPECT(net && json_u64(net, "drained") == 2 * DEFER_MSGS &&
				   json_u64(net, "drain_thread") == 1,
			       "the drain thread ran every program: %s", out);
		else
			EXPECT(net && json_u64(net, "pending") == 2 * DEFER_MSGS &&
				   json_u64(net, "drain_thread") == 0,
			       "no drain thread, all waiting: %s", out);
	}
	snprintf(args, sizeof(args), "map dump %d net_peers", (int)getpid());
	int rc = run_cli_tool(a->cli, out, sizeof(out), "%s", args);
	EXPECT(rc == 0, "map dump rc %d: %s", rc, out);
	/* struct peer_stats: sends, send_bytes, send_ns, send_max_ns, recvs, recv_bytes, ... */
	long long bytes = DEFER_MSGS * 1000 + DEFER_MSGS * (DEFER_MSGS - 1) / 2;
	EXPECT(dump_u64(out, 0) == DEFER_MSGS && dump_u64(out, 1) == bytes &&
		   dump_u64(out, 4) == DEFER_MSGS && dump_u64(out, 5) == bytes,
	       "counts of every message while the connections are open: %s", out);
	/* send_timed, recv_timed: one post in 8 of each connection (net_counters.c's section),
	 * or in 5 where NCCLBPF_NET_TIME_EVERY says so: the operator's setting wins. */
	long long timed = a->mode == 3 ? DEFER_MSGS / 5 : DEFER_MSGS / 8;
	EXPECT(dump_u64(out, 8) == timed && dump_u64(out, 9) == timed && dump_u64(out, 2) > 0 &&
		   dump_u64(out, 6) > 0,
	       "%lld timed sends and receives, with latency sums: %s", timed, out);
	snprintf(args, sizeof(args), "stat %d --json", (int)getpid());
	rc = run_cli_tool(a->cli, out, sizeof(out), "%s", args);
	net = strstr(out, "\"net\":{");
	if (a->mode != 2)
		EXPECT(net && json_u64(net, "pending") == 0, "a map read leaves nothing queued: %s",
		       out);
	/* Every run of the completion program counted (`stat`'s runs), queued or inline. */
	prog = strstr(out, "\"hook\":\"net/complete\"");
	EXPECT(prog && json_u64(prog, "runs") == 2 * DEFER_MSGS,
	       "stat counts %d runs of the net/complete program: %s", 2 * DEFER_MSGS, out);
	rank_close(&r);
	fflush(stdout);
	return failures ? 1 : 0;
}

/* --- load/unload cycles: no thread outlives its communicators ---------------------------------
 * NCCL may finalize every net context and dlclose the library, then load it again
 * (docs/design.md §6.10). With a completion program attached, each context has a completion
 * queue and the first starts the runtime's drain thread: two overlapping contexts per cycle
 * (the first finalized while the second still exchanges), ten cycles, and the process must be
 * back to its own threads after each. */
struct cyc_comm {
	void *ctx, *lc;
	struct nh_setup s;
};

static int cyc_open(const struct nh_lib *l, struct cyc_comm *c, uint64_t id)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	EXPECT(l->t->init(&c->ctx, id, NULL, nh_logger, NULL) == ncclSuccess, "init");
	EXPECT(l->t->listen(c->ctx, 0, handle, &c->lc) == ncclSuccess, "listen");
	EXPECT(nh_connect_accept(l, c->ctx, 0, handle, c->lc, &c->s, 60) == 0, "connect/accept");
	return failures;
}

static int cyc_exchange(const struct nh_lib *l, struct cyc_comm *c, int n)
{
	static uint8_t sb[2048], rb[2048];
	for (int k = 0; k < n; k++) {
		void *rq, *sq, *bufs[1] = {rb};
		size_t caps[1] = {sizeof(rb)};
		int tags[1] = {k}, got[1];
		EXPECT(nh_irecv(l, c->s.recv, 1, bufs, caps, tags, NULL, &rq) == ncclSuccess &&
			   nh_isend(l, c->s.send, sb, sizeof(sb), k, NULL, &sq) == ncclSuccess &&
			   nh_wait2(l, sq, rq, got, 60) == ncclSuccess,
		       "exchange %d", k);
	}
	return failures;
}

static void cyc_close(const struct nh_lib *l, struct cyc_comm *c)
{
	EXPECT(l->t->closeSend(c->s.send) == ncclSuccess &&
		   l->t->closeRecv(c->s.recv) == ncclSuccess &&
		   l->t->closeListen(c->lc) == ncclSuccess && l->t->finalize(c->ctx) == ncclSuccess,
	       "close");
}

static int run_cycles(const char *policy)
{
	pid_t child = fork();
	if (child == 0) {
		setenv("NCCLBPF_POLICY", policy, 1);
		setenv("NCCLBPF_WATCH", "0", 1);
		setenv("NCCLBPF_INSPECT", "0", 1);
		setenv("NCCL_SOCKET_IFNAME", "lo", 1);
		int base = thread_count();
		for (int i = 0; i < 10 && !failures; i++) {
			struct nh_lib l;
			if (nh_open(&l, lib_path, 12))
				_exit(1);
			struct cyc_comm a, b;
			if (cyc_open(&l, &a, 100 + (uint64_t)i) || cyc_exchange(&l, &a, 20) ||
			    cyc_open(&l, &b, 200 + (uint64_t)i) || cyc_exchange(&l, &b, 20))
				_exit(1);
			cyc_close(&l, &a);
			/* b's completions still run: the drain thread serves b's queue. */
			cyc_exchange(&l, &b, 20);
			cyc_close(&l, &b);
			dlclose(l.dl);
			int now = thread_count();
#ifdef __SANITIZE_THREAD__
			if (i == 0)
				base = now; /* ThreadSanitizer starts a thread of its own at the
					       first create */
#endif
			EXPECT(now == base, "cycle %d: %d threads after unload, %d before", i, now,
			       base);
		}
		_exit(failures ? 1 : 0);
	}
	int st;
	waitpid(child, &st, 0);
	EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "cycles child %x", st);
	return failures;
}

/* --- pacing ------------------------------------------------------------------------------------
 */

struct pace_arg {
	const char *policy;
	double mbps;
};

static int pace_rank(int id, int n, int (*pipes)[2], void *arg)
{
	struct pace_arg *a = arg;
	if (a->policy)
		setenv("NCCLBPF_POLICY", a->policy, 1);
	struct rank r;
	if (rank_setup(&r, 12, id, n, pipes, 1))
		return 1;
	size_t size = 1u << 20, total = 48u << 20;
	uint8_t *b = malloc(size);
	nh_fill(b, size, 0, 0);
	uint64_t t0 = nh_now_ns();
	for (size_t done = 0; done < total; done += size) {
		void *q;
		if (id == 0) {
			EXPECT(nh_isend(&r.l, r.s.send, b, size, 1, NULL, &q) == ncclSuccess,
			       "isend");
			EXPECT(nh_wait(&r.l, q, NULL, 30) == ncclSuccess, "send");
		} else {
			void *bufs[1] = {b};
			size_t caps[1] = {size};
			int tags[1] = {1}, got[1];
			EXPECT(nh_irecv(&r.l, r.s.recv, 1, bufs, caps, tags, NULL, &q) ==
				   ncclSuccess,
			       "irecv");
			EXPECT(nh_wait(&r.l, q, got, 30) == ncclSuccess && got[0] == (int)size,
			       "recv");
		}
	}
	double secs = (double)(nh_now_ns() - t0) / 1e9, rate = (double)total / secs / 1e6;
	if (id == 0) {
		printf("pace: %zu MiB in %.3f s = %.0f MB/s (policy %s)\n", total >> 20, secs, rate,
		       a->policy ? a->policy : "none");
		/* The bucket's schedule, not a throughput figure: no message starts before its
		 * slot, so the last one starts no earlier than (total - size) at the paced rate
		 * after the first, less the burst allowance (NET_PACE_BURST_NS). A loaded machine
		 * can only make it later, so this cannot flake; a broken bucket lets all messages
		 * through at once (a few ms on loopback). */
		if (a->mbps > 0) {
			double floor_s =
			    (double)(total - size) / (a->mbps * 1e6) - NET_PACE_BURST_NS / 1e9;
			EXPECT(secs >= floor_s,
			       "%zu MiB in %.3f s: before the bucket's schedule (%.3f s)",
			       total >> 20, secs, floor_s);
		}
	}
	rank_close(&r);
	free(b);
	return 0;
}

/* --- no policy: the messages --------------------------------------------------------------- */

static int count_in(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* One process as NCCL drives it for two communicators: NCCL_NET_PLUGIN names the library, so
 * NCCL inits it as the net plugin and, with no NCCL_TUNER_PLUGIN, also as the tuner (fallback
 * to the net plugin's library, docs/design.md §6.2). tuner_named: NCCL_TUNER_PLUGIN
 * names the library too. */
static int quiet_child(int tuner_named)
{
	unsetenv("NCCLBPF_POLICY");
	setenv("NCCL_NET_PLUGIN", lib_path, 1);
	if (tuner_named)
		setenv("NCCL_TUNER_PLUGIN", lib_path, 1);
	else
		unsetenv("NCCL_TUNER_PLUGIN");
	struct nh_lib l;
	if (nh_open(&l, lib_path, 12))
		return 1;
	const ncclTuner_v5_t *tu = dlsym(l.dl, "ncclTunerPlugin_v5");
	EXPECT(tu != NULL, "ncclTunerPlugin_v5");
	if (!tu)
		return 1;
	void *nctx[2] = {0}, *tctx[2] = {0};
	for (int k = 0; k < 2; k++) {
		int nd = 0;
		EXPECT(l.t->init(&nctx[k], COMM_ID + (uint64_t)k, NULL, nh_logger, NULL) ==
			   ncclSuccess,
		       "net init");
		EXPECT(l.t->devices(&nd) == ncclSuccess, "devices");
		EXPECT(tu->init(&tctx[k], COMM_ID + (uint64_t)k, 2, 2, nh_logger, NULL, NULL) ==
			   ncclSuccess,
		       "tuner init");
	}
	for (int k = 0; k < 2; k++) {
		EXPECT(tu->finalize(tctx[k]) == ncclSuccess, "tuner finalize");
		EXPECT(l.t->finalize(nctx[k]) == ncclSuccess, "net finalize");
	}
	pthread_mutex_lock(&nh_log_lock);
	const char *text = nh_log_text;
	int hookless = count_in(text, "the transport runs without hooks");
	EXPECT(hookless == 1, "the net plugin says once that it runs without hooks (%d):\n%s",
	       hookless, text);
	/* No line of the net plugin's speaks of tuning. */
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char one[1200];
		snprintf(one, sizeof(one), "%.*s", (int)(len < 1100 ? len : 1100), line);
		EXPECT(!(strstr(one, "NET/") && strstr(one, "tuning")), "net line on tuning: %s",
		       one);
		line += len + (end ? 1 : 0);
	}
	if (tuner_named) {
		EXPECT(nh_warn_count() == 1 && strstr(nh_last_warn, "NCCLBPF_POLICY is not set") &&
			   strstr(nh_last_warn, "NCCL's own tuning is used"),
		       "a named tuner without a policy warns once (%d):\n%s", nh_warn_count(),
		       text);
	} else {
		EXPECT(nh_warn_count() == 0, "a net-only user gets no WARN (%d):\n%s",
		       nh_warn_count(), text);
		EXPECT(count_in(text, "INFO NCCLbpf tuner: loaded as the net plugin's library") ==
			   1,
		       "the fallback tuner says so once at INFO:\n%s", text);
	}
	pthread_mutex_unlock(&nh_log_lock);
	return failures ? 1 : 0;
}

static int run_quiet(void)
{
	for (int named = 0; named <= 1; named++) {
		pid_t child = fork();
		if (child == 0)
			_exit(quiet_child(named));
		int st;
		waitpid(child, &st, 0);
		EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "quiet child (tuner named: %d): %x",
		       named, st);
	}
	return failures;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE,
	       SIG_DFL); /* a SIGPIPE from the transport must kill us: it must never come */
	if (argc < 3) {
		fprintf(stderr, "usage: test_net LIB MODE [ARGS]\n");
		return 2;
	}
	lib_path = argv[1];
	const char *mode = argv[2];
	int bad = 0;
	if (!strcmp(mode, "ring") && argc >= 5) {
		struct ring_arg a = {.ver = atoi(argv[4])};
		bad = run_ranks(atoi(argv[3]), ring_rank, &a, 240);
	} else if (!strcmp(mode, "multirecv")) {
		bad = run_ranks(2, multi_rank, NULL, 60);
	} else if (!strcmp(mode, "refuse") && argc >= 5) {
		struct refuse_arg a = {.side = atoi(argv[3]), .policy = argv[4]};
		bad = run_ranks(2, refuse_rank, &a, 60);
	} else if (!strcmp(mode, "killed")) {
		bad = run_killed();
	} else if (!strcmp(mode, "quiet")) {
		bad = run_quiet();
	} else if (!strcmp(mode, "api")) {
		bad = run_api();
	} else if (!strcmp(mode, "inner") && argc >= 4) {
		bad = run_inner(argv[3], argc >= 5 ? argv[4] : NULL);
	} else if (!strcmp(mode, "probe") && argc >= 5) {
		struct probe_arg a = {.policy = argv[3], .dir = argv[4]};
		bad = run_ranks(2, probe_rank, &a, 60);
	} else if (!strcmp(mode, "probe_complete") && argc >= 5) {
		struct probe_arg a = {.policy = argv[3], .dir = argv[4], .complete_only = 1};
		bad = run_ranks(2, probe_rank, &a, 60);
	} else if ((!strcmp(mode, "defer") || !strcmp(mode, "nodrain") || !strcmp(mode, "inline") ||
		    !strcmp(mode, "sample")) &&
		   argc >= 5) {
		struct defer_arg a = {.policy = argv[3],
				      .cli = argv[4],
				      .mode = mode[0] == 'd'   ? 0
					      : mode[0] == 'n' ? 1
					      : mode[0] == 'i' ? 2
							       : 3};
		bad = run_ranks(2, defer_rank, &a, 120);
	} else if (!strcmp(mode, "cycles") && argc >= 4) {
		bad = run_cycles(argv[3]);
	} else if (!strcmp(mode, "pace") && argc >= 5) {
		struct pace_arg a = {.policy = argv[3], .mbps = atof(argv[4])};
		bad = run_ranks(2, pace_rank, &a, 120);
	} else {
		fprintf(stderr, "test_net: unknown mode or missing arguments\n");
		return 2;
	}
	if (bad || failures) {
		printf("FAILED (%d rank(s), %d check(s))\n", bad, failures);
		return 1;
	}
	printf("OK\n");
	return 0;
}
