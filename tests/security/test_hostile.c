/* The shipped plugin, driven as NCCL drives it (tests/plugin/harness.h), against files and
 * settings that must not steer, hang or silently change it (docs/security.md):
 * - a FIFO or a directory as the policy, the trace, the decision log, the inner net plugin, or
 *   the file that replaces the policy under the watcher: init and destroy return, with a WARN
 *   that says what the file is;
 * - a trace name that is a symbolic link in /tmp: refused, its target untouched;
 * - a control-plane directory others can write: refused with one WARN, nothing created in it;
 * - garbage values of settings: one WARN each, naming the variable and what it accepts;
 * - NCCLBPF_INSPECT_INTERVAL_US=600000000 while a client waits on the pace: destroy returns;
 * - a trace and a decision log that can no longer be written (a full disk): one WARN each;
 * - a read of the replacement policy that never returns (a stalled filesystem, played by this
 *   program's own read(), which the plugin calls): destroy returns after the watcher's bound,
 *   with a WARN.
 * Every case runs in a child process (a fresh plugin) under a 30 s alarm, so a hang is a failure
 * and not a hung test.
 *
 * usage: test_hostile PLUGIN POLICY.o */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "harness.h"
#include "nccl_env.h"
#include "ncclbpf/proc_registry.h"
#include "nccl_net.h"

static const char *plugin_path, *policy;
static char T[64]; /* this run's private directory */
static struct harness_plugin P;

/* --- what the plugin says ------------------------------------------------------------------ */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char warn_log[65536];
static int n_warns;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		   const char *fmt, ...)
{
	(void)flags, (void)file, (void)line;
	if (level != NCCL_LOG_WARN)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	size_t l = strlen(warn_log);
	snprintf(warn_log + l, sizeof(warn_log) - l, "%s\n", buf);
	n_warns++;
	pthread_mutex_unlock(&log_lock);
	fprintf(stderr, "[plugin WARN] %s\n", buf);
}

/* Number of WARN lines containing every one of the strings (NULL-terminated). */
static int warned(const char *a, const char *b)
{
	pthread_mutex_lock(&log_lock);
	int n = 0;
	for (char *line = warn_log, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = 0;
		n += strstr(line, a) && (!b || strstr(line, b));
		*nl = '\n';
	}
	pthread_mutex_unlock(&log_lock);
	return n;
}

static int wait_warned(const char *a, const char *b, int seconds)
{
	for (int i = 0; i < seconds * 100 && !warned(a, b); i++)
		usleep(10000);
	return warned(a, b);
}

static const char *at(const char *name)
{
	static char buf[8][200];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", T, name);
	return buf[k];
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void copy_file(const char *from, const char *to)
{
	unlink(to); /* never into what an earlier case left there (a FIFO) */
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot copy %s\n", from);
}

/* --- a stalled filesystem: the plugin's read() of one file blocks until released ------------ */
static dev_t stall_dev;
static ino_t stall_ino;
static int stall_on, stall_hit, stall_release;

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);
	if (!real)
		real = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	struct stat st;
	if (__atomic_load_n(&stall_on, __ATOMIC_ACQUIRE) && fstat(fd, &st) == 0 &&
	    st.st_dev == stall_dev && st.st_ino == stall_ino) {
		__atomic_store_n(&stall_hit, 1, __ATOMIC_RELEASE);
		for (int i = 0; i < 6000 && !__atomic_load_n(&stall_release, __ATOMIC_ACQUIRE); i++)
			usleep(10000);
	}
	return real(fd, buf, n);
}

/* --- one communicator, as NCCL makes it ------------------------------------------------------ */
static void *comm_init(void)
{
	void *ctx = NULL;
	CHECK(P.v5->init(&ctx, 0xabc, 8, 1, logger, NULL, NULL) == ncclSuccess);
	return ctx;
}

static void calls(void *ctx, int k)
{
	float t[21];
	for (int i = 0; i < k; i++) {
		harness_table(t, 7, 3, 4, 1 << 20);
		int ch = 0;
		P.v5->getCollInfo(ctx, 4, 1 << 20, 1, (float **)t, 7, 3, 0, &ch);
	}
}

