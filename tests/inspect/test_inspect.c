/* Live inspection end to end: this process runs the shipped plugin exactly as NCCL does
 * (tests/plugin/harness.h) with tests/inspect/policies/inspect.c, and the real `ncclbpf` CLI
 * inspects it from another process: ps lists it, stat shows the counts of the calls made, map
 * dump shows what the policy wrote, map update changes a rank-local map at once and a uniform
 * one only through the control plane. Then the edges: another uid is refused (file permissions,
 * then peer credentials), the server survives dlopen/dlclose cycles and fork, its descriptors are
 * close-on-exec, exit removes the files, an unusable directory or NCCLBPF_INSPECT=0 only turns the
 * feature off, and ps removes stale records.
 *
 * usage: test_inspect PLUGIN NCCLBPF_CLI INSPECT_POLICY */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "harness.h"
#include "nccl_env.h"
#include "ncclbpf/proc_registry.h"
#include "run_cli.h"
#include "thread_count.h"

static const char *plugin_path, *cli, *policy;
static char dir[128], host[256];
static struct harness_plugin plug;

/* The CLI with args; its stdout+stderr in out. Returns the exit status. */
static const char *json_expect; /* tests/cli/json_expect.py: --json output is parsed by it */
#define run_cli(out, len, ...) run_cli_tool(cli, out, len, __VA_ARGS__)

static void record_paths(int pid, char *rec, char *sock, size_t len)
{
	snprintf(rec, len, "%s/procs/%s.%d", dir, host, pid);
	snprintf(sock, len, "%s/procs/%s.%d.sock", dir, host, pid);
}

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static int file_has(const char *path, const char *text)
{
	char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	return strstr(buf, text) != NULL;
}

static void *open_comm(uint64_t id)
{
	void *ctx = NULL;
	plug.v5->init(&ctx, id, 8, 1, harness_logger, NULL, NULL);
	return ctx;
}

/* k AllReduce calls, alternating 1 KiB and 1 MiB. */
static void calls(void *ctx, int k)
{
	float t[7 * 3];
	for (int i = 0; i < k; i++) {
		size_t bytes = i % 2 ? (1u << 20) : 1024;
		harness_table(t, 7, 3, 4, bytes);
		int ch = 16;
		plug.v5->getCollInfo(ctx, 4, bytes, 1, (float **)t, 7, 3, 0, &ch);
	}
}

/* Sum of the "(u64 N)" values in a map dump. */
/* The sum of a per-CPU dump's values ("cpu0 V cpu1 V ..."). */
static unsigned long long sum_cpus(const char *s)
{
	unsigned long long sum = 0, v;
	unsigned cpu;
	for (const char *p = s; (p = strstr(p, " cpu")); p += 4)
		if (sscanf(p, " cpu%u %llu", &cpu, &v) == 2)
			sum += v;
	return sum;
}

