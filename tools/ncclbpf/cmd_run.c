/* ncclbpf run [--policy BUNDLE] [--dir D] [--job NAME] [--plugin LIB] -- COMMAND...
 * Runs COMMAND (typically torchrun or mpirun) with the plugin configured: NCCL_TUNER_PLUGIN,
 * NCCL_ENV_PLUGIN and NCCL_PROFILER_PLUGIN name the plugin library, NCCLBPF_POLICY the bundle,
 * NCCLBPF_CP_DIR the control-plane directory (default /dev/shm/ncclbpf-$UID/NAME, created
 * 0700; NAME defaults to "default") and NCCLBPF_JOB the job name. The environment is inherited by
 * every rank the command starts on this host; `ncclbpf reload --job --dir D` then changes the
 * policy of the whole job consistently (docs/control-plane.md). A policy that would not load (it
 * fails verification, or is not a trusted regular file) is refused before the command starts. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle_check.h"
#include "cli.h"
#include "plugin_host.h"
#include "ncclbpf/proc_registry.h"
#include "ncclbpf/trusted_path.h"

/* Creates path if needed and refuses it unless it is trusted (ncclbpf/trusted_path.h: every
 * level ours or root's and writable by no one else): the control-plane directory decides which
 * code runs in the job. flags: NCCLBPF_PATH_PRIVATE for the per-user directory. */
static int trusted_dir(const char *path, unsigned flags)
{
	char why[4400];
	int fd = ncclbpf_path_open_dir(path, NCCLBPF_PATH_CREATE | flags, why, sizeof(why));
	if (fd < 0) {
		fprintf(stderr, "ncclbpf run: %s\n", why);
		return -1;
	}
	close(fd);
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	const char *policy = NULL, *dir = NULL, *job = "default", *plugin = NULL;
	int i = 1;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		const char *a = argv[i];
		if (a[0] != '-')
			break; /* the command */
		if (cli_is_help(a))
			return cli_help();
		int k;
		if ((k = cli_opt(argc, argv, &i, "--policy", &policy)) ||
		    (k = cli_opt(argc, argv, &i, "--dir", &dir)) ||
		    (k = cli_opt(argc, argv, &i, "--job", &job)) ||
		    (k = cli_opt(argc, argv, &i, "--plugin", &plugin))) {
			if (k < 0)
				return CLI_USAGE;
			continue;
		}
		return cli_usage_error("unknown option '%s' (the command to run comes after --)",
				       a);
	}
	if (!*job || strchr(job, '/') || job[0] == '.')
		return cli_usage_error("--job '%s': a name without '/' that does not start with "
				       "'.'",
				       job);
	if (i >= argc)
		return cli_usage_error("no command to run");
	char lib[PATH_MAX], pol[PATH_MAX], d[PATH_MAX];
	if (plugin) {
		if (!realpath(plugin, lib))
			return cli_fail("plugin %s: %s", plugin, strerror(errno));
	} else if (!realpath(plugin_host_default_path(), lib)) {
		return cli_fail("plugin %s: %s; name it with --plugin", plugin_host_default_path(),
				strerror(errno));
	}
	/* Absolute: the ranks may start in another working directory. */
	if (policy && !realpath(policy, pol))
		return cli_fail("policy %s: %s", policy, strerror(errno));
	/* Every rank would refuse a policy that does not load and run the job without it (NCCL
	 * deciding): say so now, before the job starts, rather than in every rank's log. */
	struct ncclbpf_reload_report rep;
	if (policy && bundle_check(pol, &rep))
		return cli_fail("policy %s would not load, the job is not started: %s", policy,
				rep.msg);
	if (dir) {
		snprintf(d, sizeof(d), "%s", dir);
		if (trusted_dir(d, 0))
			return 1;
	} else {
		ncclbpf_rt_user_dir(d, sizeof(d));
		if (trusted_dir(d, NCCLBPF_PATH_PRIVATE))
			return 1;
		size_t n = strlen(d);
		snprintf(d + n, sizeof(d) - n, "/%s", job);
		if (trusted_dir(d, NCCLBPF_PATH_PRIVATE))
			return 1;
	}
	setenv("NCCL_TUNER_PLUGIN", lib, 1);
	setenv("NCCL_ENV_PLUGIN", lib, 1);
	setenv("NCCL_PROFILER_PLUGIN", lib, 1);
	setenv("NCCLBPF_CP_DIR", d, 1);
	setenv("NCCLBPF_JOB", job, 1);
	if (policy)
		setenv("NCCLBPF_POLICY", pol, 1);
	fprintf(stderr,
		"ncclbpf run: plugin %s, policy %s, control plane %s (job %s); change it with "
		"`ncclbpf reload --job --dir %s BUNDLE`\n",
		lib, policy ? pol : "(none: NCCL decides)", d, job, d);
	fflush(stderr);
	execvp(argv[i], argv + i);
	fprintf(stderr, "ncclbpf run: %s: %s\n", argv[i], strerror(errno));
	return 127;
}

NCCLBPF_COMMAND(
    run_cmd, .name = "run",
    .args = "[--policy BUNDLE] [--dir D] [--job NAME] [--plugin LIB] [--] COMMAND [ARGS...]",
    .summary = "run a command (torchrun, mpirun, ...) with the plugin and control plane set up",
    .help = "  --policy BUNDLE  the policy every rank loads (NCCLBPF_POLICY; default: none,\n"
	    "                   NCCL decides until `ncclbpf reload --job`)\n"
	    "  --dir D          control-plane directory (NCCLBPF_CP_DIR; default\n"
	    "                   /dev/shm/ncclbpf-$UID/NAME, created 0700)\n"
	    "  --job NAME       job name (NCCLBPF_JOB; default \"default\")\n"
	    "  --plugin LIB     libnccl-ncclbpf.so to use (default: $NCCLBPF_PLUGIN, else\n"
	    "                   ../lib next to this program)\n"
	    "\nCOMMAND's own --help passes through: ncclbpf run -- torchrun --help\n",
    .flags = CLI_F_HELP_BEFORE_OPERANDS, .run = cmd_run);