/* --- the cases ---------------------------------------------------------------------------- */
static void policy_fifo(void)
{
	mkfifo(at("policy.fifo"), 0600);
	setenv("NCCLBPF_POLICY", at("policy.fifo"), 1);
	/* The env plugin reads the launch bundle first, as NCCL does with NCCL_ENV_PLUGIN. */
	const ncclEnv_v1_t *env = dlsym(P.handle, "ncclEnvPlugin_v1");
	CHECK(env && env->init(2, 28, 9, "") == ncclSuccess);
	void *ctx = comm_init();
	calls(ctx, 3);
	CHECKF(warned("policy.fifo is a FIFO, not a regular file", "not loaded"), "%s", warn_log);
	P.v5->finalize(ctx);
}

static void policy_directory(void)
{
	mkdir(at("policy.d"), 0700);
	setenv("NCCLBPF_POLICY", at("policy.d"), 1);
	void *ctx = comm_init();
	CHECKF(warned("policy.d is a directory, not a regular file", "not loaded"), "%s", warn_log);
	CHECK(!warned("Input/output error", NULL));
	P.v5->finalize(ctx);
}

static void trace_fifo(void)
{
	mkfifo(at("trace.fifo"), 0600);
	setenv("NCCLBPF_TRACE", at("trace.fifo"), 1);
	void *ctx = comm_init();
	calls(ctx, 3);
	CHECKF(warned("NCCLBPF_TRACE", "trace.fifo is a FIFO"), "%s", warn_log);
	P.v5->finalize(ctx);
}

/* A predictable name in /tmp that someone made a link to our file: not written through. */
static void trace_link(void)
{
	int fd = open(at("victim"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, "keep\n", 5) == 5);
	close(fd);
	char link[100];
	snprintf(link, sizeof(link), "/tmp/ncclbpf-hostile-%d.trace", (int)getpid());
	unlink(link);
	CHECK(symlink(at("victim"), link) == 0);
	setenv("NCCLBPF_TRACE", link, 1);
	void *ctx = comm_init();
	calls(ctx, 3);
	P.v5->finalize(ctx);
	struct stat st;
	CHECKF(stat(at("victim"), &st) == 0 && st.st_size == 5, "the link's target was written");
	CHECKF(warned("NCCLBPF_TRACE", "symbolic link"), "%s", warn_log);
	unlink(link);
}

static void cp_log_fifo(void)
{
	mkfifo(at("log.fifo"), 0600);
	setenv("NCCLBPF_CP_DIR", at("cp"), 1);
	setenv("NCCLBPF_CP_LOG", at("log.fifo"), 1);
	void *ctx = comm_init();
	calls(ctx, 3);
	CHECKF(warned("NCCLBPF_CP_LOG", "log.fifo is a FIFO"), "%s", warn_log);
	P.v5->finalize(ctx);
}

static int empty_dir(const char *path)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", path);
	return system(cmd) == 0;
}

static void cp_dir_open(void)
{
	mkdir(at("open"), 0777);
	chmod(at("open"), 0777);
	mkdir(at("open/below"), 0700);
	setenv("NCCLBPF_CP_DIR", at("open/below"), 1);
	setenv("NCCLBPF_POLICY", policy, 1);
	void *ctx = comm_init();
	calls(ctx, 3);
	CHECKF(warned("NCCLBPF_CP_DIR refused", "open is writable by its group and others") == 1,
	       "%s", warn_log);
	CHECKF(n_warns == 1, "%d WARNs (want the one): %s", n_warns, warn_log);
	CHECKF(empty_dir(at("open/below")), "the plugin created files in a refused directory");
	P.v5->finalize(ctx);
}

