/* ncclbpf run [--policy BUNDLE] [--dir D] [--job NAME] [--plugin LIB] -- COMMAND...
 * Runs COMMAND (typically torchrun or mpirun) with the plugin configured: NCCL_TUNER_PLUGIN,
 * NCCL_ENV_PLUGIN and NCCL_PROFILER_PLUGIN name the plugin library, NCCLBPF_POLICY the bundle,
 * NCCLBPF_CP_DIR the control-plane directory (default /dev/shm/ncclbpf-$UID/NAME, created
 * 0700; NAME defaults to "default") and NCCLBPF_JOB the job name. The environment is inherited by
 * every rank the command starts on this host; `ncclbpf reload --job --dir D` then changes the
 * policy of the whole job consistently (docs/control-plane.md). A policy that would not load (it
 * fails verification, or is not a trusted regular file) is refused before the command starts.
 * An option left out takes the value its variable already has in the environment. */
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
#include "ncclbpf/envvars.h"
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
	const char *policy = NULL, *dir = NULL, *job = NULL, *plugin = NULL;
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
	/* What the environment already says stands where no option overrides it: a job script that
	 * exports NCCLBPF_POLICY, or a shared NCCLBPF_CP_DIR for a job over several hosts, keeps
	 * them, checked as the options are. (The policy used to be inherited unchecked while the
	 * banner said "none", and the directory was replaced by a host-local one.) */
	int job_from_env = !job && ncclbpf_env_str("NCCLBPF_JOB");
	if (!policy)
		policy = ncclbpf_env_str("NCCLBPF_POLICY");
	if (!dir)
		dir = ncclbpf_env_str("NCCLBPF_CP_DIR");
	if (!job)
		job = job_from_env ? ncclbpf_env_str("NCCLBPF_JOB") : "default";
	if (!*job || strchr(job, '/') || job[0] == '.')
		return cli_usage_error("%s '%s': a name without '/' that does not start with '.'",
				       job_from_env ? "NCCLBPF_JOB" : "--job", job);
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
	if (policy && !strncmp(policy, "native:", 7))
		snprintf(pol, sizeof(pol), "%s", policy);
	else if (policy && !realpath(policy, pol))
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
	static const char *const nccl_plugins[] = {"NCCL_TUNER_PLUGIN", "NCCL_ENV_PLUGIN",
						   "NCCL_PROFILER_PLUGIN"};
	for (size_t k = 0; k < sizeof(nccl_plugins) / sizeof(nccl_plugins[0]); k++) {
		const char *was = ncclbpf_env_raw(nccl_plugins[k]);
		if (was && *was && strcmp(was, lib))
			cli_warn("%s was %s; the job gets %s instead", nccl_plugins[k], was, lib);
		setenv(nccl_plugins[k], lib, 1);
	}
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
    .help = "  --policy BUNDLE  the policy every rank loads (default: $NCCLBPF_POLICY, else\n"
	    "                   none: NCCL decides until `ncclbpf reload --job`)\n"
	    "  --dir D          control-plane directory (default: $NCCLBPF_CP_DIR, else\n"
	    "                   /dev/shm/ncclbpf-$UID/NAME, created 0700)\n"
	    "  --job NAME       job name (default: $NCCLBPF_JOB, else \"default\")\n"
	    "  --plugin LIB     libnccl-ncclbpf.so to use (default: $NCCLBPF_PLUGIN, else\n"
	    "                   ../lib next to this program)\n"
	    "\nThe command gets them as NCCLBPF_POLICY, NCCLBPF_CP_DIR, NCCLBPF_JOB, and LIB as\n"
	    "NCCL_TUNER_PLUGIN, NCCL_ENV_PLUGIN and NCCL_PROFILER_PLUGIN (a different value\n"
	    "already set is replaced, with a note). COMMAND's own --help passes through:\n"
	    "ncclbpf run -- torchrun --help\n",
    .flags = CLI_F_HELP_BEFORE_OPERANDS, .run = cmd_run);