static void test_cli_against_live_process(void)
{
	char out[65536], rec[512], sock[512];
	int pid = (int)getpid();
	void *ctx = open_comm(0xabcdef0123456789ull);
	CHECKF(ctx != NULL, "init failed");
	calls(ctx, 100);
	record_paths(pid, rec, sock, sizeof(rec));
	CHECKF(exists(rec) && exists(sock), "no record/socket at %s", rec);
	/* The record names this process, not only its pid (pids are reused). */
	char line[64];
	snprintf(line, sizeof(line), "\nproc_start=%llu\n", ncclbpf_rt_proc_start(pid));
	CHECKF(ncclbpf_rt_proc_start(pid) != 0 && file_has(rec, line), "%s lacks%s", rec, line);

	int rc = run_cli(out, sizeof(out), "ps --dir %s", dir);
	char want[128];
	snprintf(want, sizeof(want), "%d ", pid);
	CHECKF(rc == 0 && strstr(out, want) && strstr(out, "testjob") && strstr(out, "inspect.o") &&
		   strstr(out, " 100 "),
	       "ps output:\n%s", out);
	printf("--- ncclbpf ps\n%s", out);
	if (json_expect) {
		rc = run_cli(out, sizeof(out),
			     "ps --dir %s --json | python3 %s - 'd[\"dir\"] == \"%s\"' "
			     "'[p[\"pid\"] for p in d[\"processes\"]] == [%d]' "
			     "'d[\"processes\"][0][\"state\"] == \"live\"' "
			     "'d[\"processes\"][0][\"calls\"] == 100' "
			     "'d[\"processes\"][0][\"job\"] == \"testjob\"' "
			     "'d[\"processes\"][0][\"rank\"] == \"3\"' "
			     "'d[\"processes\"][0][\"bundle\"].endswith(\"/inspect.o\")' "
			     "'d[\"processes\"][0][\"version\"] == 1'",
			     dir, json_expect, dir, pid);
		CHECKF(rc == 0, "ps --json: %s", out);
	}

	/* The env plugin of the same library reports what it served: the library registers the
	 * reporter when it is loaded (adapters/nccl/src/env_inspect.c). */
	const ncclEnv_v1_t *env = dlsym(plug.handle, "ncclEnvPlugin_v1");
	CHECKF(env && env->init(2, 28, 9, "") == ncclSuccess, "env plugin table");
	setenv("NCCL_IB_HCA", "=mlx5_0:1", 1);
	const char *served = env ? env->getEnv("NCCL_IB_HCA") : NULL;
	CHECKF(served && !strcmp(served, "=mlx5_0:1"), "getEnv: %s", served ? served : "NULL");

	rc = run_cli(out, sizeof(out), "stat %d --dir %s --json", pid, dir);
	CHECKF(rc == 0, "stat --json rc %d: %s", rc, out);
	CHECKF(strstr(out, "NCCL_IB_HCA") && strstr(out, "process environment"),
	       "stat lists what the env plugin served: %s", out);
	CHECKF(strstr(out, "\"id\":\"abcdef0123456789\"") && strstr(out, "\"calls\":100,"),
	       "stat counts: %s", out);
	CHECKF(strstr(out, "\"algo\":\"ring\",\"proto\":\"simple\",\"count\":100}"),
	       "stat decision histogram: %s", out);
	CHECKF(strstr(out, "\"n\":8,\"count\":50}") && strstr(out, "\"n\":0,\"count\":50}"),
	       "stat channel histogram: %s", out);
	CHECKF(strstr(out, "\"name\":\"tune\",\"section\":\"tuner\",\"hook\":\"tuner\"") &&
		   strstr(out, "\"rank\":\"3\"") && strstr(out, "\"result\":\"ok\""),
	       "stat program/process/reload: %s", out);
	CHECKF(!strstr(out, "\"processed\":0,"), "verifier statistics missing: %s", out);
	printf("--- ncclbpf stat %d --json\n%s", pid, out);

	rc = run_cli(out, sizeof(out), "stat %d --dir %s", pid, dir);
	CHECKF(rc == 0 && strstr(out, "applied: ring/simple 100") &&
		   strstr(out, "channels: NCCL's x 50, 8 x 50"),
	       "stat: %s", out);
	printf("--- ncclbpf stat %d\n%s", pid, out);

	rc = run_cli(out, sizeof(out), "map list %d --dir %s", pid, dir);
	/* classes as loading decided them: every map a program writes is rank-local */
	CHECKF(rc == 0 &&
		   strstr(out, "map tuner_calls: array (maps), key 4 B, value 8 B, max 2 entries, "
			       "2 in use, 1 CPU, rank-local") &&
		   strstr(out, "CPUs, rank-local") && strstr(out, "map tuner_cfg: array") &&
		   strstr(out, "map comm_calls: array (maps), key 4 B, value 8 B, max 1 entries, 1 "
			       "in use, 1 CPU, per-comm") &&
		   strstr(out, ", uniform") &&
		   strstr(out, "map prof_last: array (maps), key 4 B, value 8 B, max 1 entries, 1 "
			       "in use, 1 CPU, rank-local"),
	       "map list: %s", out);
	printf("--- ncclbpf map list %d\n%s", pid, out);

	rc = run_cli(out, sizeof(out), "map dump %d tuner_calls --dir %s", pid, dir);
	/* typed by the bundle's BTF: __u32 keys, __u64 values */
	CHECKF(rc == 0 && strstr(out, "\n  key 0: value 100\n") && strstr(out, "\n2 elements\n"),
	       "map dump: %s", out);
	printf("--- ncclbpf map dump %d tuner_calls\n%s", pid, out);
	rc = run_cli(out, sizeof(out), "map dump %d percpu_calls --dir %s", pid, dir);
	CHECKF(rc == 0 && strstr(out, "key 0: cpu0 ") && sum_cpus(out) == 100,
	       "per-CPU dump (sum %llu): %s", sum_cpus(out), out);
	printf("--- ncclbpf map dump %d percpu_calls\n%s", pid, out);

	if (json_expect) {
		rc = run_cli(out, sizeof(out),
			     "map list %d --dir %s --json | python3 %s - 'd[\"pid\"] == %d' "
			     "'sorted(m[\"name\"] for m in d[\"maps\"]) == "
			     "[\"comm_calls\", \"percpu_calls\", \"prof_last\", \"tuner_calls\", "
			     "\"tuner_cfg\"]' "
			     "'[m[\"class\"] for m in d[\"maps\"] if m[\"name\"] == \"tuner_cfg\"] "
			     "== [\"uniform\"]' "
			     "'all(m[\"key_size\"] == 4 and m[\"value_size\"] == 8 for m in "
			     "d[\"maps\"])'",
			     pid, dir, json_expect, pid);
		CHECKF(rc == 0, "map list --json: %s", out);
		rc = run_cli(out, sizeof(out),
			     "map dump %d tuner_calls --dir %s --json | python3 %s - "
			     "'d[\"map\"][\"name\"] == \"tuner_calls\"' "
			     "'[(e[\"key\"], e[\"value\"]) for e in d[\"elements\"]] == "
			     "[(0, 100), (1, 0)]' "
			     "'d[\"elements\"][0][\"value_hex\"] == \"6400000000000000\"'",
			     pid, dir, json_expect);
		CHECKF(rc == 0, "map dump --json: %s", out);
		rc = run_cli(out, sizeof(out),
			     "map dump %d percpu_calls --dir %s --json | python3 %s - "
			     "'len(d[\"elements\"]) == 1' "
			     "'sum(v[\"value\"] for v in d[\"elements\"][0][\"values\"]) == 100' "
			     "'[v[\"cpu\"] for v in d[\"elements\"][0][\"values\"]] == "
			     "list(range(d[\"map\"][\"cpus\"]))'",
			     pid, dir, json_expect);
		CHECKF(rc == 0, "per-CPU map dump --json: %s", out);
	}

	/* a per-communicator map: every communicator's own instance; no updates from outside */
	rc = run_cli(out, sizeof(out), "map dump %d comm_calls --dir %s", pid, dir);
	CHECKF(rc == 0 && strstr(out, "\n  key 0: comm 0 value 100\n"), "per-communicator dump: %s",
	       out);
	printf("--- ncclbpf map dump %d comm_calls\n%s", pid, out);
	rc = run_cli(out, sizeof(out), "map update %d comm_calls u32:0 u64:5 --dir %s", pid, dir);
	CHECKF(rc != 0 && strstr(out, "per-communicator"), "per-communicator update refused: %s",
	       out);
	printf("--- ncclbpf map update %d comm_calls u32:0 u64:5\n%s", pid, out);
	rc = run_cli(out, sizeof(out), "map update %d prof_last u32:0 u64:42 --dir %s", pid, dir);
	CHECKF(rc == 0 && strstr(out, "rank-local"), "update rank-local rc %d: %s", rc, out);
	printf("--- ncclbpf map update %d prof_last u32:0 u64:42\n%s", pid, out);
	rc = run_cli(out, sizeof(out), "map dump %d prof_last --dir %s", pid, dir);
	CHECKF(rc == 0 && strstr(out, "key 0: value 42\n"), "after update: %s", out);
	/* A refused update says why in the map's terms, not the errno's ("Argument list too
	 * long"). */
	rc = run_cli(out, sizeof(out), "map update %d prof_last u32:99 u64:1 --dir %s", pid, dir);
	CHECKF(rc == 1 &&
		   strstr(out, "key 99 is out of range: 'prof_last' is an array of 1 entries "
			       "(keys 0..0)") &&
		   !strstr(out, "Argument list"),
	       "update beyond the array rc %d: %s", rc, out);
	/* A key or value of the wrong size is named with the map's sizes, before the process is
	 * asked to change anything; a per-CPU map also takes every CPU's value. */
	rc = run_cli(out, sizeof(out), "map update %d prof_last u64:0 u64:1 --dir %s", pid, dir);
	CHECKF(rc == 1 && strstr(out, "map 'prof_last' has 4-byte keys; KEY is 8 bytes"),
	       "key of the wrong size rc %d: %s", rc, out);
	rc = run_cli(out, sizeof(out), "map update %d prof_last u32:0 u32:1 --dir %s", pid, dir);
	CHECKF(rc == 1 && strstr(out, "map 'prof_last' has 8-byte values; VALUE is 4 bytes"),
	       "value of the wrong size rc %d: %s", rc, out);
	rc = run_cli(out, sizeof(out), "map update %d percpu_calls u32:0 u32:1 --dir %s", pid, dir);
	CHECKF(rc == 1 && strstr(out, "map 'percpu_calls' has 8-byte values per CPU (one for every "
				      "CPU, or all "),
	       "per-CPU value of the wrong size rc %d: %s", rc, out);
	rc = run_cli(out, sizeof(out), "map dump %d prof_last --dir %s", pid, dir);
	CHECKF(rc == 0 && strstr(out, "key 0: value 42\n"), "changed by a refused update: %s", out);

	/* A uniform map changes only through the control plane's consistent activation (the
	 * process is in one: NCCLBPF_CP_DIR). This communicator says it has 8 ranks and only this
	 * one is registered, so the update must abort and change nothing anywhere
	 * (tests/cp/cp_cli.sh shows it committing on a complete job). */
	rc = run_cli(out, sizeof(out), "map update %d tuner_cfg u32:1 u64:7 --dir %s --timeout 1",
		     pid, dir);
	CHECKF(rc == 1 && strstr(out, "is uniform: proposing the update") && strstr(out, "abort") &&
		   strstr(out, "8 ranks, 1 answered") && strstr(out, "not changed"),
	       "uniform update with missing ranks rc %d: %s", rc, out);
	printf("--- ncclbpf map update %d tuner_cfg u32:1 u64:7\n%s", pid, out);
	rc = run_cli(out, sizeof(out), "map dump %d tuner_cfg --dir %s", pid, dir);
	CHECKF(strstr(out, "key 1: value 0\n"), "uniform map changed: %s", out);

	/* The policy keeps running with the server answering in between. */
	calls(ctx, 10);
	rc = run_cli(out, sizeof(out), "stat %d --dir %s --json", pid, dir);
	CHECKF(strstr(out, "\"calls\":110,"), "counts after more calls: %s", out);

	/* Descriptors never leak into exec'd children. */
	DIR *d = opendir("/proc/self/fd");
	int checked = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		char link[300], target[256];
		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strncmp(target, "socket:", 7) && !strstr(target, "eventfd"))
			continue;
		int fd = atoi(e->d_name);
		if (fd == dirfd(d))
			continue;
		checked++;
		CHECKF(fcntl(fd, F_GETFD) & FD_CLOEXEC, "fd %d (%s) not close-on-exec", fd, target);
	}
	if (d)
		closedir(d);
	CHECKF(checked >= 2, "expected the server's socket and eventfd, found %d", checked);

	/* A forked child that exits does not stop the parent's server nor remove its files. */
	pid_t c = fork();
	if (c == 0)
		exit(0); /* runs the library's destructors */
	waitpid(c, NULL, 0);
	CHECKF(exists(rec) && exists(sock), "fork child removed the parent's files");
	rc = run_cli(out, sizeof(out), "stat %d --dir %s --json", pid, dir);
	CHECKF(rc == 0 && strstr(out, "\"calls\":110,"), "server after fork: %s", out);

	plug.v5->finalize(ctx);
	CHECKF(!exists(rec) && !exists(sock), "files left after the last release");
}

