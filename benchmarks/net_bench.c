/* ncclbpf-net-bench: CPU-only benchmark of the net plugin's TCP transport through its exported
 * ncclNetPlugin_v12 table, two forked processes over loopback, no NCCL.
 *
 * Three configurations, each a pair of processes that stays up for the whole run:
 *   A  our transport, no policy (NCCLBPF_NET_NSOCKS default)
 *   B  the same with a policy attached (default: policies/net_counters.o; --policy)
 *   C  no policy, one socket (NCCLBPF_NET_NSOCKS=1)
 * Per repetition, size and measurement the parent has A, B and C measure back to back (order
 * rotated per repetition; the idle pairs sleep in read()), so the ratios B/A and A/C are
 * paired: each compares measurements taken within a second or so, and the printed ratio is
 * the median of the paired ratios (q1..q3: their quartiles, the noise). Latency: ping-pong,
 * half the round trip (B-A ns: median paired difference, the hooks' cost per message and
 * side). Bandwidth: one direction, a window of 4 messages in flight.
 *
 * Hook path (--inner, default: the test's fake inner plugin when built): the per-message CPU
 * cost of the plugin's wrappers and hooks with no sockets, A vs B (hook_path below); with
 * --policy2 OBJ also B2, that policy, in the same interleaved runs (same-run A).
 *
 *   ncclbpf-net-bench [--lib LIB] [--policy OBJ] [--policy2 OBJ] [--reps N] [--sizes a,b,...]
 *                     [--time S] [--inner FAKE_LIB | --inner ''] [--hook-path-only] */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>

#include "net_harness.h"

#ifndef NET_BENCH_DEFAULT_LIB
#define NET_BENCH_DEFAULT_LIB NULL
#endif
#ifndef NET_BENCH_DEFAULT_POLICY
#define NET_BENCH_DEFAULT_POLICY NULL
#endif
#ifndef NET_BENCH_DEFAULT_INNER
#define NET_BENCH_DEFAULT_INNER NULL
#endif

#define MAX_SIZES 16
#define WINDOW	  4

static size_t sizes[MAX_SIZES] = {8, 4096, 65536, 524288, 4u << 20, 32u << 20};
static int n_sizes = 6;
static double budget_s = 0.25; /* per size and measurement */

struct pair {
	struct nh_lib l;
	void *ctx, *lc;
	struct nh_setup s;
	uint8_t *sbuf, *rbuf;
};

static int pair_setup(struct pair *p, const char *lib, int id, int (*pipes)[2])
{
	if (nh_open(&p->l, lib, 12))
		return -1;
	if (p->l.t->init(&p->ctx, 42, NULL, nh_logger, NULL) != ncclSuccess)
		return -1;
	char h[NCCL_NET_HANDLE_MAXSIZE], peer[NCCL_NET_HANDLE_MAXSIZE];
	if (p->l.t->listen(p->ctx, 0, h, &p->lc) != ncclSuccess)
		return -1;
	if (nh_write_all(pipes[id][1], h, sizeof(h)) ||
	    nh_read_all(pipes[1 - id][0], peer, sizeof(peer)))
		return -1;
	if (nh_connect_accept(&p->l, p->ctx, 0, peer, p->lc, &p->s, 30))
		return -1;
	size_t max = sizes[0];
	for (int i = 0; i < n_sizes; i++)
		max = sizes[i] > max ? sizes[i] : max;
	p->sbuf = malloc(max * WINDOW);
	p->rbuf = malloc(max * WINDOW);
	if (!p->sbuf || !p->rbuf)
		return -1;
	memset(p->sbuf, 1, max * WINDOW);
	return 0;
}

static int xsend(struct pair *p, void *buf, size_t n, void **q)
{
	return nh_isend(&p->l, p->s.send, buf, n, 0, NULL, q) != ncclSuccess;
}

static int xrecv(struct pair *p, void *buf, size_t n, void **q)
{
	void *bufs[1] = {buf};
	size_t caps[1] = {n};
	int tags[1] = {0};
	return nh_irecv(&p->l, p->s.recv, 1, bufs, caps, tags, NULL, q) != ncclSuccess;
}

