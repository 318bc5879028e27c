/* ncclbpf demo: the product in one minute, on embedded defaults.
 *   1. every shipped policy loaded, verified and JIT-compiled (with timings), and one unsafe
 *      example rejected with the C source line that makes it unsafe;
 *   2. the embedded trace (8 H100 GPUs, NCCL's cost model) replayed through the real plugin
 *      library with a hot reload in the middle;
 *   3. the per-decision overhead measured on this machine: our library minus a native plugin
 *      making the same decisions (and eBPF against the same logic in C inside our adapter).
 * Steps 2 and 3 run this executable's replay and bench commands. Policies and the trace are the
 * shipped ones, found relative to this executable (self_path.h). */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "ncclbpf/runtime.h"
#include "self_path.h"

extern char **environ;

static int run_self(char *const args[])
{
	pid_t pid;
	fflush(stdout);
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) != 0) {
		perror("ncclbpf demo");
		return -1;
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A shipped file: <share>/policies/<name>.o or <share>/<rel>. */
static const char *shipped(const char *rel, char *out, size_t len)
{
	char r[512];
	snprintf(r, sizeof(r), SELF_SHARE "/%s", rel);
	self_path(r, out, len);
	return out;
}

static int cmd_demo(int argc, char **argv)
{
	if (argc > 1)
		return cli_usage_error("%s '%s'",
				       argv[1][0] == '-' ? "unknown option" : "unexpected argument",
				       argv[1]);
	static const char *const good[] = {"noop", "size_aware", "table_tuner", "profiler_latency"};
	char path[4096], rel[256];
	int rc = 0;
	setenv("NCCLBPF_WATCH", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	unsetenv("NCCLBPF_TRACE");
	printf("== 1. Policies: load, verify, JIT (%s)\n", shipped("policies", path, sizeof(path)));
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(rel, sizeof(rel), "policies/%s.o", good[i]);
		shipped(rel, path, sizeof(path));
		struct ncclbpf_reload_report r = {.sz = sizeof(r)};
		if (ncclbpf_rt_reload(path, &r) == 0)
			printf("  %-18s verified   %u program(s), %u map(s): parse %.0f us, verify "
			       "%.0f "
			       "us, JIT %.0f us\n",
			       good[i], r.n_progs, r.n_maps, r.parse_ns / 1e3, r.verify_ns / 1e3,
			       r.jit_ns / 1e3);
		else {
			printf("  %-18s REJECTED   %s\n", good[i], r.msg);
			rc = 1;
		}
	}
	shipped("policies/unsafe/div_zero.o", path, sizeof(path));
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	if (ncclbpf_rt_reload(path, &r) != 0)
		printf("  %-18s rejected   %s\n", "unsafe/div_zero", r.msg);
	else {
		printf("  unsafe/div_zero was accepted: the verifier is not doing its job\n");
		rc = 1;
	}
	ncclbpf_rt_unload();

	printf("\n== 2. Replay: embedded 8x H100 trace through libnccl-ncclbpf.so, size_aware, hot "
	       "reload to table_tuner at call 60\n");
	char trace[4096], p1[4096], p2[4096], p3[4096];
	shipped("traces/dgx-h100-8gpu.trace", trace, sizeof(trace));
	shipped("policies/size_aware.o", p1, sizeof(p1));
	shipped("policies/table_tuner.o", p2, sizeof(p2));
	shipped("policies/noop.o", p3, sizeof(p3));
	char *replay[] = {"ncclbpf", "replay",		trace, "--policy", p1, "--reload-at",
			  "60",	     "--reload-policy", p2,    NULL};
	if (run_self(replay) != 0)
		rc = 1;

	printf("\n== 3. Overhead per decision on this machine (`ncclbpf bench` for the full "
	       "run)\n");
	char *bench[] = {"ncclbpf",   "bench", "--rounds", "9", "--calls", "100000",
			 "--reloads", "20",    p3,	   p1,	NULL};
	if (run_self(bench) != 0)
		rc = 1;
	return rc;
}

NCCLBPF_COMMAND(demo_cmd, .name = "demo", .args = "",
		.summary = "verify, replay with a hot reload, measure: the one-minute tour",
		.help =
		    "Verifies the shipped policies, replays the shipped trace with a hot reload\n"
		    "and measures the overhead per decision against native plugins.\n",
		.run = cmd_demo);