static void test_other_uid(void)
{
	if (geteuid() != 0) {
		CHECK_SKIP_PART("root", "the other-uid refusal needs root to setuid(65534)");
		return;
	}
	char rec[512], sock[512], procs[512];
	void *ctx = open_comm(1);
	calls(ctx, 1);
	record_paths(getpid(), rec, sock, sizeof(rec));
	snprintf(procs, sizeof(procs), "%s/procs", dir);
	for (int phase = 0; phase < 2; phase++) {
		if (phase == 1) {
			/* Open the file permissions to reach the peer-credential check. */
			chmod(dir, 0755);
			chmod(procs, 0755);
			chmod(sock, 0777);
		}
		int warns = harness_warns;
		int pfd[2];
		if (pipe(pfd) != 0)
			return;
		pid_t c = fork();
		if (c == 0) {
			close(pfd[0]);
			char res[200] = "setuid failed";
			if (setgid(65534) == 0 && setuid(65534) == 0) {
				struct sockaddr_un sa = {.sun_family = AF_UNIX};
				memcpy(sa.sun_path, sock, strnlen(sock, sizeof(sa.sun_path) - 1));
				int fd = socket(AF_UNIX, SOCK_STREAM, 0);
				if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
					snprintf(res, sizeof(res), "connect: %s", strerror(errno));
				} else {
					ssize_t n = read(fd, res, sizeof(res) - 1);
					res[n > 0 ? n : 0] = 0;
				}
			}
			ssize_t w = write(pfd[1], res, strlen(res));
			(void)w;
			_exit(0);
		}
		close(pfd[1]);
		char res[200] = "";
		ssize_t n = read(pfd[0], res, sizeof(res) - 1);
		res[n > 0 ? n : 0] = 0;
		close(pfd[0]);
		waitpid(c, NULL, 0);
		if (phase == 0) {
			CHECKF(strstr(res, "Permission denied"), "uid 65534 reached the socket: %s",
			       res);
		} else {
			CHECKF(!strncmp(res, "error refused", 13), "uid 65534 was served: %s", res);
			CHECKF(harness_warns == warns + 1 &&
				   strstr(harness_last_warn, "uid 65534") &&
				   strstr(harness_last_warn, "refused"),
			       "refusal not logged: %s", harness_last_warn);
		}
		printf("uid 65534, %s: %s\n", phase ? "socket opened up" : "as created",
		       res[0] ? res : "(nothing)");
	}
	chmod(dir, 0700);
	chmod(procs, 0700);
	plug.v5->finalize(ctx);
}