static int xwait(struct pair *p, void *q)
{
	int sz[1];
	return nh_wait(&p->l, q, sz, 60) != ncclSuccess;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Rank 0 decides how many iterations (time budget) and tells rank 1 in-band first. */
static int ping_pong(struct pair *p, int id, size_t n, double *lat_us)
{
	void *q;
	uint64_t iters = 0;
	if (id == 0) {
		/* Calibrate with a few round trips. */
		uint64_t t0 = nh_now_ns();
		int k = 0;
		for (; k < 5; k++) {
			if (xsend(p, p->sbuf, n, &q) || xwait(p, q) || xrecv(p, p->rbuf, n, &q) ||
			    xwait(p, q))
				return -1;
		}
		double rt = (double)(nh_now_ns() - t0) / 5;
		iters = (uint64_t)(budget_s * 1e9 / (rt > 1 ? rt : 1));
		iters = iters < 10 ? 10 : iters > 100000 ? 100000 : iters;
		if (xsend(p, &iters, sizeof(iters), &q) || xwait(p, q))
			return -1;
		/* Median of the iterations: an iteration during which either process was
		 * preempted (a shared machine) is an outlier, not part of the cost. */
		double *rt_ns = malloc(iters * sizeof(*rt_ns));
		if (!rt_ns)
			return -1;
		t0 = nh_now_ns();
		for (uint64_t i = 0; i < iters; i++) {
			if (xsend(p, p->sbuf, n, &q) || xwait(p, q) || xrecv(p, p->rbuf, n, &q) ||
			    xwait(p, q)) {
				free(rt_ns);
				return -1;
			}
			uint64_t t1 = nh_now_ns();
			rt_ns[i] = (double)(t1 - t0);
			t0 = t1;
		}
		*lat_us = median(rt_ns, (int)iters) / 2 / 1e3;
		free(rt_ns);
	} else {
		for (int k = 0; k < 5; k++)
			if (xrecv(p, p->rbuf, n, &q) || xwait(p, q) || xsend(p, p->sbuf, n, &q) ||
			    xwait(p, q))
				return -1;
		if (xrecv(p, &iters, sizeof(iters), &q) || xwait(p, q))
			return -1;
		for (uint64_t i = 0; i < iters; i++)
			if (xrecv(p, p->rbuf, n, &q) || xwait(p, q) || xsend(p, p->sbuf, n, &q) ||
			    xwait(p, q))
				return -1;
	}
	return 0;
}

/* Rank 0 streams count messages with WINDOW in flight; rank 1 acknowledges the last one. */
static int stream(struct pair *p, int id, size_t n, double *gbs)
{
	uint64_t count = 0;
	void *q;
	if (id == 0) {
		double est_gbs = 1.0; /* refined by a short first pass */
		uint64_t probe = n >= (8u << 20) ? 4 : 32;
		for (int pass = 0; pass < 2; pass++) {
			count = pass ? (uint64_t)(budget_s * est_gbs * 1e9 / (double)n) : probe;
			count = count < 8 ? 8 : count > 1000000 ? 1000000 : count;
			if (xsend(p, &count, sizeof(count), &q) || xwait(p, q))
				return -1;
			/* Slices of `slice` messages (>= 16 slices per pass); the rate is the
			 * median slice's, so a slice with a preempted process is an outlier. */
			uint64_t slice = count / 16 > 64 ? 64 : count / 16 ? count / 16 : 1;
			uint64_t nslices = count / slice, k = 0;
			double *sl_ns = malloc(nslices * sizeof(*sl_ns));
			if (!sl_ns)
				return -1;
			void *qs[WINDOW] = {0};
			uint64_t t0 = nh_now_ns(), ts = t0;
			int err = 0;
			for (uint64_t i = 0; i < count && !err; i++) {
				int s = (int)(i % WINDOW);
				if (qs[s] && xwait(p, qs[s]))
					err = 1;
				else if (xsend(p, p->sbuf + (size_t)s * n, n, &qs[s]))
					err = 1;
				if (i >= WINDOW && (i - WINDOW + 1) % slice == 0 && k < nslices) {
					/* message i - WINDOW completed: one more slice done */
					uint64_t t1 = nh_now_ns();
					sl_ns[k++] = (double)(t1 - ts);
					ts = t1;
				}
			}
			for (int s = 0; s < WINDOW && !err; s++)
				if (qs[s] && xwait(p, qs[s]))
					err = 1;
			uint8_t ack;
			if (err || xrecv(p, &ack, 1, &q) || xwait(p, q)) {
				free(sl_ns);
				return -1;
			}
			double secs = (double)(nh_now_ns() - t0) / 1e9;
			est_gbs = (double)n * (double)count / secs / 1e9;
			if (pass && k >= 4)
				est_gbs = (double)n * (double)slice / median(sl_ns, (int)k);
			free(sl_ns);
		}
		*gbs = est_gbs;
	} else {
		for (int pass = 0; pass < 2; pass++) {
			if (xrecv(p, &count, sizeof(count), &q) || xwait(p, q))
				return -1;
			void *qs[WINDOW] = {0};
			for (uint64_t i = 0; i < count; i++) {
				int s = (int)(i % WINDOW);
				if (qs[s] && xwait(p, qs[s]))
					return -1;
				if (xrecv(p, p->rbuf + (size_t)s * n, n, &qs[s]))
					return -1;
			}
			for (int s = 0; s < WINDOW; s++)
				if (qs[s] && xwait(p, qs[s]))
					return -1;
			uint8_t ack = 1;
			if (xsend(p, &ack, 1, &q) || xwait(p, q))
				return -1;
		}
	}
	return 0;
}

/* One configuration: a pair of processes (env applied before the library loads) that stays up
 * for the whole run and measures what the parent asks, one measurement at a time; while another
 * configuration measures, both processes block in read() and use no CPU. */
#define NCONF 3
enum { CMD_LAT = 1, CMD_BW, CMD_QUIT };
struct cmd {
	int what;
	int size_idx;
};

struct config {
	pid_t pid[2];
	int cmd_fd[2]; /* parent -> rank */
	int res_fd;    /* rank 0 -> parent */
};

static void serve(const char *lib, const char *policy, const char *nsocks, int id, int (*pipes)[2],
		  int cmd_fd, int res_fd)
{
	alarm(3600);
	if (policy)
		setenv("NCCLBPF_POLICY", policy, 1);
	else
		unsetenv("NCCLBPF_POLICY");
	setenv("NCCLBPF_WATCH", "0", 1);
	if (nsocks)
		setenv("NCCLBPF_NET_NSOCKS", nsocks, 1);
	struct pair p = {0};
	if (pair_setup(&p, lib, id, pipes))
		_exit(1);
	for (;;) {
		struct cmd c;
		if (nh_read_all(cmd_fd, &c, sizeof(c)) || c.what == CMD_QUIT)
			break;
		double v = 0;
		size_t n = sizes[c.size_idx];
		if (c.what == CMD_LAT ? ping_pong(&p, id, n, &v) : stream(&p, id, n, &v))
			_exit(1);
		if (id == 0 && nh_write_all(res_fd, &v, sizeof(v)))
			_exit(1);
	}
	p.l.t->closeSend(p.s.send);
	p.l.t->closeRecv(p.s.recv);
	p.l.t->closeListen(p.lc);
	p.l.t->finalize(p.ctx);
	_exit(0);
}

static int config_start(struct config *cf, const char *lib, const char *policy, const char *nsocks)
{
	int pipes[2][2], cmd[2][2], res[2];
	if (pipe(pipes[0]) || pipe(pipes[1]) || pipe(cmd[0]) || pipe(cmd[1]) || pipe(res))
		return -1;
	fflush(NULL);
	for (int id = 0; id < 2; id++) {
		cf->pid[id] = fork();
		if (cf->pid[id] < 0)
			return -1;
		if (cf->pid[id] == 0) {
			close(cmd[id][1]);
			close(res[0]);
			serve(lib, policy, nsocks, id, pipes, cmd[id][0], res[1]);
		}
	}
	for (int i = 0; i < 2; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
		close(cmd[i][0]);
		cf->cmd_fd[i] = cmd[i][1];
	}
	close(res[1]);
	cf->res_fd = res[0];
	return 0;
}

static int config_measure(struct config *cf, int what, int size_idx, double *v)
{
	struct cmd c = {.what = what, .size_idx = size_idx};
	for (int id = 0; id < 2; id++)
		if (nh_write_all(cf->cmd_fd[id], &c, sizeof(c)))
			return -1;
	return nh_read_all(cf->res_fd, v, sizeof(*v));
}

static int config_stop(struct config *cf)
{
	struct cmd c = {.what = CMD_QUIT};
	int ok = 1;
	for (int id = 0; id < 2; id++) {
		nh_write_all(cf->cmd_fd[id], &c, sizeof(c));
		close(cf->cmd_fd[id]);
	}
	for (int id = 0; id < 2; id++) {
		int st;
		waitpid(cf->pid[id], &st, 0);
		ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	close(cf->res_fd);
	return ok ? 0 : -1;
}

static void fmt_size(size_t n, char *buf, size_t len)
{
	if (n >= (1u << 20) && n % (1u << 20) == 0)
		snprintf(buf, len, "%zu MiB", n >> 20);
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, len, "%zu KiB", n >> 10);
	else
		snprintf(buf, len, "%zu B", n);
}

/* --- hook path: the plugin's per-message work without sockets ------------------------------
 * With NCCLBPF_NET_INNER set to the test's fake inner plugin (tests/net/fake_inner.c: moves
 * bytes with memcpy in one process), a message is irecv + isend + test until both are done,
 * through the exported table as NCCL calls it: our wrappers, hooks and clock reads plus the
 * fake's own small cost, with no I/O and no waiting. One process per configuration and
 * repetition; the figure is the fastest of several slices (CPU-bound, so noise only adds). */
#define HP_MSG	 64
#define HP_SLICE 20000

static double hook_path_child(const char *lib, const char *inner, const char *policy)
{
	setenv("NCCLBPF_NET_INNER", inner, 1);
	if (policy)
		setenv("NCCLBPF_POLICY", policy, 1);
	else
		unsetenv("NCCLBPF_POLICY");
	setenv("NCCLBPF_WATCH", "0", 1);
	struct nh_lib l;
	void *ctx = NULL, *lc = NULL;
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	struct nh_setup st;
	if (nh_open(&l, lib, 12) || l.t->init(&ctx, 42, NULL, nh_logger, NULL) != ncclSuccess ||
	    l.t->listen(ctx, 0, handle, &lc) != ncclSuccess ||
	    nh_connect_accept(&l, ctx, 0, handle, lc, &st, 10))
		return -1;
	static char sbuf[HP_MSG], rbuf[HP_MSG];
	double best = 1e30;
	for (int k = 0; k < 15; k++) {
		uint64_t t0 = nh_now_ns();
		for (int i = 0; i < HP_SLICE; i++) {
			void *rq, *sq, *bufs[1] = {rbuf};
			size_t caps[1] = {HP_MSG};
			int tags[1] = {0}, sz[1];
			if (nh_irecv(&l, st.recv, 1, bufs, caps, tags, NULL, &rq) ||
			    nh_isend(&l, st.send, sbuf, HP_MSG, 0, NULL, &sq) ||
			    nh_wait(&l, sq, NULL, 10) || nh_wait(&l, rq, sz, 10))
				return -1;
		}
		double ns = (double)(nh_now_ns() - t0) / HP_SLICE;
		best = ns < best ? ns : best;
	}
	l.t->closeSend(st.send);
	l.t->closeRecv(st.recv);
	l.t->closeListen(lc);
	l.t->finalize(ctx);
	return best;
}

static int hook_path(const char *lib, const char *inner, const char *policy, double *ns)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		alarm(600);
		double v = hook_path_child(lib, inner, policy);
		_exit(nh_write_all(fd[1], &v, sizeof(v)) || v < 0 ? 1 : 0);
	}
	close(fd[1]);
	int bad = nh_read_all(fd[0], ns, sizeof(*ns));
	close(fd[0]);
	int stt;
	waitpid(pid, &stt, 0);
	return bad || !WIFEXITED(stt) || WEXITSTATUS(stt) ? -1 : 0;
}

