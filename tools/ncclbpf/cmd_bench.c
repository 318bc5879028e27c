/* ncclbpf bench: what our library costs NCCL per call, against a native plugin that makes the
 * same decisions.
 *
 * Each case loads two plugin libraries into this process the way NCCL loads them (dlopen with
 * RTLD_NOW | RTLD_LOCAL, the versioned table): ours (libnccl-ncclbpf.so with the policy in
 * NCCLBPF_POLICY) and the policy's native baseline (libnccl-native-<policy>.so, a plain C plugin
 * working on NCCL's own table: benchmarks/native/), and runs them in interleaved rounds
 * (bench_ab.h). The headline is ours minus native, ns per call: the median over rounds of the
 * per-round difference, with its quartiles. A second column, where the policy has a native twin
 * compiled into a copy of our adapter (libncclbpf-native-tuner.so, NCCLBPF_POLICY=native:NAME),
 * is ours minus that twin: what eBPF costs against the same logic in C inside our adapter.
 * With --before LIB, another build of our library (say, of the commit before a change) runs the
 * same policy as one more interleaved side, and a last column gives ours minus it per round: a
 * before/after on one host in one process, whatever state the host is in meanwhile.
 *
 * Tuner policies run getCollInfo over the cost tables of a trace (NCCL's 7 x 3 tables, copied in
 * before each call as NCCL fills them), after a check that every side decides the same on each;
 * "(no policy)" is our library without NCCLBPF_POLICY against the native no-op plugin. Profiler
 * policies run collectives of one Coll and 8 KernelCh events, figures per event. Then the reload
 * cost of each policy (this process's runtime).
 * --stress: threads calling the runtime while it reloads version-encoding bundles.
 *
 * Everything is found relative to this executable (self_path.h) or given as arguments. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_ab.h"
#include "bench_sides.h"
#include "cli.h"
#include "cli_json.h"
#include "ebpf/object.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/nccl_platform.h"
#include "prof_drive.h"
#include "self_path.h"

/* A cost table of zeros for runs outside NCCL (ncclbpf_rt_tuner_ctx.cost_f32). */
static const float zero_costs[NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS];

#ifndef NCCLBPF_NATIVE_TUNER_NAME
#define NCCLBPF_NATIVE_TUNER_NAME "libncclbpf-native-tuner.so"
#endif
#define BASELINES "ncclbpf-bench" /* under lib/: the native baselines */

enum kind { K_NONE, K_TUNER, K_PROFILER };

struct bcase {
	const char *policy; /* NULL: no policy */
	char stem[256];
	enum kind kind;
	int has_baseline, has_twin, has_before;
	struct ab_result ours, native, twin;
	int ran;
};

struct opts {
	int rounds, reloads, json, interp, stress, threads, stress_reloads;
	long calls;
	const char *trace, *plugin, *baselines, *before;
};

/* The kind of bundle path is (its programs' sections), or -1 with a message. */
static int policy_kind(const char *path, enum kind *k)
{
	char err[512];
	struct ebpf_object *o = ncclbpf_object_open_file(path, NULL, err, sizeof(err));
	if (!o) {
		fprintf(stderr, "ncclbpf bench: %s\n", err);
		return -1;
	}
	*k = K_NONE;
	for (struct ebpf_program *p = ebpf_object__next_program(o, NULL); p;
	     p = ebpf_object__next_program(o, p)) {
		const char *s = ebpf_program__section(p);
		if (!strcmp(s, "tuner"))
			*k = K_TUNER;
		else if (!strncmp(s, "profiler", 8) && *k == K_NONE)
			*k = K_PROFILER;
	}
	ebpf_object__close(o);
	if (*k == K_NONE)
		fprintf(stderr, "ncclbpf bench: %s has no tuner or profiler program\n", path);
	return *k == K_NONE ? -1 : 0;
}

/* The policy must load (parse, verify, JIT) before anything is measured. */
static int policy_loads(const char *path)
{
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	int err = ncclbpf_rt_reload(path, &r);
	ncclbpf_rt_unload();
	if (err)
		fprintf(stderr, "ncclbpf bench: %s not loaded: %s\n", path, r.msg);
	return err ? -1 : 0;
}

