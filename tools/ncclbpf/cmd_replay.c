/* ncclbpf replay: feeds a recorded trace (NCCLBPF_TRACE) through the real plugin library, loaded
 * as NCCL loads it: tuner calls, with per collective and size what the plugin decides now and
 * how that differs from what NCCL got when the trace was recorded, profiler events
 * (replay_prof.h) and net events (replay_net.h); then the policy's maps as the replay left them
 * (replay_maps.h). Optionally hot-reloads another bundle in the middle of the replay (through the
 * plugin's own file watcher, as an operator would), so both versions' decisions show. --json prints
 * all of it as one document (docs/cli-json.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ebpf/file.h"
#include "bundle_check.h"
#include "cli.h"
#include "install_file.h"
#include "cli_json.h"
#include "ncclbpf/trace.h"
#include "plugin_host.h"
#include "replay_maps.h"
#include "replay_net.h"
#include "replay_prof.h"

struct group {
	int phase;
	uint32_t coll;
	uint64_t bytes;
	int ra, rp, rc; /* recorded */
	int na, np, nc; /* replayed */
	uint64_t count;
};

struct ctxmap {
	uint32_t pid, ctx;
	void *plugin_ctx;
};

static struct group *groups;
static size_t n_groups, cap_groups;

static void add_group(const struct group *g)
{
	for (size_t i = n_groups; i-- > 0;) {
		struct group *o = &groups[i];
		if (o->phase == g->phase && o->coll == g->coll && o->bytes == g->bytes &&
		    o->ra == g->ra && o->rp == g->rp && o->rc == g->rc && o->na == g->na &&
		    o->np == g->np && o->nc == g->nc) {
			o->count++;
			return;
		}
	}
	if (n_groups == cap_groups) {
		cap_groups = cap_groups ? cap_groups * 2 : 256;
		groups = realloc(groups, cap_groups * sizeof(*groups));
		if (!groups) {
			perror("ncclbpf replay");
			exit(1);
		}
	}
	groups[n_groups] = *g;
	groups[n_groups++].count = 1;
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->phase != y->phase)
		return x->phase - y->phase;
	if (x->coll != y->coll)
		return (int)x->coll - (int)y->coll;
	return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