static int socket_runs(const char *lib, const char *policy, int reps);
static int hook_path_runs(const char *lib, const char *inner, const char *policy,
			  const char *policy2, int reps);

int main(int argc, char **argv)
{
	const char *lib = NET_BENCH_DEFAULT_LIB, *policy = NET_BENCH_DEFAULT_POLICY;
	const char *inner = NET_BENCH_DEFAULT_INNER, *policy2 = NULL;
	int reps = 3, hook_only = 0;
	static const struct option lo[] = {{"lib", 1, 0, 'l'},	   {"policy", 1, 0, 'p'},
					   {"policy2", 1, 0, 'P'}, {"reps", 1, 0, 'r'},
					   {"sizes", 1, 0, 's'},   {"time", 1, 0, 't'},
					   {"inner", 1, 0, 'i'},   {"hook-path-only", 0, 0, 'H'},
					   {"help", 0, 0, 'h'},	   {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "l:p:P:r:s:t:i:Hh", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
			lib = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'P':
			policy2 = optarg;
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 't':
			budget_s = atof(optarg);
			break;
		case 'i':
			inner = *optarg ? optarg : NULL;
			break;
		case 'H':
			hook_only = 1;
			break;
		case 's': {
			n_sizes = 0;
			char *save, *s = strdup(optarg);
			for (char *t = strtok_r(s, ",", &save); t && n_sizes < MAX_SIZES;
			     t = strtok_r(NULL, ",", &save)) {
				char *end;
				double v = strtod(t, &end);
				if (*end == 'K' || *end == 'k')
					v *= 1024;
				else if (*end == 'M' || *end == 'm')
					v *= 1024 * 1024;
				sizes[n_sizes++] = (size_t)v;
			}
			free(s);
			break;
		}
		default:
			fprintf(stderr, "usage: ncclbpf-net-bench [--lib LIB] [--policy OBJ] "
					"[--policy2 OBJ (hook path)] [--reps N] [--sizes 8,4K,1M] "
					"[--time S] [--inner FAKE_LIB|''] [--hook-path-only]\n");
			return 2;
		}
	}
	if (!lib || !policy || reps < 1 || reps > 99 || !n_sizes) {
		fprintf(stderr, "ncclbpf-net-bench: need --lib and --policy (or the built-in "
				"defaults), 1..99 reps\n");
		return 2;
	}
	signal(SIGPIPE, SIG_DFL);
	if (hook_only && !inner) {
		fprintf(stderr, "ncclbpf-net-bench: --hook-path-only needs --inner\n");
		return 2;
	}
	if (!hook_only && socket_runs(lib, policy, reps))
		return 1;
	if (inner && hook_path_runs(lib, inner, policy, policy2, reps))
		return 1;
	return 0;
}