static void stem_of(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b);
	if (n > 2 && !strcmp(b + n - 2, ".o"))
		n -= 2;
	snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), b);
}

static void baseline_path(const struct opts *o, const char *stem, char *out, size_t len)
{
	snprintf(out, len, "%.3500s/libnccl-native-%.250s.so", o->baselines, stem);
}

/* The last thing our library said about a policy that did not load (the plugin host keeps its
 * log lines). */
static void say_refusal(const char *what)
{
	for (unsigned k = plugin_host_log_count(); k-- > 0;)
		if (strstr(plugin_host_log_line(k), "not loaded")) {
			fprintf(stderr, "ncclbpf bench: %s\n", plugin_host_log_line(k));
			return;
		}
	fprintf(stderr, "ncclbpf bench: %s did not start\n", what);
}

/* 0 when sides a and b decide the same on every record of the trace, each call on a fresh
 * table (what the comparison promises); else one line naming the first call they differ on. */
static int same_decisions(struct tuner_side *a, struct tuner_side *b, const char *what,
			  const char *other, const struct bench_rec *recs, size_t n_recs)
{
	for (size_t i = 0; i < n_recs; i++) {
		struct tuner_decision x, y;
		tuner_side_decide(a, &recs[i], &x);
		tuner_side_decide(b, &recs[i], &y);
		if (x.algo != y.algo || x.proto != y.proto || x.channels != y.channels) {
			fprintf(stderr,
				"ncclbpf bench: %s: ours and %s decide differently on call %zu of "
				"the trace (coll %d, %zu bytes): ours algorithm %d protocol %d "
				"channels %d, the other %d %d %d; nothing measured\n",
				what, other, i, recs[i].coll, recs[i].bytes, x.algo, x.proto,
				x.channels, y.algo, y.proto, y.channels);
			return -1;
		}
	}
	return 0;
}

static int run_tuner_case(const struct opts *o, struct bcase *c, const struct bench_rec *recs,
			  size_t n_recs)
{
	char base[4096], twin_lib[4096], twin_pol[300];
	baseline_path(o, c->policy ? c->stem : "noop", base, sizeof(base));
	snprintf(twin_lib, sizeof(twin_lib), "%.3500s/%s", o->baselines, NCCLBPF_NATIVE_TUNER_NAME);
	snprintf(twin_pol, sizeof(twin_pol), "native:%s", c->stem);
	struct tuner_side sd[AB_MAX_SIDES];
	struct ab_side sides[AB_MAX_SIDES];
	struct ab_result res[AB_MAX_SIDES];
	const char *engine = o->interp ? "interp" : "jit";
	int n = 0, i_ours, i_twin = -1, i_before = -1;
	if (access(base, R_OK) == 0 && tuner_side_open(&sd[n], base, NULL, NULL, recs, n_recs) == 0)
		c->has_baseline = 1, n++;
	i_ours = n;
	if (tuner_side_open(&sd[n], o->plugin, c->policy, engine, recs, n_recs)) {
		say_refusal(c->policy ? c->policy : o->plugin);
		for (int k = 0; k < n; k++)
			tuner_side_close(&sd[k]);
		return -1;
	}
	n++;
	if (c->policy && access(twin_lib, R_OK) == 0 &&
	    tuner_side_open(&sd[n], twin_lib, twin_pol, NULL, recs, n_recs) == 0)
		c->has_twin = 1, i_twin = n++;
	if (o->before) {
		if (tuner_side_open(&sd[n], o->before, c->policy, engine, recs, n_recs)) {
			say_refusal(o->before);
			for (int k = 0; k < n; k++)
				tuner_side_close(&sd[k]);
			return -1;
		}
		c->has_before = 1, i_before = n++;
	}
	/* A difference against a plugin that decides otherwise would measure nothing. */
	const char *what = c->policy ? c->policy : "(no policy)";
	if ((c->has_baseline &&
	     same_decisions(&sd[i_ours], &sd[0], what, "the native baseline", recs, n_recs)) ||
	    (i_twin >= 0 && same_decisions(&sd[i_ours], &sd[i_twin], what,
					   "its C twin in our adapter", recs, n_recs)) ||
	    (i_before >= 0 && same_decisions(&sd[i_ours], &sd[i_before], what,
					     "the --before library", recs, n_recs))) {
		for (int k = 0; k < n; k++)
			tuner_side_close(&sd[k]);
		return -1;
	}
	for (int k = 0; k < n; k++)
		sides[k] = (struct ab_side){tuner_side_round, &sd[k]};
	ab_run(sides, n, o->rounds, o->calls, i_before, res);
	for (int k = 0; k < n; k++)
		tuner_side_close(&sd[k]);
	c->ours = res[i_ours];
	if (c->has_baseline)
		c->native = res[0];
	if (i_twin >= 0) {
		/* ours minus the twin: the differences were taken against side 0 */
		c->twin = res[i_twin];
		c->twin.diff = c->has_baseline ? c->ours.diff - res[i_twin].diff : 0;
	}
	c->ran = c->ours.ok;
	return c->ran ? 0 : -1;
}

