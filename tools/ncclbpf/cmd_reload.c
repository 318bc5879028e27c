/* ncclbpf reload: hot-reloads the policy of every process on this host whose plugin watches
 * PATH (NCCLBPF_POLICY=PATH). With NEW, NEW is installed at PATH atomically (copied beside it,
 * then renamed over it); without NEW, PATH is touched so that the plugins reload it as it is.
 * Signal-free: the plugins' inotify watchers see the change. Each plugin verifies the new
 * bundle itself and keeps its running version if it rejects it (it logs why). `--check` (or
 * `--dry-run`) only verifies the bundle here, as the plugin would, and changes nothing: no file
 * is written or touched, no job is asked. Each process picks a file change up at its own moment,
 * so the ranks of a multi-rank job switch at different calls; a file reload of a bundle such a
 * job uses therefore warns. Reloading a whole multi-process job consistently (same call on every
 * rank) is the control plane's job: `ncclbpf reload --job [--dir D] BUNDLE` proposes
 * BUNDLE to every communicator registered in the control-plane directory D (the plugins' shared
 * NCCLBPF_CP_DIR; default $NCCLBPF_CP_DIR, else /dev/shm/ncclbpf-$UID/default, what `ncclbpf run`
 * uses) and reports per rank the seq where it became active, or why not
 * (docs/control-plane.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle_check.h"
#include "cli.h"
#include "inspect_client.h"
#include "install_file.h"
#include "ncclbpf/control.h"
#include "ncclbpf/envvars.h"
#include "ncclbpf/proc_registry.h"
#include "ncclbpf/runtime.h"

#define DEFAULT_TIMEOUT_S 10 /* --job: how long to wait for every rank */