/* The transport over loopback sockets: A, B, C configurations, latency and bandwidth. */
static int socket_runs(const char *lib, const char *policy, int reps)
{
	const char *ifname = getenv("NCCL_SOCKET_IFNAME");
	printf("# net transport benchmark: 2 processes, loopback%s%s, %d rep(s) interleaved, "
	       "median; %.2f s per size and measurement\n",
	       ifname ? " via " : "", ifname ? ifname : "", reps, budget_s);
	printf("# A: no policy; B: policy %s; C: no policy, NCCLBPF_NET_NSOCKS=1\n", policy);
	/* All three pairs stay up; per size, each measurement (latency, bandwidth) is taken for
	 * A, B, C back to back (order rotated per repetition), so a ratio compares measurements
	 * made within about a second of each other, and the median is over these paired ratios. */
	static struct config cf[NCONF];
	const char *pol[NCONF] = {NULL, policy, NULL}, *nso[NCONF] = {NULL, NULL, "1"};
	for (int x = 0; x < NCONF; x++)
		if (config_start(&cf[x], lib, pol[x], nso[x])) {
			fprintf(stderr, "ncclbpf-net-bench: cannot start configuration %c\n",
				'A' + x);
			return -1;
		}
	static double v[NCONF][2][MAX_SIZES][99]; /* [config][lat, bw][size][rep] */
	int failed = 0;
	for (int k = 0; k < reps && !failed; k++)
		for (int i = 0; i < n_sizes && !failed; i++)
			for (int w = 0; w < 2 && !failed; w++)
				for (int j = 0; j < NCONF && !failed; j++) {
					int x = (j + k) % NCONF;
					failed = config_measure(&cf[x], w ? CMD_BW : CMD_LAT, i,
								&v[x][w][i][k]) != 0;
				}
	for (int x = 0; x < NCONF; x++)
		failed |= config_stop(&cf[x]) != 0;
	if (failed) {
		fprintf(stderr, "ncclbpf-net-bench: a run failed\n");
		return -1;
	}
	printf("%10s %9s %9s %8s %8s %9s %9s %8s %15s %9s %7s\n", "size", "lat A us", "lat B us",
	       "B-A ns", "B/A", "bw A GB/s", "bw B GB/s", "B/A", "B/A q1..q3", "bw C GB/s", "A/C");
	double worst = 0;
	for (int i = 0; i < n_sizes; i++) {
		double la[99], lb[99], dl[99], rl[99], ba[99], bb[99], rb[99], bc[99], rc[99];
		for (int k = 0; k < reps; k++) {
			la[k] = v[0][0][i][k];
			lb[k] = v[1][0][i][k];
			dl[k] = (lb[k] - la[k]) * 1e3;
			rl[k] = lb[k] / la[k];
			ba[k] = v[0][1][i][k];
			bb[k] = v[1][1][i][k];
			bc[k] = v[2][1][i][k];
			rb[k] = bb[k] / ba[k];
			rc[k] = ba[k] / bc[k];
		}
		double mrb = median(rb, reps); /* sorts rb: quartiles below */
		double q1 = rb[(reps - 1) / 4], q3 = rb[reps - 1 - (reps - 1) / 4];
		char sz[32], q[32];
		fmt_size(sizes[i], sz, sizeof(sz));
		snprintf(q, sizeof(q), "%.3f..%.3f", q1, q3);
		printf("%10s %9.2f %9.2f %8.0f %8.3f %9.3f %9.3f %8.3f %15s %9.3f %7.2f\n", sz,
		       median(la, reps), median(lb, reps), median(dl, reps), median(rl, reps),
		       median(ba, reps), median(bb, reps), mrb, q, median(bc, reps),
		       median(rc, reps));
		double cost = 1 / mrb - 1;
		worst = cost > worst ? cost : worst;
	}
	printf("# hook cost (bandwidth, worst size): %.2f %%\n", worst * 100);
	return 0;
}