static int run_profiler_case(const struct opts *o, struct bcase *c)
{
	char base[4096];
	baseline_path(o, c->stem, base, sizeof(base));
	struct prof_side sd[3];
	struct ab_side sides[3];
	struct ab_result res[3];
	int n = 0, i_ours, i_before = -1;
	if (access(base, R_OK) == 0 && prof_side_open(&sd[n], base, NULL) == 0)
		c->has_baseline = 1, n++;
	i_ours = n;
	const char *libs[2] = {o->plugin, o->before};
	for (int l = 0; l < 2 && libs[l]; l++) {
		if (prof_side_open(&sd[n], libs[l], c->policy)) {
			say_refusal(l ? o->before : c->policy);
			for (int k = 0; k < n; k++)
				prof_side_close(&sd[k]);
			return -1;
		}
		n++;
	}
	if (o->before)
		c->has_before = 1, i_before = i_ours + 1;
	for (int k = 0; k < n; k++)
		sides[k] = (struct ab_side){prof_side_round, &sd[k]};
	ab_run(sides, n, o->rounds, o->calls, i_before, res);
	for (int k = 0; k < n; k++)
		prof_side_close(&sd[k]);
	/* per event */
	for (int k = 0; k < n; k++) {
		res[k].ns /= PROF_DRIVE_EVENTS;
		res[k].diff /= PROF_DRIVE_EVENTS;
		res[k].diff_lo /= PROF_DRIVE_EVENTS;
		res[k].diff_hi /= PROF_DRIVE_EVENTS;
		res[k].diff2 /= PROF_DRIVE_EVENTS;
		res[k].diff2_lo /= PROF_DRIVE_EVENTS;
		res[k].diff2_hi /= PROF_DRIVE_EVENTS;
	}
	c->ours = res[i_ours];
	if (c->has_baseline)
		c->native = res[0];
	c->ran = c->ours.ok;
	return c->ran ? 0 : -1;
}

/* --- Reload cost ----------------------------------------------------------------------------- */
enum { R_PARSE, R_VERIFY, R_LOAD, R_JIT, R_SWAP, R_RETIRE, R_CARRY, R_TOTAL, R_N };
static const char *const reload_names[R_N] = {"parse", "verify", "load",  "jit",
					      "swap",  "retire", "carry", "total"};

/* Medians (us) over n reloads of path; 0 or -1 (the message is printed). */
static int reload_costs(const char *path, int n, double med[R_N])
{
	double *v[R_N];
	int ok = 0;
	for (int k = 0; k < R_N; k++)
		v[k] = calloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++) {
		struct ncclbpf_reload_report r = {.sz = sizeof(r)};
		if (ncclbpf_rt_reload(path, &r)) {
			fprintf(stderr, "ncclbpf bench: %s not loaded: %s\n", path, r.msg);
			break;
		}
		double f[R_N] = {r.parse_ns, r.verify_ns, r.load_ns,  r.jit_ns,
				 r.swap_ns,  r.retire_ns, r.carry_ns, r.total_ns};
		for (int k = 0; k < R_N; k++)
			v[k][ok] = f[k] / 1e3;
		ok++;
	}
	ncclbpf_rt_unload();
	for (int k = 0; k < R_N; k++) {
		double lo, hi;
		ab_quartiles(v[k], (size_t)ok, &lo, &med[k], &hi);
		free(v[k]);
	}
	return ok == n ? 0 : -1;
}

