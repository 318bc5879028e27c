/* ncclbpf stat PID: what a process running the plugin is doing, read live from its inspection
 * server: per-communicator hook call counts and decision histograms (the cell NCCL picks after
 * each applied decision, the channel counts set), the active policy with its verifier and JIT
 * statistics, the last reloads, and the NCCL settings the env plugin served. --json prints the
 * same records as one JSON object (singletons as objects, the rest as arrays). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_json.h"
#include "inspect_client.h"

static const char *get(const struct insp_rec *r, const char *k)
{
	const char *v = insp_get(r, k);
	return v ? v : "-";
}

static unsigned long long u(const struct insp_rec *r, const char *k)
{
	return (unsigned long long)insp_getu(r, k);
}

static const char *utc(uint64_t ns, char *buf, size_t len)
{
	time_t s = (time_t)(ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
	return buf;
}

static const struct insp_rec *first(const struct insp_recs *rs, const char *word)
{
	for (int i = 0; i < rs->n; i++)
		if (!strcmp(rs->r[i].word, word))
			return &rs->r[i];
	return NULL;
}

static const char *const hook_stats[] = {"calls",     "runs",	 "applied",  "default",
					 "no_policy", "invalid", "bad_call", "channels_skipped",
					 NULL};
static const char *const chunk_stats[] = {"chunk_calls", "chunk_applied", "chunk_invalid", NULL};

static void print_counts(const struct insp_rec *r, const char *label, const char *const *names)
{
	printf("  %-8s", label);
	for (int i = 0; names[i]; i++)
		printf(" %s %llu%s", names[i], u(r, names[i]), names[i + 1] ? "," : "\n");
}

static void print_human(const struct insp_recs *rs)
{
	char t[40];
	const struct insp_rec *p = first(rs, "process");
	if (p)
		printf("process %s on %s: job %s, rank %s, uid %s, started %s\n", get(p, "pid"),
		       get(p, "host"), get(p, "job"), get(p, "rank"), get(p, "uid"),
		       utc(insp_getu(p, "start_ns"), t, sizeof(t)));
	const struct insp_rec *pol = first(rs, "policy");
	if (pol) {
		printf("policy v%s %s (%s): %s program%s, %s map%s (%s carried over); loaded in "
		       "parse %.1f us, verify %.1f us, load %.1f us, jit %.1f us\n",
		       get(pol, "version"), get(pol, "bundle"), get(pol, "engine"),
		       get(pol, "progs"), strcmp(get(pol, "progs"), "1") ? "s" : "",
		       get(pol, "maps"), strcmp(get(pol, "maps"), "1") ? "s" : "",
		       get(pol, "maps_kept"), u(pol, "parse_ns") / 1e3, u(pol, "verify_ns") / 1e3,
		       u(pol, "load_ns") / 1e3, u(pol, "jit_ns") / 1e3);
	} else {
		printf("policy: none active (NCCL's own tuning)\n");
	}
	for (int i = 0; i < rs->n; i++) {
		const struct insp_rec *r = &rs->r[i];
		if (strcmp(r->word, "prog"))
			continue;
		printf("  program %s (section %s): %s insns, verifier processed %s insns, peak %s "
		       "states, worst case %s insns per run, verified in %.1f us; ",
		       get(r, "name"), get(r, "section"), get(r, "insns"), get(r, "processed"),
		       get(r, "peak_states"), get(r, "worst_case_insns"), u(r, "verify_ns") / 1e3);
		if (!strcmp(get(r, "hook"), "-"))
			printf("attached to no hook");
		else if (!strcmp(get(r, "engine"), "jit"))
			printf("%s hook, JIT %s B of machine code", get(r, "hook"),
			       get(r, "code_size"));
		else
			printf("%s hook, interpreter", get(r, "hook"));
		if (insp_get(r, "runs"))
			printf("; ran %s times", get(r, "runs"));
		if (insp_get(r, "runs_coll_end"))
			printf(" (coll_start %s, kernel_ch %s, coll_end %s, proxy_op %s)",
			       get(r, "runs_coll_start"), get(r, "runs_kernel_ch"),
			       get(r, "runs_coll_end"), get(r, "runs_proxy_op"));
		unsigned long long every = u(r, "time_every");
		if (every == 1)
			printf("; duration_ns of every request");
		else if (every > 1)
			printf("; duration_ns of one request in %llu per connection (sampled)",
			       every);
		printf("\n");
	}
	const struct insp_rec *tot = first(rs, "totals");
	if (tot) {
		printf("communicators: %s live, %s created; reloads %s ok, %s failed; watching the "
		       "bundle: %s\n",
		       get(tot, "comms_live"), get(tot, "comms_total"), get(tot, "reloads_ok"),
		       get(tot, "reloads_failed"), u(tot, "watching") ? "yes" : "no");
		print_counts(tot, "all", hook_stats);
		print_counts(tot, "chunk", chunk_stats);
	}
	const struct insp_rec *net = first(rs, "net");
	if (net)
		printf("net completions: %s queued for SEC(\"net/complete\") (%s run by the drain "
		       "thread%s, %s catch-ups of a full queue; inline: %s while a queue was being "
		       "emptied, %s from another thread), %s pending, %s queues\n",
		       get(net, "queued"), get(net, "drained"),
		       u(net, "drain_thread") ? "" : " (not running)", get(net, "catch_up"),
		       get(net, "inline_full"), get(net, "other_thread"), get(net, "pending"),
		       get(net, "queues"));
	for (int i = 0; i < rs->n; i++) {
		const struct insp_rec *c = &rs->r[i];
		if (strcmp(c->word, "comm"))
			continue;
		const char *serial = get(c, "serial");
		printf("communicator %s: id %s, %s ranks, %s nodes, tuner v%s", serial,
		       get(c, "id"), get(c, "n_ranks"), get(c, "n_nodes"), get(c, "api"));
		if (insp_get(c, "cp_g"))
			printf(", control plane g=%s (bundle hash %s)", get(c, "cp_g"),
			       get(c, "cp_hash"));
		printf("\n");
		print_counts(c, "tuner", hook_stats);
		print_counts(c, "chunk", chunk_stats);
		int any = 0;
		for (int k = 0; k < rs->n; k++) {
			const struct insp_rec *h = &rs->r[k];
			if (strcmp(h->word, "cell") || strcmp(get(h, "comm"), serial))
				continue;
			printf("%s%s/%s %s", any ? ", " : "  applied: ", get(h, "algo"),
			       get(h, "proto"), get(h, "count"));
			any = 1;
		}
		if (any)
			printf("\n");
		any = 0;
		for (int k = 0; k < rs->n; k++) {
			const struct insp_rec *h = &rs->r[k];
			if (strcmp(h->word, "channels") || strcmp(get(h, "comm"), serial))
				continue;
			if (u(h, "n"))
				printf("%s%s x %s", any ? ", " : "  channels: ", get(h, "n"),
				       get(h, "count"));
			else
				printf("%sNCCL's x %s",
				       any ? ", " : "  channels: ", get(h, "count"));
			any = 1;
		}
		if (any)
			printf("\n");
	}
	int nr = 0;
	for (int i = 0; i < rs->n; i++)
		nr += !strcmp(rs->r[i].word, "reload");
	if (nr)
		printf("reloads (last %d):\n", nr);
	for (int i = 0; i < rs->n; i++) {
		const struct insp_rec *r = &rs->r[i];
		if (strcmp(r->word, "reload"))
			continue;
		printf("  #%s %s %-6s v%s %8.1f us  %s%s%s\n", get(r, "n"),
		       utc(insp_getu(r, "time_ns"), t, sizeof(t)), get(r, "result"),
		       get(r, "version"), u(r, "total_ns") / 1e3, get(r, "bundle"),
		       strcmp(get(r, "result"), "ok") ? ": " : "",
		       strcmp(get(r, "result"), "ok") ? get(r, "msg") : "");
	}
	int ne = 0;
	for (int i = 0; i < rs->n; i++) {
		const struct insp_rec *r = &rs->r[i];
		if (strcmp(r->word, "env"))
			continue;
		if (!ne++)
			printf("env (NCCL settings served by the plugin):\n");
		printf("  %s=%s (%s)\n", get(r, "name"), get(r, "value"), get(r, "source"));
	}
	if (!ne)
		printf("env: no settings reported (env plugin not in use)\n");
}

static int is_number(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 19 || (s[0] == '0' && n > 1))
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((s[i] < '0' || s[i] > '9') && !(i == 0 && s[i] == '-' && n > 1))
			return 0;
	return 1;
}

/* Identifiers that look like numbers stay strings (a rank "3", a job "1234"). */
static int always_string(const char *key)
{
	static const char *const keys[] = {"host",   "job", "rank",  "local_rank", "id", "name",
					   "bundle", "msg", "value", "source",	   NULL};
	for (int i = 0; keys[i]; i++)
		if (!strcmp(keys[i], key))
			return 1;
	return 0;
}