static void test_cycles(void)
{
	char out[65536], rec[512], sock[512];
	record_paths(getpid(), rec, sock, sizeof(rec));
	harness_close(&plug);
	int base = thread_count();
	for (int i = 0; i < 20; i++) {
		if (harness_open(&plug, plugin_path) != 0) {
			CHECKF(0, "dlopen cycle %d", i);
			return;
		}
		void *ctx = open_comm(100 + (uint64_t)i);
		calls(ctx, 4);
		CHECKF(exists(rec) && exists(sock), "cycle %d: not registered", i);
		if (i % 5 == 0) {
			int rc = run_cli(out, sizeof(out), "stat %d --dir %s --json", (int)getpid(),
					 dir);
			CHECKF(rc == 0 && strstr(out, "\"calls\":4,"), "cycle %d stat: %s", i, out);
		}
		plug.v5->finalize(ctx);
		CHECKF(!exists(rec) && !exists(sock), "cycle %d: files left", i);
		harness_close(&plug);
		CHECKF(thread_count() == base, "cycle %d: %d threads, %d before", i, thread_count(),
		       base);
	}
	harness_open(&plug, plugin_path);
}

/* A process that exits with a communicator still open leaves no record behind. */
static void test_exit_cleanup(void)
{
	char rec[512], sock[512];
	pid_t c = fork();
	if (c == 0) {
		void *ctx = open_comm(7);
		calls(ctx, 1);
		exit(0);
	}
	int st = 0;
	waitpid(c, &st, 0);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	record_paths(c, rec, sock, sizeof(rec));
	CHECKF(!exists(rec) && !exists(sock), "exit left %s", rec);
}