/* --- Output ---------------------------------------------------------------------------------- */
static void json_diff(struct json *j, const char *key, const struct ab_result *r)
{
	json_key(j, key);
	json_obj(j);
	json_kf64(j, "ns", r->diff);
	json_kf64(j, "p25", r->diff_lo);
	json_kf64(j, "p75", r->diff_hi);
	json_end(j);
}

static void json_case(struct json *j, const struct opts *o, const struct bcase *c)
{
	char base[4096];
	baseline_path(o, c->policy ? c->stem : "noop", base, sizeof(base));
	json_obj(j);
	json_kstr(j, "policy", c->policy);
	json_kf64(j, "ours_ns", c->ours.ns);
	if (c->has_baseline) {
		json_kstr(j, "baseline", base);
		json_kf64(j, "native_ns", c->native.ns);
		json_diff(j, "ours_minus_native", &c->ours);
	}
	if (c->has_twin)
		json_kf64(j, "ebpf_minus_c_in_adapter_ns", c->twin.diff);
	if (c->has_before) {
		json_key(j, "ours_minus_before");
		json_obj(j);
		json_kf64(j, "ns", c->ours.diff2);
		json_kf64(j, "p25", c->ours.diff2_lo);
		json_kf64(j, "p75", c->ours.diff2_hi);
		json_end(j);
	}
	json_end(j);
}

static void text_case(const struct bcase *c)
{
	char name[64];
	snprintf(name, sizeof(name), "%.60s", c->policy ? c->stem : "(no policy)");
	printf("  %-18s %8.1f", name, c->ours.ns);
	if (c->has_baseline)
		printf(" %8.1f   %+7.1f [%+.1f, %+.1f]", c->native.ns, c->ours.diff,
		       c->ours.diff_lo, c->ours.diff_hi);
	else
		printf(" %8s   %-24s", "-", "(no native baseline)");
	if (c->has_twin)
		printf("   %+7.1f", c->twin.diff);
	else if (c->has_before)
		printf("   %7s", "");
	if (c->has_before)
		printf("   %+7.1f [%+.1f, %+.1f]", c->ours.diff2, c->ours.diff2_lo,
		       c->ours.diff2_hi);
	printf("\n");
}

/* --- Stress ---------------------------------------------------------------------------------- */
static volatile int stress_stop;
struct stress_thread {
	long calls, mixed, none;
	uint64_t last;
};

static void *stress_main(void *arg)
{
	struct stress_thread *s = arg;
	while (!stress_stop) {
		struct ncclbpf_rt_tuner_ctx rx = {.cost_f32 = zero_costs};
		rx.x.algorithm = rx.x.protocol = -1;
		uint64_t ver = 0;
		if (ncclbpf_rt_run_tuner(&rx, &ver) != 0) {
			s->none++;
		} else {
			int v = rx.x.n_channels - 1; /* version.c: channels = 1 + v % 60 */
			if (v < 1 || rx.x.algorithm != v % 2 || rx.x.protocol != (v % 6) / 2 ||
			    ver < s->last)
				s->mixed++;
			s->last = ver;
		}
		s->calls++;
	}
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int stress(int threads, int reloads, char **paths, int n_paths)
{
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	if (ncclbpf_rt_reload(paths[0], &r)) {
		fprintf(stderr, "ncclbpf bench: %s not loaded: %s\n", paths[0], r.msg);
		return 1;
	}
	pthread_t th[64];
	struct stress_thread st[64];
	memset(st, 0, sizeof(st));
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, stress_main, &st[i]);
	uint64_t t0 = now_ns(), swap_max = 0, swap_sum = 0, failed = 0;
	for (int i = 0; i < reloads; i++) {
		if (ncclbpf_rt_reload(paths[(i + 1) % n_paths], &r)) {
			failed++;
			continue;
		}
		swap_sum += r.swap_ns;
		if (r.swap_ns > swap_max)
			swap_max = r.swap_ns;
	}
	double secs = (double)(now_ns() - t0) / 1e9;
	stress_stop = 1;
	long calls = 0, mixed = 0, none = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		calls += st[i].calls;
		mixed += st[i].mixed;
		none += st[i].none;
	}
	ncclbpf_rt_unload();
	printf("stress: %d threads, %d reloads (%llu failed) in %.2f s, %ld calls: %ld mixed or "
	       "out-of-order decisions, %ld without a policy; swap mean %.0f ns, max %.0f ns\n",
	       threads, reloads, (unsigned long long)failed, secs, calls, mixed, none,
	       reloads ? (double)swap_sum / reloads : 0.0, (double)swap_max);
	return mixed || none || failed ? 1 : 0;
}

