/* Does live inspection slow the hot path? The shipped plugin, loaded as NCCL loads it, makes
 * tuner calls (getCollInfo through ncclTunerPlugin_v5 with a JIT-compiled policy) in timed
 * blocks of 1,000, alternately with no client ("quiet") and while another process hammers the
 * plugin's inspection server with `stat` requests in a loop over one connection ("hammered").
 * The phases are interleaved over several rounds so that background load hits both alike;
 * the figures are the median and the 99th percentile of the block means, and the ratio
 * hammered / quiet of the medians. A third phase is the control: the client spins on its CPU
 * without sending requests ("spinning"). On machines whose CPUs share a core (SMT, or vCPUs
 * of one physical core) a busy neighbour alone slows the caller; hammered / spinning is then
 * the part due to inspection itself.
 *
 * With two or more CPUs the calling thread gets a CPU of its own and the client and the server
 * thread share another, so that what is measured is the interference through memory (the
 * counters the server reads), not two processes competing for one CPU.
 *
 * usage: inspect_bench PLUGIN POLICY [CALLS_PER_PHASE] [ROUNDS] */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

enum { BLOCK = 1000, N_TABLES = 64 };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

struct shared {
	volatile int run;  /* 0: pause, 1: hammer the server, 2: spin without talking to it */
	volatile int quit; /* the child exits */
	volatile long requests, spins;
	volatile int ready, failed;
};

/* The client: one connection, `stat` after `stat` while run is set. */
static void hammer(struct shared *sh, const char *sock, int cpu)
{
	if (cpu >= 0)
		pin(cpu);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, sock, strnlen(sock, sizeof(sa.sun_path) - 1));
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		sh->failed = 1;
		_exit(1);
	}
	static char buf[1 << 16];
	/* INSPECT_BENCH_REQUEST=info|env|...: another request, to tell costs apart. */
	char req[64];
	const char *e = getenv("INSPECT_BENCH_REQUEST");
	snprintf(req, sizeof(req), "%s\n", e && *e ? e : "stat");
	size_t have = 0;
	/* Reads until a line "ok\n" (or the greeting's line) ends what is buffered. */
	int greeted = 0;
	sh->ready = 1;
	while (!sh->quit) {
		if (greeted && sh->run == 2) {
			sh->spins++;
			continue; /* the control: the same CPU busy, the server idle */
		}
		if (greeted && !sh->run) {
			usleep(1000);
			continue;
		}
		if (greeted && write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
			sh->failed = 1;
			break;
		}
		have = 0;
		for (;;) {
			ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
			if (n <= 0) {
				sh->failed = 1;
				_exit(1);
			}
			have += (size_t)n;
			buf[have] = 0;
			if (!greeted && strchr(buf, '\n')) {
				greeted = 1;
				break;
			}
			if (have >= 3 && !strcmp(buf + have - 3, "ok\n") &&
			    (have == 3 || buf[have - 4] == '\n'))
				break;
			if (have == sizeof(buf) - 1)
				have = 0; /* keep the tail small: only the end matters */
		}
		if (greeted && sh->run == 1)
			sh->requests++;
	}
	close(fd);
	_exit(0);
}

static double phase(const struct harness_plugin *p, void *ctx, float (*tables)[21],
		    const size_t *sizes, long calls, double *blocks, size_t *nb)
{
	float t[21];
	uint64_t start = now_ns();
	for (long b = 0; b < calls / BLOCK; b++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < BLOCK; i++) {
			int k = (int)((b * BLOCK + i) % N_TABLES);
			memcpy(t, tables[k], sizeof(t));
			int ch = 0;
			p->v5->getCollInfo(ctx, 4, sizes[k], 1, (float **)t, 7, 3, 0, &ch);
		}
		blocks[(*nb)++] = (double)(now_ns() - t0) / BLOCK;
	}
	return (double)(now_ns() - start) / 1e9;
}

static void summary(const char *name, double *v, size_t n, double *median)
{
	qsort(v, n, sizeof(double), cmp_double);
	*median = v[n / 2];
	printf("  %-9s %8.1f ns/call median, %8.1f p99 of %zu block means of %d calls\n", name,
	       v[n / 2], v[(size_t)((double)n * 0.99)], n, BLOCK);
}

/* The control-plane directory of this run (NCCLBPF_CP_DIR): a fresh name from mkdtemp, removed
 * with everything the plugin created in it (comms/ID/members, reloads) however the run ends.
 * A fixed name with the pid, removed with rmdir, stayed behind (rmdir cannot remove comms/),
 * and a later run that got the same pid refused to start ("File exists"). */
static char cp_dir[] = "/tmp/ncclbpf-inspect-bench-XXXXXX";
static pid_t cp_owner;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