static void garbage_settings(void)
{
	static const char *const bad[][2] = {
	    {"NCCLBPF_ENGINE", "garbage"},    {"NCCLBPF_WATCH", "yes"},
	    {"NCCLBPF_CP_REJECT_HASH", "zz"}, {"NCCLBPF_DEBUG", "on"},
	    {"NCCLBPF_NET_NSOCKS", "0"},      {"NCCLBPF_NET_TSC", "maybe"},
	    {"NCCLBPF_CP_POLL_MS", "fast"},   {"NCCLBPF_INSPECT", "no"},
	    {"NCCLBPF_NET_TIME_EVERY", "0"},  {"NCCLBPF_CP_WAIT_MS", "-5"},
	    {"NCCLBPF_NET_MAXRECVS", "99"},   {"NCCL_SOCKET_FAMILY", "AF_UNIX"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		setenv(bad[i][0], bad[i][1], 1);
	setenv("NCCLBPF_POLICY", policy, 1);
	void *ctx = comm_init();
	calls(ctx, 3);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[100];
		snprintf(what, sizeof(what), "%s=%s ignored (accepted: ", bad[i][0], bad[i][1]);
		CHECKF(warned(what, NULL) == 1, "%s: %d WARNs", what, warned(what, NULL));
	}
	/* the defaults applied: the policy is active and the tuner decides */
	CHECKF(!warned("not loaded", NULL), "%s", warn_log);
	P.v5->finalize(ctx);
}

/* A client asks three times at once; the server paces them. */
static void inspect_interval(void)
{
	setenv("NCCLBPF_INSPECT_INTERVAL_US", "600000000", 1);
	setenv("NCCLBPF_CP_DIR", at("cpi"), 1);
	void *ctx = comm_init();
	char host[64]; /* a socket path holds 108 bytes */
	ncclbpf_rt_host_name(host, sizeof(host));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/procs/%s.%d.sock", at("cpi"), host,
		 (int)getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECKF(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "%s: %s", sa.sun_path,
	       strerror(errno));
	char buf[4096];
	CHECK(write(fd, "info\ninfo\ninfo\n", 15) == 15);
	usleep(200000); /* the first is answered, the second waits on the pace */
	CHECK(read(fd, buf, sizeof(buf)) > 0);
	CHECKF(warned("NCCLBPF_INSPECT_INTERVAL_US=600000000 ignored", "0..1000000"), "%s",
	       warn_log);
	double t0 = now_s();
	P.v5->finalize(ctx);
	CHECKF(now_s() - t0 < 10, "destroy took %.1f s", now_s() - t0);
	close(fd);
}

/* Replacing the policy by a FIFO: the watcher refuses it and destroy returns. */
static void replacement_fifo(void)
{
	copy_file(policy, at("live.o"));
	setenv("NCCLBPF_POLICY", at("live.o"), 1);
	void *ctx = comm_init();
	calls(ctx, 3);
	mkfifo(at("new.fifo"), 0600);
	CHECK(rename(at("new.fifo"), at("live.o")) == 0);
	CHECKF(wait_warned("live.o is a FIFO, not a regular file", "version 1 stays active", 20),
	       "%s", warn_log);
	calls(ctx, 3);
	double t0 = now_s();
	P.v5->finalize(ctx);
	CHECKF(now_s() - t0 < 10, "destroy took %.1f s", now_s() - t0);
}

/* The replacement's read never returns: destroy does not wait for it. */
static void stalled_read(void)
{
	copy_file(policy, at("stall.o"));
	setenv("NCCLBPF_POLICY", at("stall.o"), 1);
	void *ctx = comm_init();
	calls(ctx, 3);
	copy_file(policy, at("next.o"));
	struct stat st;
	CHECK(stat(at("next.o"), &st) == 0);
	stall_dev = st.st_dev;
	stall_ino = st.st_ino;
	__atomic_store_n(&stall_on, 1, __ATOMIC_RELEASE);
	CHECK(rename(at("next.o"), at("stall.o")) == 0);
	for (int i = 0; i < 1000 && !__atomic_load_n(&stall_hit, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	CHECKF(stall_hit, "the watcher never read the replacement");
	/* Reloads, unloads and map reads are not held by the stalled read. */
	calls(ctx, 3);
	double t0 = now_s();
	P.v5->finalize(ctx);
	double took = now_s() - t0;
	CHECKF(took < 10, "destroy took %.1f s", took);
	CHECKF(warned("policy watcher did not stop within", "reloading"), "%s", warn_log);
	__atomic_store_n(&stall_release, 1, __ATOMIC_RELEASE);
	usleep(300000); /* the thread left behind finishes: it activates nothing */
}

/* A full disk, played by RLIMIT_FSIZE below the files' size with SIGXFSZ ignored (every append
 * fails with EFBIG, as it would with ENOSPC): the trace and the decision log each say so in one
 * WARN, however many records fail (three communicators join, each logging a line), and the
 * policy keeps deciding. */
static void full_disk(void)
{
	static const char fill[8192];
	const char *files[] = {at("full.trace"), at("full.log")};
	for (int i = 0; i < 2; i++) {
		int fd = open(files[i], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && write(fd, fill, sizeof(fill)) == (ssize_t)sizeof(fill));
		close(fd);
	}
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {4096, 4096};
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	setenv("NCCLBPF_TRACE", files[0], 1);
	setenv("NCCLBPF_CP_DIR", at("cpf"), 1);
	setenv("NCCLBPF_CP_LOG", files[1], 1);
	setenv("NCCLBPF_POLICY", policy, 1);
	void *ctx[3] = {NULL};
	for (int i = 0; i < 3; i++) {
		CHECK(P.v5->init(&ctx[i], 0xf00 + (uint64_t)i, 8, 1, logger, NULL, NULL) ==
		      ncclSuccess);
		calls(ctx[i], 5);
	}
	CHECKF(warned("trace write failed", "recording stopped") == 1, "%s", warn_log);
	CHECKF(warned("NCCLBPF_CP_LOG write failed", "no longer logged") == 1, "%s", warn_log);
	CHECKF(warned("NCCLBPF_CP_LOG write failed", NULL) == 1, "%s", warn_log);
	CHECKF(!warned("not loaded", NULL), "%s", warn_log);
	for (int i = 0; i < 3; i++)
		P.v5->finalize(ctx[i]);
}

/* Before the library is loaded: its constructor reads NCCLBPF_NET_INNER. */
static void net_inner_fifo_setup(void)
{
	mkfifo(at("inner.fifo"), 0600);
	setenv("NCCLBPF_NET_INNER", at("inner.fifo"), 1);
}

static void net_inner_fifo(void)
{
	const ncclNet_v11_t *net = dlsym(P.handle, "ncclNetPlugin_v11");
	void *ctx = NULL;
	CHECK(net && net->init(&ctx, 1, NULL, logger, NULL) != ncclSuccess);
	CHECKF(warned("NCCLBPF_NET_INNER", "inner.fifo is a FIFO, not a regular file"), "%s",
	       warn_log);
}

static const struct {
	const char *name;
	void (*fn)(void);
	void (*before_load)(void);
} cases[] = {
    {"policy is a FIFO", policy_fifo, NULL},
    {"policy is a directory", policy_directory, NULL},
    {"trace is a FIFO", trace_fifo, NULL},
    {"trace is a link in /tmp", trace_link, NULL},
    {"decision log is a FIFO", cp_log_fifo, NULL},
    {"control-plane directory others can write", cp_dir_open, NULL},
    {"garbage settings", garbage_settings, NULL},
    {"inspection pace of 600 s", inspect_interval, NULL},
    {"policy replaced by a FIFO", replacement_fifo, NULL},
    {"replacement's read stalls", stalled_read, NULL},
    {"inner net plugin is a FIFO", net_inner_fifo, net_inner_fifo_setup},
    {"full disk under the trace and the decision log", full_disk, NULL},
};

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s PLUGIN POLICY.o\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	plugin_path = argv[1];
	policy = argv[2];
	snprintf(T, sizeof(T), "/tmp/ncclbpf-hostile-XXXXXX");
	if (!mkdtemp(T)) {
		perror("mkdtemp");
		return 1;
	}
	int failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 3 && !strstr(cases[i].name, argv[3]))
			continue; /* usage for one case: test_hostile PLUGIN POLICY.o WORD */
		double t0 = now_s();
		pid_t c = fork();
		if (c == 0) {
			alarm(30); /* a hang is a failure */
			/* a fresh process environment for each case */
			unsetenv("NCCLBPF_POLICY");
			setenv("NCCLBPF_WATCH", "1", 1);
			setenv("NCCL_DEBUG", "WARN", 1);
			if (cases[i].before_load)
				cases[i].before_load();
			if (harness_open(&P, plugin_path) != 0 || !P.v5)
				_exit(3);
			cases[i].fn();
			_exit(check_failures ? 1 : 0);
		}
		int st = 0;
		waitpid(c, &st, 0);
		int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		printf("%-45s %s (%.1f s)\n", cases[i].name,
		       ok					    ? "ok"
		       : WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? "HUNG (killed after 30 s)"
								    : "FAILED",
		       now_s() - t0);
		failed += !ok;
	}
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", T);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", T);
	if (failed) {
		fprintf(stderr, "test_hostile: %d case(s) failed\n", failed);
		return 1;
	}
	printf("test_hostile: every case returned, with its WARN\n");
	return 0;
}