static void test_unusable_dir(void)
{
	char file[300], bad[400];
	snprintf(file, sizeof(file), "%s/not-a-dir", dir);
	FILE *f = fopen(file, "w");
	if (f)
		fclose(f);
	snprintf(bad, sizeof(bad), "%s/sub", file);
	setenv("NCCLBPF_CP_DIR", bad, 1);
	int warns = harness_warns;
	void *ctx = open_comm(2);
	calls(ctx, 10);
	CHECKF(ctx != NULL, "init failed with an unusable directory");
	CHECKF(harness_warns == warns + 1 && strstr(harness_last_warn, "live inspection off"),
	       "%d warnings, last: %s", harness_warns - warns, harness_last_warn);
	plug.v5->finalize(ctx);
	setenv("NCCLBPF_CP_DIR", dir, 1);

	char rec[512], sock[512];
	record_paths(getpid(), rec, sock, sizeof(rec));
	setenv("NCCLBPF_INSPECT", "0", 1);
	ctx = open_comm(3);
	calls(ctx, 1);
	CHECKF(!exists(rec) && !exists(sock), "NCCLBPF_INSPECT=0 still registered");
	plug.v5->finalize(ctx);
	unsetenv("NCCLBPF_INSPECT");
}

static void test_stale_record(void)
{
	char out[4096], rec[512], sock[512];
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	record_paths(c, rec, sock, sizeof(rec));
	FILE *f = fopen(rec, "w");
	if (!f) {
		CHECKF(0, "cannot write %s", rec);
		return;
	}
	fprintf(f, "pid=%d\nhost=%s\nuid=0\njob=gone\nrank=0\nsock=%s\n", (int)c, host, sock);
	fclose(f);
	int rc = run_cli(out, sizeof(out), "ps --dir %s", dir);
	CHECKF(rc == 0 && strstr(out, "removed 1 stale record") && !strstr(out, "gone"), "ps: %s",
	       out);
	CHECKF(!exists(rec), "stale record kept");
}