static void json_rec(struct json *j, const struct insp_rec *r)
{
	json_obj(j);
	for (int k = 0; k < r->n; k++) {
		json_key(j, r->key[k]);
		if (!always_string(r->key[k]) && is_number(r->val[k]))
			json_raw(j, r->val[k]);
		else
			json_str(j, r->val[k]);
	}
	json_end(j);
}

static void print_json(const struct insp_recs *rs)
{
	static const char *const single[] = {"process", "totals", "net", "policy"};
	static const char *const lists[][2] = {{"comm", "comms"},	 {"cell", "cells"},
					       {"channels", "channels"}, {"prog", "progs"},
					       {"reload", "reloads"},	 {"env", "env"}};
	struct json j;
	json_init(&j, stdout);
	json_obj(&j);
	for (size_t i = 0; i < sizeof(single) / sizeof(single[0]); i++) {
		const struct insp_rec *r = first(rs, single[i]);
		json_key(&j, single[i]);
		if (r)
			json_rec(&j, r);
		else
			json_null(&j);
	}
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		json_key(&j, lists[i][1]);
		json_arr(&j);
		for (int k = 0; k < rs->n; k++)
			if (!strcmp(rs->r[k].word, lists[i][0]))
				json_rec(&j, &rs->r[k]);
		json_end(&j);
	}
	json_end(&j);
}

