/* ncclbpf ps: the processes running the plugin, one line each, from the records they keep
 * under <dir>/procs (NCCLBPF_CP_DIR, else /dev/shm/ncclbpf-<uid>; job directories one level
 * below are searched too) and what each one's inspection server says right now. A record whose
 * process is gone (no such pid on this host, or nobody listening on its socket) is stale: it
 * is not shown, and it is removed with its socket when both are ours (never a path a record
 * names; inspect_client.c). A directory the plugin would not trust is refused. Processes on other
 * hosts (shared control-plane directory) are shown from their records alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_json.h"
#include "inspect_client.h"

/* What the process's server said ("info"); answered: it did. */
struct live {
	int answered;
	uint64_t comms, calls, version, last_ns;
	char engine[16], result[16], path[1024];
	char bundle[1024], last[40]; /* for the table: path's file name, the last reload's text */
};

static void on_info(const struct insp_rec *r, void *arg)
{
	struct live *l = arg;
	if (strcmp(r->word, "process"))
		return;
	const char *b = insp_get(r, "bundle");
	const char *slash = b ? strrchr(b, '/') : NULL;
	l->answered = 1;
	l->comms = insp_getu(r, "comms");
	l->calls = insp_getu(r, "calls");
	l->version = insp_getu(r, "version");
	l->last_ns = insp_getu(r, "last_reload_ns");
	snprintf(l->result, sizeof(l->result), "%s",
		 insp_get(r, "last_result") ? insp_get(r, "last_result") : "-");
	snprintf(l->path, sizeof(l->path), "%s", b ? b : "-");
	snprintf(l->bundle, sizeof(l->bundle), "%s", slash ? slash + 1 : b ? b : "-");
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

/* One process as a JSON object (docs/cli-json.md). */
static void json_proc(struct json *j, const struct insp_proc *p, const struct live *l,
		      const char *state)
{
	json_obj(j);
	json_ki64(j, "pid", p->pid);
	json_kstr(j, "host", p->host);
	json_kstr(j, "job", p->job);
	json_kstr(j, "rank", p->rank);
	json_kstr(j, "bundle", l->answered ? l->path : p->bundle);
	json_kstr(j, "state", state);
	if (l->answered) {
		json_ku64(j, "comms", l->comms);
		json_ku64(j, "calls", l->calls);
		json_ku64(j, "version", l->version);
		json_kstr(j, "engine", l->engine);
		json_ku64(j, "last_reload_ns", l->last_ns);
		json_kstr(j, "last_result", l->result);
	}
	json_end(j);
}

/* One process as a table row ("-" for what its server did not say). */
static void print_row(const struct insp_proc *p, const struct live *l)
{
	char comms[24] = "-", calls[24] = "-", version[24] = "-";
	if (l->answered) {
		snprintf(comms, sizeof(comms), "%llu", (unsigned long long)l->comms);
		snprintf(calls, sizeof(calls), "%llu", (unsigned long long)l->calls);
		if (l->version)
			snprintf(version, sizeof(version), "v%llu", (unsigned long long)l->version);
	}
	printf("%-8d %-16s %-12s %-5s %-5s %-24s %-4s %-6s %-10s %s\n", p->pid, p->host, p->job,
	       p->rank, comms, l->bundle, version, l->engine, calls, l->last);
}

static int cmd_ps(int argc, char **argv)
{
	char dbuf[4096];
	const char *dir = NULL;
	int json = 0;
	struct json j;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
			continue;
		}
		int k = cli_dir_opt(argc, argv, &i, &dir);
		if (k == 1)
			continue;
		return k < 0 ? CLI_USAGE : cli_usage_error("unexpected argument '%s'", argv[i]);
	}
	if (!dir)
		dir = insp_default_dir(dbuf, sizeof(dbuf));
	struct insp_proc *v;
	char why[1024];
	int n = insp_list(dir, &v, why, sizeof(why));
	if (n < 0 && errno != ENOENT)
		return cli_fail("%s", why);
	if (json) {
		json_init(&j, stdout);
		json_obj(&j);
		json_kstr(&j, "dir", dir);
		json_key(&j, "processes");
		json_arr(&j);
	} else if (n < 0) {
		printf("no process runs the plugin (nothing under %s)\n", dir);
		return 0;
	} else {
		printf("%-8s %-16s %-12s %-5s %-5s %-24s %-4s %-6s %-10s %s\n", "PID", "HOST",
		       "JOB", "RANK", "COMMS", "BUNDLE", "VER", "ENGINE", "CALLS", "LAST RELOAD");
	}
	int shown = 0, stale = 0;
	for (int i = 0; i < n; i++) {
		const struct insp_proc *p = &v[i];
		int local = !strcmp(p->host, insp_hostname());
		if (insp_stale(p)) {
			stale += insp_remove_stale(p) == 0;
			continue;
		}
		struct live l = {.engine = "-", .last = "-"};
		const char *state = "live";
		const char *slash = strrchr(p->bundle, '/');
		snprintf(l.bundle, sizeof(l.bundle), "%s", slash ? slash + 1 : p->bundle);
		if (local) {
			struct insp_conn c;
			char err[300];
			if (insp_connect(p, &c) != 0) {
				if (errno == ECONNREFUSED || errno == ENOENT) {
					/* The pid lives on, but not the server: reused pid. */
					stale += insp_remove_stale(p) == 0;
					continue;
				}
				snprintf(l.last, sizeof(l.last), "(%s)",
					 c.msg[0] ? "refused" : strerror(errno));
				state = c.msg[0] ? "refused" : "unreachable";
			} else {
				if (insp_request(&c, "info", on_info, &l, err, sizeof(err)) != 0) {
					snprintf(l.last, sizeof(l.last), "(%.36s)", err);
					state = "error";
				}
				insp_close(&c);
			}
		} else {
			snprintf(l.last, sizeof(l.last), "(remote host)");
			state = "remote";
		}
		if (json)
			json_proc(&j, p, &l, state);
		else
			print_row(p, &l);
		shown++;
	}
	if (n > 0)
		free(v);
	if (json) {
		json_end(&j);
		json_ku64(&j, "stale_removed", (uint64_t)stale);
		json_end(&j);
	} else if (!shown) {
		printf("(no live process under %s)\n", dir);
	}
	if (stale)
		fprintf(stderr, "ncclbpf ps: removed %d stale record%s\n", stale,
			stale == 1 ? "" : "s");
	return 0;
}

NCCLBPF_COMMAND(ps_cmd, .name = "ps", .args = "[--dir DIR] [--json]",
		.summary = "list the processes running the plugin (live inspection)",
		.help = INSP_DIR_HELP "  --json      one JSON object (docs/cli-json.md)\n",
		.run = cmd_ps);