/* --- Command --------------------------------------------------------------------------------- */
/* The options into o and the bundles into pol: 0, or -1 with the usage error said. */
static int parse(int argc, char **argv, struct opts *o, char **pol, int *n_pol)
{
	static const struct {
		const char *name;
		unsigned long long lo, hi;
	} nums[] = {{"--rounds", 1, 1000000},
		    {"--calls", 1000, 1000000000},
		    {"--reloads", 0, 1000000},
		    {"--threads", 1, 64},
		    {"--stress-reloads", 0, 1000000}};
	*n_pol = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		int k = 0;
		if (!strcmp(a, "--json")) {
			o->json = 1;
			continue;
		}
		if (!strcmp(a, "--interp")) {
			o->interp = 1;
			continue;
		}
		if (!strcmp(a, "--stress")) {
			o->stress = 1;
			continue;
		}
		for (size_t n = 0; n < sizeof(nums) / sizeof(nums[0]) && !k; n++) {
			unsigned long long v;
			k = cli_opt(argc, argv, &i, nums[n].name, &val);
			if (k < 0 ||
			    (k && cli_parse_u64(nums[n].name, val, nums[n].lo, nums[n].hi, &v)))
				return -1;
			if (!k)
				continue;
			if (n == 0)
				o->rounds = (int)v;
			else if (n == 1)
				o->calls = (long)v;
			else if (n == 2)
				o->reloads = (int)v;
			else if (n == 3)
				o->threads = (int)v;
			else
				o->stress_reloads = (int)v;
		}
		if (!k && !(k = cli_opt(argc, argv, &i, "--trace", &o->trace)) &&
		    !(k = cli_opt(argc, argv, &i, "--plugin", &o->plugin)) &&
		    !(k = cli_opt(argc, argv, &i, "--baselines", &o->baselines)))
			k = cli_opt(argc, argv, &i, "--before", &o->before);
		if (k < 0)
			return -1;
		if (k)
			continue;
		if (a[0] == '-') {
			cli_usage_error("unknown option '%s'", a);
			return -1;
		}
		if (*n_pol == 64) {
			cli_usage_error("at most 64 bundles");
			return -1;
		}
		pol[(*n_pol)++] = argv[i];
	}
	if (o->stress && *n_pol < 2) {
		cli_usage_error("--stress needs two or more VERSION.o bundles");
		return -1;
	}
	return 0;
}