static int cmd_stat(int argc, char **argv)
{
	const char *dir = NULL;
	int json = 0, pid = 0;
	for (int i = 1; i < argc; i++) {
		int k = cli_dir_opt(argc, argv, &i, &dir);
		if (k < 0)
			return CLI_USAGE;
		if (k)
			continue;
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] == '-')
			return cli_usage_error("unknown option '%s'", argv[i]);
		else if (pid)
			return cli_usage_error("unexpected argument '%s'", argv[i]);
		else if ((pid = insp_parse_pid(argv[i])) <= 0)
			return cli_usage_error("PID '%s' is not a process id", argv[i]);
	}
	if (!pid)
		return cli_usage_error("no PID given");
	struct insp_proc p;
	struct insp_conn c;
	if (insp_attach(dir, pid, &p, &c, "ncclbpf stat") != 0)
		return CLI_FAIL;
	struct insp_recs rs;
	char err[600];
	int ret = insp_collect(&c, "stat", &rs, err, sizeof(err));
	insp_close(&c);
	if (ret != 0) {
		insp_recs_free(&rs);
		return cli_fail("process %d: %s", pid, err);
	}
	if (json)
		print_json(&rs);
	else
		print_human(&rs);
	insp_recs_free(&rs);
	return 0;
}

NCCLBPF_COMMAND(stat_cmd, .name = "stat", .args = "[--dir DIR] [--json] PID",
		.summary = "live statistics of a process running the plugin",
		.help = INSP_DIR_HELP "  --json      one JSON object (docs/cli-json.md)\n",
		.run = cmd_stat);