/* Waits until the plugin logged the outcome of a reload after log line `since`. */
static int wait_reload(unsigned since, char *msg, size_t len)
{
	for (int i = 0; i < 1000; i++) {
		unsigned n = plugin_host_log_count();
		for (unsigned k = since; k < n; k++) {
			const char *l = plugin_host_log_line(k);
			if (strstr(l, "active as version") || strstr(l, "rejected")) {
				snprintf(msg, len, "%s", l);
				return strstr(l, "rejected") ? -1 : 0;
			}
		}
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
	snprintf(msg, len, "no reload reported within 5 s");
	return -1;
}

struct replay_counts {
	uint64_t calls, differ, chunk_calls, chunk_differ, orphans;
};

static void print_table(const struct replay_counts *n)
{
	printf("%-6s %-13s %10s %7s  %-22s    %-22s\n", "phase", "collective", "bytes", "calls",
	       "recorded (NCCL got)", "replayed");
	for (size_t i = 0; i < n_groups; i++) {
		const struct group *g = &groups[i];
		char b[32], rec[48], now[48];
		snprintf(rec, sizeof(rec), "%s/%s ch %d", plugin_host_algo_name(g->ra),
			 plugin_host_proto_name(g->rp), g->rc);
		snprintf(now, sizeof(now), "%s/%s ch %d", plugin_host_algo_name(g->na),
			 plugin_host_proto_name(g->np), g->nc);
		printf("%-6s %-13s %10s %7llu  %-22s -> %-22s%s\n", g->phase ? "after" : "before",
		       plugin_host_coll_name((int)g->coll),
		       plugin_host_bytes(g->bytes, b, sizeof(b)), (unsigned long long)g->count, rec,
		       now, strcmp(rec, now) ? "  changed" : "");
	}
	printf("%llu calls replayed, %llu decisions differ from the recorded ones",
	       (unsigned long long)n->calls, (unsigned long long)n->differ);
	if (n->chunk_calls)
		printf(", %llu of %llu chunk sizes differ", (unsigned long long)n->chunk_differ,
		       (unsigned long long)n->chunk_calls);
	if (n->orphans)
		printf(", %llu records without an init record skipped",
		       (unsigned long long)n->orphans);
	printf("\n");
}

static void json_decision(struct json *j, const char *key, int a, int p, int ch)
{
	json_key(j, key);
	json_obj(j);
	json_kstr(j, "algo", plugin_host_algo_name(a));
	json_kstr(j, "proto", plugin_host_proto_name(p));
	json_ki64(j, "channels", ch);
	json_end(j);
}

static void print_json(struct json *j, const struct replay_counts *n)
{
	json_key(j, "groups");
	json_arr(j);
	for (size_t i = 0; i < n_groups; i++) {
		const struct group *g = &groups[i];
		json_obj(j);
		json_kstr(j, "phase", g->phase ? "after" : "before");
		json_kstr(j, "collective", plugin_host_coll_name((int)g->coll));
		json_ku64(j, "bytes", g->bytes);
		json_ku64(j, "calls", g->count);
		json_decision(j, "recorded", g->ra, g->rp, g->rc);
		json_decision(j, "replayed", g->na, g->np, g->nc);
		json_kbool(j, "changed", g->na != g->ra || g->np != g->rp || g->nc != g->rc);
		json_end(j);
	}
	json_end(j);
	json_ku64(j, "calls", n->calls);
	json_ku64(j, "differ", n->differ);
	json_ku64(j, "chunk_calls", n->chunk_calls);
	json_ku64(j, "chunk_differ", n->chunk_differ);
	json_ku64(j, "orphans", n->orphans);
}

static void print_prof(const struct replay_prof_counts *c)
{
	printf("%llu profiler contexts: %llu collectives, %llu kernel channels, %llu proxy "
	       "operations replayed",
	       (unsigned long long)c->comms, (unsigned long long)c->colls,
	       (unsigned long long)c->channels, (unsigned long long)c->proxies);
	if (c->masked)
		printf(", %llu events the policy did not ask for", (unsigned long long)c->masked);
	if (c->orphans)
		printf(", %llu records without a pinit record skipped",
		       (unsigned long long)c->orphans);
	printf("\n");
}

static void print_prof_json(struct json *j, const struct replay_prof_counts *c)
{
	json_key(j, "profiler");
	json_obj(j);
	json_ku64(j, "comms", c->comms);
	json_ku64(j, "collectives", c->colls);
	json_ku64(j, "channels", c->channels);
	json_ku64(j, "proxy_ops", c->proxies);
	json_ku64(j, "masked", c->masked);
	json_ku64(j, "orphans", c->orphans);
	json_end(j);
}

static int cmd_replay(int argc, char **argv)
{
	const char *trace = NULL, *policy = NULL, *plugin = plugin_host_default_path();
	const char *engine = NULL, *reload_policy = NULL;
	const char *reload_at_s = NULL, *api_s = NULL, *maps = NULL;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int k;
		if (!strcmp(a, "--json")) {
			json = 1;
			continue;
		}
		if ((k = cli_opt(argc, argv, &i, "--policy", &policy)) ||
		    (k = cli_opt(argc, argv, &i, "--maps", &maps)) ||
		    (k = cli_opt(argc, argv, &i, "--plugin", &plugin)) ||
		    (k = cli_opt(argc, argv, &i, "--engine", &engine)) ||
		    (k = cli_opt(argc, argv, &i, "--reload-at", &reload_at_s)) ||
		    (k = cli_opt(argc, argv, &i, "--reload-policy", &reload_policy)) ||
		    (k = cli_opt(argc, argv, &i, "--api", &api_s))) {
			if (k < 0)
				return CLI_USAGE;
		} else if (a[0] == '-')
			return cli_usage_error("unknown option '%s'", a);
		else if (trace)
			return cli_usage_error("one trace at a time ('%s' and '%s')", trace, a);
		else
			trace = a;
	}
	unsigned long long reload_at = 0, api = 5;
	if (reload_at_s && cli_parse_u64("--reload-at", reload_at_s, 0, ~0ull >> 1, &reload_at))
		return CLI_USAGE;
	if (api_s && cli_parse_u64("--api", api_s, 5, 6, &api))
		return CLI_USAGE;
	if (engine && strcmp(engine, "jit") && strcmp(engine, "interp"))
		return cli_usage_error("--engine is jit or interp, not '%s'", engine);
	if (!trace)
		return cli_usage_error("no TRACE given");
	int bundle = policy && strcmp(policy, "none") && strncmp(policy, "native:", 7);
	if (maps && !strcmp(maps, "none"))
		maps = NULL;
	else if (!maps && bundle)
		maps = "all";
	else if (maps && !bundle)
		return cli_usage_error("--maps needs --policy BUNDLE (a policy with maps)");
	if (!reload_at_s != !reload_policy)
		return cli_usage_error("--reload-at and --reload-policy go together");
	if (reload_policy && (!policy || !strcmp(policy, "none")))
		return cli_usage_error("--reload-at needs --policy BUNDLE");
	/* A policy that would not load is refused before anything is replayed: the table would
	 * show NCCL's own decisions under the policy's name. (native:NAME policies belong to the
	 * plugin given with --plugin.) */
	const char *checks[] = {policy, reload_policy};
	for (int i = 0; i < 2; i++) {
		struct ncclbpf_reload_report r;
		if (checks[i] && strcmp(checks[i], "none") && strncmp(checks[i], "native:", 7) &&
		    bundle_check(checks[i], &r))
			return cli_fail("%s not loaded: %s", checks[i], r.msg);
	}
	char why[8600];
	FILE *f = ebpf_fopen_regular(trace, why, sizeof(why));
	if (!f)
		return cli_fail("%s", why);
	/* Configure the plugin as a user would, through its environment: offline, so neither
	 * recording nor the control plane; the inspection server on when the maps are shown. */
	char dir[] = "/tmp/ncclbpf-replay-XXXXXX", live[4200] = "";
	unsetenv("NCCLBPF_TRACE");
	unsetenv("NCCLBPF_CP_DIR");
	if (maps)
		setenv("NCCLBPF_INSPECT", "1", 1);
	if (engine)
		setenv("NCCLBPF_ENGINE", engine, 1);
	if (reload_policy) {
		if (!mkdtemp(dir)) {
			fclose(f);
			return cli_fail("cannot create %s: %s", dir, strerror(errno));
		}
		snprintf(live, sizeof(live), "%s/policy.o", dir);
		if (install_file(policy, live, why, sizeof(why))) {
			fclose(f);
			rmdir(dir);
			return cli_fail("%s", why);
		}
		setenv("NCCLBPF_POLICY", live, 1);
		setenv("NCCLBPF_WATCH", "0", 1); /* "1" for the plugin, after replay_net */
	} else {
		if (policy && strcmp(policy, "none"))
			setenv("NCCLBPF_POLICY", policy, 1);
		else
			unsetenv("NCCLBPF_POLICY");
		setenv("NCCLBPF_WATCH", "0", 1);
	}
	struct plugin_host h;
	if (plugin_host_open(&h, plugin)) {
		fclose(f);
		return 1;
	}
	if (api == 6 && !h.v6) {
		plugin_host_close(&h);
		fclose(f);
		return cli_fail("%s has no ncclTunerPlugin_v6", plugin);
	}
	struct json jw, *j = NULL;
	if (json) {
		j = &jw;
		json_init(j, stdout);
		json_obj(j);
		json_kstr(j, "trace", trace);
		json_kstr(j, "plugin", plugin);
		json_ku64(j, "api", api);
		json_kstr(j, "policy", policy && strcmp(policy, "none") ? policy : NULL);
	} else {
		printf("replaying %s through %s (ncclTunerPlugin_v%llu), policy %s\n", trace,
		       plugin, api, policy ? policy : "none");
	}
	/* Net events first, in the replay's own runtime, whose inspection server must be gone
	 * before the plugin's starts (one per process). */
	struct replay_net_counts net;
	int net_rc = replay_net(trace, bundle, maps, j, &net);
	if (reload_policy)
		setenv("NCCLBPF_WATCH", "1", 1);
	/* The replay's own communicator keeps the plugin's runtime, and so the policy and its
	 * maps, alive until the maps are shown, whatever the trace finalizes. */
	void *keeper = NULL;
	{
		ncclNvlDomainInfo_v5_t nvl = {1, 1, 1};
		ncclTunerConstants_v5_t consts;
		memset(&consts, 0, sizeof(consts));
		h.v5->init(&keeper, 0, 1, 1, plugin_host_logger, &nvl, &consts);
	}
	struct replay_prof *prof = replay_prof_new(h.handle, (void *)plugin_host_logger);

	struct ctxmap *ctxs = NULL;
	size_t n_ctx = 0;
	char line[4096], err[256], msg[600];
	uint64_t calls = 0, differ = 0, orphans = 0, chunk_calls = 0, chunk_differ = 0;
	long lineno = 0;
	int phase = 0, rc = net_rc;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		struct ncclbpf_trace_rec r;
		int k = ncclbpf_trace_parse(line, &r, err, sizeof(err));
		if (k == 0)
			continue;
		if (k < 0) {
			rc = cli_fail("%s:%ld: %s", trace, lineno, err);
			break;
		}
		if (replay_prof_record(prof, &r))
			continue;
		if (r.kind == NCCLBPF_TRACE_NET) /* replayed before (replay_net.h) */
			continue;
		if (r.kind == NCCLBPF_TRACE_INIT) {
			void *pc = NULL;
			ncclNvlDomainInfo_v5_t nvl = {(int)r.n_nodes,
						      (int)(r.n_nodes ? r.n_ranks / r.n_nodes : 0),
						      (int)(r.n_nodes ? r.n_ranks / r.n_nodes : 0)};
			ncclTunerConstants_v5_t consts;
			memset(&consts, 0, sizeof(consts));
			if (api == 6)
				h.v6->init(&pc, r.comm_id, r.n_ranks, r.n_nodes, plugin_host_logger,
					   &nvl, &consts);
			else
				h.v5->init(&pc, r.comm_id, r.n_ranks, r.n_nodes, plugin_host_logger,
					   &nvl, &consts);
			ctxs = realloc(ctxs, (n_ctx + 1) * sizeof(*ctxs));
			ctxs[n_ctx++] = (struct ctxmap){r.pid, r.ctx, pc};
			continue;
		}
		struct ctxmap *cm = NULL;
		for (size_t i = 0; i < n_ctx; i++)
			if (ctxs[i].pid == r.pid && ctxs[i].ctx == r.ctx)
				cm = &ctxs[i];
		if (!cm) {
			orphans++;
			continue;
		}
		if (r.kind == NCCLBPF_TRACE_FINI) {
			if (api == 6)
				h.v6->finalize(cm->plugin_ctx);
			else
				h.v5->finalize(cm->plugin_ctx);
			*cm = ctxs[--n_ctx];
			continue;
		}
		if (r.kind == NCCLBPF_TRACE_CHUNK) {
			if (api != 6)
				continue;
			size_t chunk = r.chunk_in;
			h.v6->getChunkSize(cm->plugin_ctx, (ncclFunc_t)r.coll, r.n_bytes, r.algo,
					   r.proto, r.channels, &chunk);
			chunk_calls++;
			chunk_differ += chunk != r.chunk_out;
			continue;
		}
		if (reload_policy && calls == reload_at) {
			unsigned since = plugin_host_log_count();
			if (install_file(reload_policy, live, why, sizeof(why))) {
				rc = cli_fail("%s", why);
				break;
			}
			int ok = wait_reload(since, msg, sizeof(msg));
			if (j) {
				json_key(j, "reload");
				json_obj(j);
				json_ku64(j, "at", reload_at);
				json_kstr(j, "policy", reload_policy);
				json_kbool(j, "ok", ok == 0);
				json_kstr(j, "message", msg);
				json_end(j);
			} else {
				printf("call %llu: hot reload of %s: %s\n", reload_at,
				       reload_policy, msg);
			}
			phase = ok == 0 ? 1 : phase;
		}
		float t[NCCLBPF_TRACE_MAX_CELLS];
		memcpy(t, r.cost, sizeof(t));
		int ch = 0;
		const ncclTuner_v5_t *v5 = h.v5;
		ncclResult_t res = api == 6
				       ? h.v6->getCollInfo(cm->plugin_ctx, (ncclFunc_t)r.coll,
							   r.n_bytes, (int)r.pipe, (float **)t,
							   r.num_algo, r.num_proto, (int)r.reg, &ch)
				       : v5->getCollInfo(cm->plugin_ctx, (ncclFunc_t)r.coll,
							 r.n_bytes, (int)r.pipe, (float **)t,
							 r.num_algo, r.num_proto, (int)r.reg, &ch);
		if (res != ncclSuccess) {
			rc = cli_fail("%s:%ld: getCollInfo returned %d", trace, lineno, res);
		}
		struct group g = {.phase = phase,
				  .coll = r.coll,
				  .bytes = r.n_bytes,
				  .ra = r.algo,
				  .rp = r.proto,
				  .rc = r.channels,
				  .nc = ch};
		nccl_cost_winner(t, r.num_algo, r.num_proto, &g.na, &g.np);
		add_group(&g);
		calls++;
		differ += g.na != g.ra || g.np != g.rp || g.nc != g.rc;
	}
	fclose(f);
	if (n_groups) /* a trace of profiler events only has none */
		qsort(groups, n_groups, sizeof(*groups), cmp_group);
	/* Profiler contexts the trace left open end as at NCCL's finalize (collectives still
	 * open deliver nothing); tuner contexts stay until their per-communicator maps were
	 * shown. */
	struct replay_prof_counts pc;
	replay_prof_end(prof, &pc);
	struct replay_counts n = {calls, differ, chunk_calls, chunk_differ, orphans};
	if (j) {
		print_json(j, &n);
		print_prof_json(j, &pc);
	} else {
		if (n.calls || n.chunk_calls || n.orphans || (!pc.comms && !net.records))
			print_table(&n);
		if (pc.comms)
			print_prof(&pc);
	}
	/* The plugin's maps, unless only net programs ran (their maps were shown above). */
	if (maps && (!net.records || net.other) && replay_maps_show(maps, "maps", j))
		rc = 1;
	for (size_t i = 0; i < n_ctx; i++) {
		if (api == 6)
			h.v6->finalize(ctxs[i].plugin_ctx);
		else
			h.v5->finalize(ctxs[i].plugin_ctx);
	}
	free(ctxs);
	h.v5->finalize(keeper);
	if (j)
		json_end(j);
	free(groups);
	groups = NULL;
	n_groups = cap_groups = 0;
	plugin_host_close(&h);
	if (live[0]) {
		unlink(live);
		rmdir(dir);
	}
	return rc;
}

NCCLBPF_COMMAND(
    replay_cmd, .name = "replay",
    .args = "[--policy BUNDLE|none] [--plugin LIB] [--engine jit|interp] [--api 5|6] "
	    "[--reload-at N --reload-policy BUNDLE] [--maps all|none|NAME,...] [--json] TRACE",
    .summary = "drive the real plugin library over a recorded trace (NCCLBPF_TRACE): tuner "
	       "calls, profiler and net events",
    .help = "  --policy BUNDLE  the policy the plugin loads (NCCLBPF_POLICY; none: NCCL's own)\n"
	    "  --plugin LIB     the plugin library (default: $NCCLBPF_PLUGIN, else ours)\n"
	    "  --engine E       jit or interp (NCCLBPF_ENGINE)\n"
	    "  --api 5|6        the tuner table to call (ncclTunerPlugin_v5 or _v6)\n"
	    "  --reload-at N    before tuner call N, install --reload-policy BUNDLE over the\n"
	    "                   policy and let the plugin's watcher reload it\n"
	    "  --maps M         the policy's maps to show after the replay, typed as `map dump`\n"
	    "                   shows them (default all; none; or NAME,NAME)\n"
	    "  --json           one JSON document (docs/cli-json.md)\n",
    .run = cmd_replay);