/* A record whose pid the kernel has given to another process since (CI met one: a test found
 * a dead process's record under its own pid and tried its socket). The process with the pid
 * is alive, so only the start time in the record tells: with a different one the record is
 * not that process's (stat says it is not registered, ps removes it); with the right one, or
 * none (a plugin older than the field), it is taken for the process's own, so stat tries its
 * socket. */
static void test_reused_pid_record(void)
{
	char out[4096], rec[512], sock[512];
	int hold[2];
	CHECK(pipe(hold) == 0);
	pid_t c = fork();
	if (c == 0) {
		char b;
		close(hold[1]);
		_exit(read(hold[0], &b, 1) < 0);
	}
	close(hold[0]);
	unsigned long long started = ncclbpf_rt_proc_start(c);
	CHECK(started != 0);
	record_paths(c, rec, sock, sizeof(rec));
	const char *const cases[] = {"another", "its", "no"};
	for (int k = 0; k < 3; k++) {
		FILE *f = fopen(rec, "w");
		if (!f) {
			CHECKF(0, "cannot write %s", rec);
			break;
		}
		fprintf(f, "pid=%d\nhost=%s\nuid=0\njob=reused\nrank=0\nsock=%s\n", (int)c, host,
			sock);
		if (k < 2)
			fprintf(f, "proc_start=%llu\n", k == 0 ? started + 1 : started);
		fclose(f);
		int rc = run_cli(out, sizeof(out), "stat --dir %s %d", dir, (int)c);
		CHECKF(rc != 0 && (strstr(out, "is not registered") != NULL) == (k == 0),
		       "stat (%s start time): %s", cases[k], out);
		if (k == 0) {
			rc = run_cli(out, sizeof(out), "ps --dir %s", dir);
			CHECKF(rc == 0 && strstr(out, "removed 1 stale record"), "ps: %s", out);
			CHECKF(!exists(rec), "record of a reused pid kept");
		}
		unlink(rec);
	}
	close(hold[1]);
	waitpid(c, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s PLUGIN NCCLBPF_CLI INSPECT_POLICY [JSON_EXPECT.py]\n",
			argv[0]);
		return 2;
	}
	json_expect = argc > 4 ? argv[4] : NULL;
	setvbuf(stdout, NULL, _IOLBF, 0); /* forked children must not repeat buffered output */
	plugin_path = argv[1];
	cli = argv[2];
	policy = argv[3];
	/* a fresh name (a fixed one with the pid meets whatever a crashed run left behind) */
	snprintf(dir, sizeof(dir), "/tmp/ncclbpf-inspect-test-XXXXXX");
	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	ncclbpf_rt_host_name(host, sizeof(host));
	setenv("NCCLBPF_CP_DIR", dir, 1);
	setenv("NCCLBPF_POLICY", policy, 1);
	setenv("NCCLBPF_JOB", "testjob", 1);
	setenv("RANK", "3", 1);
	if (harness_open(&plug, plugin_path) != 0 || !plug.v5)
		return 1;

	test_cli_against_live_process();
	test_other_uid();
	test_cycles();
	test_exit_cleanup();
	test_unusable_dir();
	test_stale_record();
	test_reused_pid_record();

	harness_close(&plug);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_summary("test_inspect");
}