/* A and B (and B2) alternate, one process each, order rotated per repetition. */
static int hook_path_runs(const char *lib, const char *inner, const char *policy,
			  const char *policy2, int reps)
{
	static double h[3][99], hd[99], hd2[99];
	const char *pol[3] = {NULL, policy, policy2};
	int n = policy2 ? 3 : 2;
	for (int k = 0; k < reps; k++)
		for (int j = 0; j < n; j++) {
			int x = (j + k) % n;
			if (hook_path(lib, inner, pol[x], &h[x][k])) {
				fprintf(stderr, "ncclbpf-net-bench: hook path run failed\n");
				return -1;
			}
		}
	/* the paired differences first: median() sorts its array */
	for (int k = 0; k < reps; k++) {
		hd[k] = h[1][k] - h[0][k];
		hd2[k] = h[2][k] - h[0][k];
	}
	double mhd = median(hd, reps);
	printf("# hook path (no sockets, fake inner plugin, %d B messages, both sides): A %.1f "
	       "ns, B %.1f ns per message; B-A %.1f ns (median of %d paired runs)\n",
	       HP_MSG, median(h[0], reps), median(h[1], reps), mhd, reps);
	if (policy2) {
		mhd = median(hd2, reps);
		printf("# hook path, B: %s, B2: %s: B2 %.1f ns per message; B2-A %.1f ns (median "
		       "of %d paired runs, same A)\n",
		       policy, policy2, median(h[2], reps), mhd, reps);
	}
	return 0;
}
