/* ncclbpf reload: hot-reloads the policy of every process on this host whose plugin watches
 * PATH (NCCLBPF_POLICY=PATH). With NEW, NEW is installed at PATH atomically (copied beside it,
 * then renamed over it); without NEW, PATH is touched so that the plugins reload it as it is.
 * Signal-free: the plugins' inotify watchers see the change. Each plugin verifies the new
 * bundle itself and keeps its running version if it rejects it (it logs why). This process
 * does not verify on their behalf; `--check` verifies NEW here first and refuses to install a
 * bundle that would be rejected. Reloading a whole multi-process job consistently (same call
 * on every rank) is the control plane's job: `ncclbpf reload --job [--dir D] BUNDLE` proposes
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

#include "cli.h"
#include "install_file.h"
#include "ncclbpf/control.h"
#include "ncclbpf/runtime.h"

static int install(const char *from, const char *to)
{
	char err[4400];
	if (install_file(from, to, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "ncclbpf reload: %s\n", err);
	return -1;
}

static int reload_job(const char *dir, const char *bundle, int timeout_s, const char *comm)
{
	char def[512];
	if (!dir) {
		dir = getenv("NCCLBPF_CP_DIR");
		if (!dir || !*dir) {
			snprintf(def, sizeof(def), "/dev/shm/ncclbpf-%u/default",
				 (unsigned)getuid());
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
	const char *path = NULL, *next = NULL, *dir = NULL, *comm = NULL;
	int check = 0, job = 0, timeout_s = 10;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check"))
			check = 1;
		else if (!strcmp(argv[i], "--job"))
			job = 1;
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--comm") && i + 1 < argc)
			comm = argv[++i];
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			timeout_s = atoi(argv[++i]);
		else if (!path)
			path = argv[i];
		else if (!next)
			next = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path || (job && next) || timeout_s <= 0 || ((dir || comm) && !job)) {
		fprintf(stderr, "usage: ncclbpf reload [--check] PATH [NEW-BUNDLE]\n"
				"       ncclbpf reload --job [--dir D] [--comm ID] [--timeout SEC] "
				"[--check] BUNDLE\n");
		return 2;
	}
	if (check) {
		/* Load, verify and compile in this process exactly as the plugin would. */
		setenv("NCCLBPF_WATCH", "0", 1);
		unsetenv("NCCLBPF_POLICY");
		unsetenv("NCCLBPF_TRACE");
		struct ncclbpf_reload_report r = {.sz = sizeof(r)};
		int e = ncclbpf_rt_reload(next ? next : path, &r);
		if (e) {
			fprintf(stderr, "ncclbpf reload: %s rejected: %s\n", next ? next : path,
				r.msg);
			return 1;
		}
		printf(
		    "%s verified: %u programs, %u maps; parse %.1f us, verify %.1f us, load %.1f "
		    "us, JIT %.1f us\n",
		    next ? next : path, r.n_progs, r.n_maps, r.parse_ns / 1e3, r.verify_ns / 1e3,
		    r.load_ns / 1e3, r.jit_ns / 1e3);
		ncclbpf_rt_unload();
	}
	if (job)
		return reload_job(dir, path, timeout_s, comm);
	if (next) {
		if (install(next, path))
			return 1;
		printf("installed %s at %s; watching plugins reload it\n", next, path);
		return 0;
	}
	/* Touch: an attribute change is enough for the watchers (IN_ATTRIB). */
	if (utimensat(AT_FDCWD, path, NULL, 0) != 0) {
		fprintf(stderr, "ncclbpf reload: %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("touched %s; watching plugins reload it\n", path);
	return 0;
}

NCCLBPF_COMMAND(reload_cmd, .name = "reload", .args = "[--check] PATH [NEW] | --job BUNDLE",
		.summary = "hot-reload plugins watching PATH, or a whole job (--job)",
		.run = cmd_reload);
