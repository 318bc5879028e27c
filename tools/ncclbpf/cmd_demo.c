/* ncclbpf demo: the product in one minute, on embedded defaults.
 *   1. every shipped policy loaded, verified and JIT-compiled (with timings), and one unsafe
 *      example rejected with the C source line that makes it unsafe;
 *   2. the embedded trace (8 H100 GPUs, NCCL's cost model) replayed through the real plugin
 *      library with a hot reload in the middle;
 *   3. the per-decision overhead measured on this machine (eBPF JIT vs the same logic in C).
 * Steps 2 and 3 run this executable's replay and bench commands. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "ncclbpf/runtime.h"

#ifndef NCCLBPF_SOURCE_DIR
#define NCCLBPF_SOURCE_DIR "."
#endif
#ifndef NCCLBPF_BUILD_DIR
#define NCCLBPF_BUILD_DIR "build"
#endif

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

static int cmd_demo(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	static const char *const good[] = {"noop", "size_aware", "table_tuner", "profiler_latency"};
	char path[4096];
	int rc = 0;
	setenv("NCCLBPF_WATCH", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	unsetenv("NCCLBPF_TRACE");
	printf("== 1. Policies: load, verify, JIT (build/policies/*.o)\n");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(path, sizeof(path), "%s/policies/%s.o", NCCLBPF_BUILD_DIR, good[i]);
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
	snprintf(path, sizeof(path), "%s/policies/unsafe/div_zero.o", NCCLBPF_BUILD_DIR);
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
	char trace[4096], p1[4096], p2[4096];
	snprintf(trace, sizeof(trace), "%s/adapters/nccl/traces/dgx-h100-8gpu.trace",
		 NCCLBPF_SOURCE_DIR);
	snprintf(p1, sizeof(p1), "%s/policies/size_aware.o", NCCLBPF_BUILD_DIR);
	snprintf(p2, sizeof(p2), "%s/policies/table_tuner.o", NCCLBPF_BUILD_DIR);
	char *replay[] = {"ncclbpf", "replay",		trace, "--policy", p1, "--reload-at",
			  "60",	     "--reload-policy", p2,    NULL};
	if (run_self(replay) != 0)
		rc = 1;

	printf("\n== 3. Overhead per decision on this machine (200,000 calls per case; `ncclbpf "
	       "bench` for the full run)\n");
	char *bench[] = {"ncclbpf", "bench",	  "--calls",	     "200000", "--reloads",
			 "20",	    "--policies", "noop,size_aware", NULL};
	if (run_self(bench) != 0)
		rc = 1;
	return rc;
}

NCCLBPF_COMMAND(demo_cmd, .name = "demo", .args = "",
		.summary = "verify, replay with a hot reload, measure: the one-minute tour",
		.run = cmd_demo);