static int install(const char *from, const char *to)
{
	char err[4400];
	if (install_file(from, to, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "ncclbpf reload: %s\n", err);
	return -1;
}

/* Whether st is the file a record's bundle names (absolute paths only: a relative one is the
 * process's, whose working directory we do not know). */
static int same_file(const char *bundle, const struct stat *st)
{
	struct stat b;
	return bundle[0] == '/' && stat(bundle, &b) == 0 && b.st_dev == st->st_dev &&
	       b.st_ino == st->st_ino;
}

static void count_ranks(const struct insp_rec *r, void *arg)
{
	uint64_t *ranks = arg;
	if (!strcmp(r->word, "comm") && insp_getu(r, "n_ranks") > *ranks)
		*ranks = insp_getu(r, "n_ranks");
}

/* A file reload reaches each process when its watcher sees the change, and each communicator
 * at its next call after that: the ranks of one job switch at different calls, and a tuner
 * decision that differs between ranks can hang a collective. Warns when the processes that
 * watch path (registered for live inspection) form a multi-rank job: more than one of them, or
 * one with a communicator of several ranks. Best effort: says nothing when it cannot tell. */
static void warn_multi_rank(const char *path)
{
	struct stat st;
	char dbuf[4096], pids[200] = "", why[1024];
	struct insp_proc *v;
	if (stat(path, &st) != 0)
		return;
	int n = insp_list(insp_default_dir(dbuf, sizeof(dbuf)), &v, why, sizeof(why));
	if (n <= 0)
		return;
	int users = 0;
	uint64_t ranks = 0;
	for (int i = 0; i < n; i++) {
		if (insp_stale(&v[i]) || !same_file(v[i].bundle, &st))
			continue;
		size_t len = strlen(pids);
		snprintf(pids + len, sizeof(pids) - len, "%s%d", users++ ? ", " : "", v[i].pid);
		struct insp_conn c;
		char err[300];
		if (strcmp(v[i].host, insp_hostname()) || insp_connect(&v[i], &c) != 0)
			continue;
		insp_request(&c, "stat", count_ranks, &ranks, err, sizeof(err));
		insp_close(&c);
	}
	free(v);
	if (users > 1 || ranks > 1)
		cli_warn("warning: %s is the policy of a multi-rank job (process%s %s%s); each "
			 "process reloads it at its own moment, so ranks may switch at different "
			 "calls and decide differently meanwhile; `ncclbpf reload --job BUNDLE` "
			 "switches every rank at the same call",
			 path, users > 1 ? "es" : "", pids,
			 ranks > 1 ? ", communicators of several ranks" : "");
}

static int reload_job(const char *dir, const char *bundle, int timeout_s, const char *comm)
{
	char def[512], user[448];
	if (!dir) {
		dir = ncclbpf_env_str("NCCLBPF_CP_DIR");
		if (!dir) {
			snprintf(def, sizeof(def), "%s/default",
				 ncclbpf_rt_user_dir(user, sizeof(user)));
			dir = def;
		}
	}
	struct ncclbpf_cp_opts o = {.sz = sizeof(o),
				    .timeout_ms = timeout_s * 1000,
				    .done_timeout_ms = timeout_s * 1000,
				    .comm = comm};
	struct ncclbpf_cp_report rep = {.sz = sizeof(rep)};
	int e = ncclbpf_cp_reload(dir, bundle, &o, &rep);
	if (e < 0) {
		fprintf(stderr, "ncclbpf reload: %s\n", rep.msg);
		ncclbpf_cp_report_free(&rep);
		return 1;
	}
	ncclbpf_cp_report_print(&rep, stdout);
	printf("%s in %.1f ms (bundle %s, hash %016llx)\n", rep.msg, rep.total_ns / 1e6, bundle,
	       (unsigned long long)rep.hash);
	ncclbpf_cp_report_free(&rep);
	return e ? 1 : 0;
}

static int cmd_reload(int argc, char **argv)
{
	const char *path = NULL, *next = NULL, *dir = NULL, *comm = NULL, *timeout = NULL;
	int check = 0, job = 0, k;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check") || !strcmp(argv[i], "--dry-run"))
			check = 1;
		else if (!strcmp(argv[i], "--job"))
			job = 1;
		else if ((k = cli_opt(argc, argv, &i, "--dir", &dir)) ||
			 (k = cli_opt(argc, argv, &i, "--comm", &comm)) ||
			 (k = cli_opt(argc, argv, &i, "--timeout", &timeout))) {
			if (k < 0)
				return CLI_USAGE;
		} else if (argv[i][0] == '-')
			return cli_usage_error("unknown option '%s'", argv[i]);
		else if (!path)
			path = argv[i];
		else if (!next)
			next = argv[i];
		else
			return cli_usage_error("unexpected argument '%s'", argv[i]);
	}
	unsigned long long timeout_s = DEFAULT_TIMEOUT_S;
	if (timeout && cli_parse_u64("--timeout", timeout, 1, 3600, &timeout_s))
		return CLI_USAGE;
	if (!path)
		return cli_usage_error("no PATH given");
	if (job && next)
		return cli_usage_error("--job takes one BUNDLE, not two paths");
	if ((dir || comm) && !job)
		return cli_usage_error("--dir and --comm go with --job");
	if (check) {
		/* Load, verify and compile in this process exactly as the plugin would. */
		const char *b = next ? next : path;
		struct ncclbpf_reload_report r;
		if (bundle_check(b, &r))
			return cli_fail("%s rejected: %s", b, r.msg);
		printf("%s verified: %u program%s, %u map%s; parse %.1f us, verify %.1f us, load "
		       "%.1f us, JIT %.1f us; nothing changed (--check)\n",
		       b, r.n_progs, r.n_progs == 1 ? "" : "s", r.n_maps, r.n_maps == 1 ? "" : "s",
		       r.parse_ns / 1e3, r.verify_ns / 1e3, r.load_ns / 1e3, r.jit_ns / 1e3);
		return CLI_OK;
	}
	if (job)
		return reload_job(dir, path, (int)timeout_s, comm);
	/* Every watching plugin would refuse a bundle that does not load and keep its policy:
	 * say so here and change nothing. */
	struct ncclbpf_reload_report r;
	const char *b = next ? next : path;
	if (bundle_check(b, &r))
		return cli_fail("%s would not load, %s: %s", b,
				next ? "nothing installed" : "not touched", r.msg);
	warn_multi_rank(path);
	if (next) {
		if (install(next, path))
			return 1;
		printf("installed %s at %s; watching plugins reload it\n", next, path);
		return 0;
	}
	/* Touch: an attribute change is enough for the watchers (IN_ATTRIB). */
	if (utimensat(AT_FDCWD, path, NULL, 0) != 0)
		return cli_fail("%s: %s", path, strerror(errno));
	printf("touched %s; watching plugins reload it\n", path);
	return 0;
}

NCCLBPF_COMMAND(
    reload_cmd, .name = "reload",
    .args = "[--check] PATH [NEW] | --job [--dir D] [--comm ID] [--timeout SEC] [--check] "
	    "BUNDLE",
    .summary = "hot-reload the plugins watching PATH, or a whole job consistently (--job)",
    .help = "  PATH [NEW]     install NEW at PATH atomically (without NEW: touch PATH); every\n"
	    "                 plugin whose NCCLBPF_POLICY is PATH reloads it and verifies it;\n"
	    "                 each process at its own moment (a multi-rank job: use --job);\n"
	    "                 NEW (or PATH) is verified here first: one that would not load\n"
	    "                 is refused and nothing changes\n"
	    "  --check        (or --dry-run) only verify NEW (or PATH, or BUNDLE) here, as the\n"
	    "                 plugin would; nothing is installed, touched or proposed\n"
	    "  --job          propose BUNDLE to every rank registered in the control-plane\n"
	    "                 directory; all switch at the same call (docs/control-plane.md)\n"
	    "  --dir D        control-plane directory (default $NCCLBPF_CP_DIR, else\n"
	    "                 /dev/shm/ncclbpf-$UID/default, what `ncclbpf run` uses)\n"
	    "  --comm ID      only the communicator with this id (16 hex digits)\n"
	    "  --timeout SEC  how long to wait for every rank (default " CLI_STR(
		DEFAULT_TIMEOUT_S) ")\n",
    .run = cmd_reload);