static int cmd_bench(int argc, char **argv)
{
	static char trace[4096], baselines[4096], defaults[5][4096];
	struct opts o = {
	    .rounds = 21, .reloads = 200, .threads = 8, .stress_reloads = 1000, .calls = 200000};
	char *pol[64];
	int n_pol = 0;
	if (parse(argc, argv, &o, pol, &n_pol))
		return CLI_USAGE;
	setenv("NCCLBPF_WATCH", "0", 1);
	unsetenv("NCCLBPF_TRACE");
	if (o.stress)
		return stress(o.threads, o.stress_reloads, pol, n_pol);
	if (!o.trace)
		self_path(SELF_SHARE "/traces/dgx-h100-8gpu.trace", trace, sizeof(trace));
	if (!o.baselines)
		self_path(SELF_LIB "/" BASELINES, baselines, sizeof(baselines));
	o.trace = o.trace ? o.trace : trace;
	o.baselines = o.baselines ? o.baselines : baselines;
	o.plugin = o.plugin ? o.plugin : plugin_host_default_path();
	if (o.before) {
		/* dlopen of the same file returns the same instance: nothing would be compared. */
		char a[PATH_MAX], b[PATH_MAX];
		if (!realpath(o.before, b)) {
			fprintf(stderr, "ncclbpf bench: --before %s: %s\n", o.before,
				strerror(errno));
			return 1;
		}
		if (realpath(o.plugin, a) && !strcmp(a, b)) {
			cli_usage_error(
			    "--before names our library itself (%s); give another build, "
			    "or a copy of it",
			    o.before);
			return CLI_USAGE;
		}
	}
	if (!n_pol) {
		static const char *const shipped[] = {
		    SELF_SHARE "/policies/noop.o", SELF_SHARE "/policies/size_aware.o",
		    SELF_SHARE "/policies/table_tuner.o", SELF_SHARE "/bench/two_lookups.o",
		    SELF_SHARE "/policies/profiler_latency.o"};
		for (int i = 0; i < 5; i++) {
			self_path(shipped[i], defaults[i], sizeof(defaults[i]));
			pol[n_pol++] = defaults[i];
		}
	}

	/* Every policy must load before anything is measured. */
	struct bcase *cs = calloc((size_t)n_pol + 1, sizeof(*cs));
	if (!cs)
		return 1;
	cs[0].kind = K_TUNER; /* (no policy) */
	for (int i = 0; i < n_pol; i++) {
		struct bcase *c = &cs[i + 1];
		c->policy = pol[i];
		stem_of(pol[i], c->stem, sizeof(c->stem));
		if (policy_kind(pol[i], &c->kind) || policy_loads(pol[i])) {
			free(cs);
			return 1;
		}
	}
	struct bench_rec *recs = NULL;
	size_t n_recs = 0;
	if (bench_load_trace(o.trace, &recs, &n_recs)) {
		free(cs);
		return 1;
	}
	plugin_host_quiet = 1; /* the no-policy case WARNs by design; refusals are said below */
	int rc = 0;
	for (int i = 0; i <= n_pol && !rc; i++) {
		if (cs[i].kind == K_TUNER)
			rc = run_tuner_case(&o, &cs[i], recs, n_recs);
		else
			rc = run_profiler_case(&o, &cs[i]);
	}
	plugin_host_quiet = 0;
	free(recs);
	if (rc) {
		free(cs);
		return 1;
	}

	double med[64][R_N];
	for (int i = 0; i < n_pol && o.reloads; i++)
		if (reload_costs(pol[i], o.reloads, med[i])) {
			free(cs);
			return 1;
		}

	const char *engine = o.interp ? "interp" : "jit";
	if (o.json) {
		struct json j;
		json_init(&j, stdout);
		json_obj(&j);
		json_kstr(&j, "plugin", o.plugin);
		json_kstr(&j, "before", o.before);
		json_kstr(&j, "engine", engine);
		json_ki64(&j, "rounds", o.rounds);
		json_ki64(&j, "calls_per_round", o.calls);
		json_kstr(&j, "clock", "thread_cputime");
		json_kstr(&j, "trace", o.trace);
		for (int kind = K_TUNER; kind <= K_PROFILER; kind++) {
			json_key(&j, kind == K_TUNER ? "tuner" : "profiler");
			json_obj(&j);
			json_kstr(&j, "unit", kind == K_TUNER ? "call" : "event");
			json_key(&j, "cases");
			json_arr(&j);
			for (int i = 0; i <= n_pol; i++)
				if (cs[i].kind == (enum kind)kind && cs[i].ran)
					json_case(&j, &o, &cs[i]);
			json_end(&j);
			json_end(&j);
		}
		json_key(&j, "reload_us");
		json_arr(&j);
		for (int i = 0; i < n_pol && o.reloads; i++) {
			json_obj(&j);
			json_kstr(&j, "policy", pol[i]);
			for (int k = 0; k < R_N; k++)
				json_kf64(&j, reload_names[k], med[i][k]);
			json_end(&j);
		}
		json_end(&j);
		json_end(&j);
		free(cs);
		return 0;
	}
	printf("ours (%s, %s) minus a native plugin making the same decisions, both loaded as "
	       "NCCL loads them;\n%d interleaved rounds of %ld calls per side, thread CPU time, ns "
	       "per call: median of the rounds [25th, 75th percentile]\n",
	       o.plugin, engine, o.rounds, o.calls);
	if (o.before)
		printf("last column: ours minus %s (the same policy, a further interleaved side), "
		       "per round\n",
		       o.before);
	for (int kind = K_TUNER; kind <= K_PROFILER; kind++) {
		int any = 0;
		for (int i = 0; i <= n_pol; i++)
			any |= cs[i].kind == (enum kind)kind;
		if (!any)
			continue;
		if (kind == K_TUNER)
			printf("\ntuner: getCollInfo over the %zu cost tables of %s\n", n_recs,
			       o.trace);
		else
			printf("\nprofiler: collectives of 1 Coll + %d KernelCh events, ns per "
			       "event\n",
			       PROF_DRIVE_CHANNELS);
		printf("  %-18s %8s %8s   %-24s   %s%s\n", "policy", "ours", "native",
		       "ours - native", kind == K_TUNER ? "eBPF - C in our adapter" : "",
		       o.before ? (kind == K_TUNER ? "   ours - before" : "         ours - before")
				: "");
		for (int i = 0; i <= n_pol; i++)
			if (cs[i].kind == (enum kind)kind && cs[i].ran)
				text_case(&cs[i]);
	}
	if (o.reloads) {
		printf("\nreload cost (us, median of %d) through the runtime\n  %-18s", o.reloads,
		       "policy");
		for (int k = 0; k < R_N; k++)
			printf(" %8s", reload_names[k]);
		printf("\n");
		for (int i = 0; i < n_pol; i++) {
			printf("  %-18s", cs[i + 1].stem);
			for (int k = 0; k < R_N; k++)
				printf(" %8.*f", k == R_SWAP ? 3 : 1, med[i][k]);
			printf("\n");
		}
	}
	free(cs);
	return 0;
}

