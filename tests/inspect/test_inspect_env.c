/* The "env" section of `ncclbpf stat`: an adapter registers a reporter with the runtime
 * (ncclbpf_rt_set_env_reporter, with env_served_foreach's signature) and the inspection server
 * lists what it reports, values and sources with spaces and '=' intact. The runtime is linked
 * in directly, as the plugin links it, so this test plays the env adapter.
 *
 * usage: test_inspect_env NCCLBPF_CLI */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "run_cli.h"
#include "ncclbpf/runtime.h"

static void served(ncclbpf_env_emit_fn emit, void *arg)
{
	emit("NCCL_ALGO", "Ring,Tree", "bundle /opt/p/size aware.o (enforced)", arg);
	emit("NCCL_TUNER_PLUGIN", "libnccl-ncclbpf.so", "ncclbpf default", arg);
	emit("NCCL_IB_HCA", "=mlx5_0:1", "process environment", arg);
}

#define run_cli run_cli_tool

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s NCCLBPF_CLI\n", argv[0]);
		return 2;
	}
	/* a fresh name (a fixed one with the pid meets whatever a crashed run left behind) */
	char dir[] = "/tmp/ncclbpf-inspect-env-XXXXXX", out[16384];
	if (!mkdtemp(dir))
		return 1;
	setenv("NCCLBPF_CP_DIR", dir, 1);
	unsetenv("NCCLBPF_POLICY");
	ncclbpf_rt_set_logger(NULL);

	ncclbpf_rt_acquire();
	int rc = run_cli(argv[1], out, sizeof(out), "stat %d --dir %s", (int)getpid(), dir);
	CHECKF(rc == 0 && strstr(out, "env: no settings reported"), "before: %s", out);

	ncclbpf_rt_set_env_reporter(served);
	rc = run_cli(argv[1], out, sizeof(out), "stat %d --dir %s", (int)getpid(), dir);
	CHECKF(rc == 0 &&
		   strstr(out, "env (NCCL settings served by the plugin):\n"
			       "  NCCL_ALGO=Ring,Tree (bundle /opt/p/size aware.o (enforced))\n"
			       "  NCCL_TUNER_PLUGIN=libnccl-ncclbpf.so (ncclbpf default)\n"
			       "  NCCL_IB_HCA==mlx5_0:1 (process environment)\n"),
	       "stat: %s", out);
	printf("%s", out);
	rc = run_cli(argv[1], out, sizeof(out), "stat %d --dir %s --json", (int)getpid(), dir);
	CHECKF(rc == 0 && strstr(out, "\"env\":[{\"name\":\"NCCL_ALGO\",\"value\":\"Ring,Tree\","
				      "\"source\":\"bundle /opt/p/size aware.o (enforced)\"}"),
	       "json: %s", out);
	ncclbpf_rt_set_env_reporter(NULL);
	ncclbpf_rt_release();

	char procs[200];
	snprintf(procs, sizeof(procs), "%s/procs", dir);
	rmdir(procs);
	CHECKF(rmdir(dir) == 0, "files left in %s", dir);
	if (check_failures)
		return 1;
	printf("env reporting checks passed\n");
	return 0;
}
