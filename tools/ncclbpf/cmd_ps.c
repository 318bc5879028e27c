/* ncclbpf ps: the processes running the plugin, one line each, from the records they keep
 * under <dir>/procs (NCCLBPF_CP_DIR, else /dev/shm/ncclbpf-<uid>; job directories one level
 * below are searched too) and what each one's inspection server says right now. A record whose
 * process is gone (no such pid on this host, or nobody listening on its socket) is stale: it
 * is removed and not shown. Processes on other hosts (shared control-plane directory) are shown
 * from their records alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "inspect_client.h"

struct live {
	char comms[24], calls[24], version[24], engine[16], bundle[1024], last[40];
};

static void on_info(const struct insp_rec *r, void *arg)
{
	struct live *l = arg;
	if (strcmp(r->word, "process"))
		return;
	const char *b = insp_get(r, "bundle");
	const char *slash = b ? strrchr(b, '/') : NULL;
	snprintf(l->bundle, sizeof(l->bundle), "%s", slash ? slash + 1 : b ? b : "-");
	snprintf(l->comms, sizeof(l->comms), "%llu", (unsigned long long)insp_getu(r, "comms"));
	snprintf(l->calls, sizeof(l->calls), "%llu", (unsigned long long)insp_getu(r, "calls"));
	uint64_t v = insp_getu(r, "version");
	snprintf(l->version, sizeof(l->version), v ? "v%llu" : "-", (unsigned long long)v);
	snprintf(l->engine, sizeof(l->engine), "%s",
		 insp_get(r, "engine") ? insp_get(r, "engine") : "-");
	uint64_t t = insp_getu(r, "last_reload_ns");
	if (t) {
		time_t s = (time_t)(t / 1000000000ull);
		struct tm tm;
		gmtime_r(&s, &tm);
		char hms[16];
		strftime(hms, sizeof(hms), "%H:%M:%SZ", &tm);
		snprintf(l->last, sizeof(l->last), "%s %s", hms,
			 insp_get(r, "last_result") ? insp_get(r, "last_result") : "?");
	}
}

static void remove_stale(const struct insp_proc *p)
{
	/* Best effort: another ps may be removing it at the same time. */
	unlink(p->sock);
	unlink(p->rec_path);
}

static int cmd_ps(int argc, char **argv)
{
	char dbuf[4096];
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		int k = insp_parse_dir(argc, argv, &i, &dir);
		if (k == 1)
			continue;
		return k < 0 ? cli_usage_error("--dir needs a value")
			     : cli_usage_error("unexpected argument '%s'", argv[i]);
	}
	if (!dir)
		dir = insp_default_dir(dbuf, sizeof(dbuf));
	struct insp_proc *v;
	int n = insp_list(dir, &v);
	if (n < 0) {
		if (errno == ENOENT) {
			printf("no process runs the plugin (nothing under %s)\n", dir);
			return 0;
		}
		return cli_fail("%s: %s", dir, strerror(errno));
	}
	printf("%-8s %-16s %-12s %-5s %-5s %-24s %-4s %-6s %-10s %s\n", "PID", "HOST", "JOB",
	       "RANK", "COMMS", "BUNDLE", "VER", "ENGINE", "CALLS", "LAST RELOAD");
	int shown = 0, stale = 0;
	for (int i = 0; i < n; i++) {
		const struct insp_proc *p = &v[i];
		int local = !strcmp(p->host, insp_hostname());
		if (insp_stale(p)) {
			remove_stale(p);
			stale++;
			continue;
		}
		struct live l = {"-", "-", "-", "-", "", "-"};
		const char *slash = strrchr(p->bundle, '/');
		snprintf(l.bundle, sizeof(l.bundle), "%s", slash ? slash + 1 : p->bundle);
		if (local) {
			struct insp_conn c;
			char err[300];
			if (insp_connect(p, &c) != 0) {
				if (errno == ECONNREFUSED || errno == ENOENT) {
					/* The pid lives on, but not the server: reused pid. */
					remove_stale(p);
					stale++;
					continue;
				}
				snprintf(l.last, sizeof(l.last), "(%s)",
					 c.msg[0] ? "refused" : strerror(errno));
			} else {
				if (insp_request(&c, "info", on_info, &l, err, sizeof(err)) != 0)
					snprintf(l.last, sizeof(l.last), "(%.36s)", err);
				insp_close(&c);
			}
		} else {
			snprintf(l.last, sizeof(l.last), "(remote host)");
		}
		printf("%-8d %-16s %-12s %-5s %-5s %-24s %-4s %-6s %-10s %s\n", p->pid, p->host,
		       p->job, p->rank, l.comms, l.bundle, l.version, l.engine, l.calls, l.last);
		shown++;
	}
	free(v);
	if (!shown)
		printf("(no live process under %s)\n", dir);
	if (stale)
		fprintf(stderr, "ncclbpf ps: removed %d stale record%s\n", stale,
			stale == 1 ? "" : "s");
	return 0;
}

NCCLBPF_COMMAND(ps_cmd, .name = "ps", .args = "[--dir DIR]",
		.summary = "list the processes running the plugin (live inspection)",
		.help = INSP_DIR_HELP, .run = cmd_ps);