NCCLBPF_COMMAND(
    bench_cmd, .name = "bench",
    .args = "[--rounds N] [--calls N] [--reloads N] [--trace FILE] [--plugin LIB] "
	    "[--before LIB] [--baselines DIR] [--interp] [--json] [POLICY.o ...] | --stress "
	    "[--threads T] "
	    "[--stress-reloads R] VERSION.o ...",
    .summary = "what our library costs per call against native plugins (A/B)",
    .help =
	"Measures what our library costs per call against a native plugin making the same\n"
	"decisions (checked on every table of the trace first), both loaded as NCCL loads\n"
	"them, in interleaved rounds in this process.\n"
	"  POLICY.o          tuner or profiler bundles (default: the shipped noop, size_aware,\n"
	"                    table_tuner, profiler_latency and the benchmark's two_lookups)\n"
	"  --rounds N        interleaved rounds per case (default 21)\n"
	"  --calls N         calls per round and side (default 200000; profiler: collectives)\n"
	"  --reloads N       reloads per policy for the reload cost (default 200; 0: none)\n"
	"  --trace FILE      cost tables for the tuner calls (default: the shipped DGX H100 "
	"trace)\n"
	"  --plugin LIB      our library (default: ../lib/libnccl-ncclbpf.so from this program)\n"
	"  --before LIB      another build of our library (another file) as one more side with\n"
	"                    the same policy: a last column, ours minus it per round\n"
	"  --baselines DIR   native baselines libnccl-native-<policy>.so (default:\n"
	"                    ../lib/" BASELINES ")\n"
	"  --interp          run our policies on the interpreter instead of the JIT\n"
	"  --json            one JSON object on stdout instead of the tables\n"
	"  --stress          threads run the runtime while it reloads VERSION.o bundles in turn\n"
	"                    (tests/version_policies): every call must see one whole version\n"
	"  --threads T       --stress: calling threads (default 8)\n"
	"  --stress-reloads R  --stress: reloads (default 1000)\n",
    .run = cmd_bench);