static void remove_cp_dir(void)
{
	if (getpid() != cp_owner) /* the client process leaves it to its parent */
		return;
	if (nftw(cp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
		perror(cp_dir);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s PLUGIN POLICY [CALLS_PER_PHASE] [ROUNDS]\n", argv[0]);
		return 2;
	}
	long calls = argc > 3 ? atol(argv[3]) : 1000000;
	int rounds = argc > 4 ? atoi(argv[4]) : 5;
	if (calls < BLOCK || rounds < 1)
		return 2;
	if (!mkdtemp(cp_dir)) {
		perror(cp_dir);
		return 1;
	}
	cp_owner = getpid();
	atexit(remove_cp_dir);
	const char *dir = cp_dir;
	setenv("NCCLBPF_CP_DIR", dir, 1);
	setenv("NCCLBPF_POLICY", argv[2], 1);
	setenv("NCCLBPF_WATCH", "0", 1);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int pinned = ncpu >= 2;
	if (pinned)
		pin(1); /* the server thread, created at the first init, inherits this CPU */

	struct harness_plugin p;
	if (harness_open(&p, argv[1]) != 0 || !p.v5)
		return 1;
	void *ctx = NULL;
	p.v5->init(&ctx, 0x5eed, 8, 1, harness_logger, NULL, NULL);
	if (!ctx || harness_warns) {
		fprintf(stderr, "init failed or warned: %s\n", harness_last_warn);
		return 1;
	}
	if (pinned)
		pin(0);

	static float tables[N_TABLES][21];
	size_t sizes[N_TABLES];
	for (int k = 0; k < N_TABLES; k++) {
		sizes[k] = (size_t)1 << (k % 28); /* 1 B .. 128 MiB */
		harness_table(tables[k], 7, 3, 4, sizes[k]);
	}

	char host[64] = "", sock[300];
	gethostname(host, sizeof(host) - 1);
	snprintf(sock, sizeof(sock), "%s/procs/%s.%d.sock", dir, host, (int)getpid());
	struct shared *sh =
	    mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset((void *)sh, 0, sizeof(*sh));
	fflush(stdout);
	pid_t child = fork();
	if (child == 0)
		hammer(sh, sock, pinned ? 1 : -1);
	while (!sh->ready && !sh->failed)
		usleep(1000);

	size_t max_blocks = (size_t)(calls / BLOCK) * (size_t)rounds;
	double *quiet = malloc(max_blocks * sizeof(double));
	double *loud = malloc(max_blocks * sizeof(double));
	double *busy = malloc(max_blocks * sizeof(double));
	size_t nq = 0, nl = 0, nb = 0;
	double t_loud = 0;
	phase(&p, ctx, tables, sizes, calls / 4 < BLOCK ? BLOCK : calls / 4, quiet, &nq); /* warm */
	nq = 0;
	for (int r = 0; r < rounds && !sh->failed; r++) {
		sh->run = 0;
		usleep(2000); /* the last request finishes */
		phase(&p, ctx, tables, sizes, calls, quiet, &nq);
		long before = sh->requests;
		sh->run = 1;
		while (sh->requests == before && !sh->failed)
			sched_yield(); /* the client is at work before timing starts */
		t_loud += phase(&p, ctx, tables, sizes, calls, loud, &nl);
		sh->run = 0;
		usleep(2000);
		before = sh->spins;
		sh->run = 2;
		while (sh->spins == before && !sh->failed)
			sched_yield();
		phase(&p, ctx, tables, sizes, calls, busy, &nb);
	}
	sh->run = 0;
	long requests = sh->requests;
	sh->quit = 1;
	int st = 0;
	waitpid(child, &st, 0);
	if (sh->failed || !nq || !nl) {
		fprintf(stderr, "the inspection client failed (no server at %s?)\n", sock);
		return 1;
	}
	const char *iv = getenv("NCCLBPF_INSPECT_INTERVAL_US");
	printf("tuner calls through %s with %s (jit), %ld calls x %d rounds per phase%s; server "
	       "pace %s us between answers%s\n",
	       argv[1], argv[2], calls, rounds,
	       pinned ? "; caller on CPU 0, client and server on CPU 1" : " (one CPU)",
	       iv && *iv ? iv : "1000",
	       iv && *iv ? " (NCCLBPF_INSPECT_INTERVAL_US)" : " (default)");
	double mq, ml, mb;
	summary("quiet", quiet, nq, &mq);
	summary("hammered", loud, nl, &ml);
	summary("spinning", busy, nb, &mb);
	printf("  client: %ld stat requests answered while hammered (%.0f per second)\n", requests,
	       t_loud > 0 ? (double)requests / t_loud : 0.0);
	printf("  ratio hammered/quiet: %.3f\n", ml / mq);
	printf(
	    "  ratio hammered/spinning: %.3f (control: the client's CPU busy without requests)\n",
	    ml / mb);
	p.v5->finalize(ctx);
	harness_close(&p);
	free(quiet);
	free(loud);
	free(busy);
	remove_cp_dir();
	struct stat left;
	if (lstat(dir, &left) == 0) {
		fprintf(stderr, "%s left behind\n", dir);
		return 1;
	}
	printf("  control-plane directory removed\n");
	return requests > 0 ? 0 : 1;
}
