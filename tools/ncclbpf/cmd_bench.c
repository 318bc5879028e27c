/* ncclbpf bench: what a tuner decision costs through the real exported getCollInfo.
 *
 * For each policy the same logic runs three ways, all measured in this run through a plugin
 * library loaded as NCCL loads it (dlopen + ncclTunerPlugin_v5):
 *   native  the policy's native-C twin inside the comparison tuner (libncclbpf-native-tuner.so,
 *           the plugin's own adapter and runtime with the policy compiled by the host compiler);
 *   jit     the eBPF policy JIT-compiled by the shipped plugin (libnccl-ncclbpf.so);
 *   interp  the same eBPF policy on the shipped plugin's interpreter.
 * plus "none": the shipped plugin with no policy (the adapter's floor). Calls cycle through the
 * cost tables and sizes of a trace (default: the embedded DGX H100 model trace).
 *
 * Figures per case: batch mean (N calls in timed blocks of 1,000, the three engines of a policy
 * interleaved in 5 rounds: median and best block mean)
 * and per-call P50/P99
 * (each call timed alone with the TSC; the median cost of the timer itself is subtracted).
 * Differences and ratios are against the native twin measured in the same run.
 * Reload cost: the runtime's load of each policy split into parse, verify, load, JIT, swap.
 * --stress: threads calling the runtime while it reloads version-encoding bundles. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "cli.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/trace.h"
#include "plugin_host.h"

#ifndef NCCLBPF_NATIVE_TUNER_PATH
#define NCCLBPF_NATIVE_TUNER_PATH "libncclbpf-native-tuner.so"
#endif
#ifndef NCCLBPF_SOURCE_DIR
#define NCCLBPF_SOURCE_DIR "."
#endif
#ifndef NCCLBPF_BUILD_DIR
#define NCCLBPF_BUILD_DIR "build"
#endif

struct call_rec {
	int coll;
	size_t bytes;
	float table[21];
};

static struct call_rec *recs;
static size_t n_recs;
static double tsc_per_ns;
static uint64_t timer_cost; /* ticks */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t tsc(void)
{
	_mm_lfence();
	uint64_t t = __rdtsc();
	_mm_lfence();
	return t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void calibrate(void)
{
	uint64_t n0 = now_ns(), t0 = tsc();
	while (now_ns() - n0 < 100000000ull)
		;
	uint64_t n1 = now_ns(), t1 = tsc();
	tsc_per_ns = (double)(t1 - t0) / (double)(n1 - n0);
	enum { K = 200000 };
	uint64_t *s = malloc(K * sizeof(*s));
	for (int i = 0; i < K; i++) {
		uint64_t a = tsc();
		uint64_t b = tsc();
		s[i] = b - a;
	}
	qsort(s, K, sizeof(*s), cmp_u64);
	timer_cost = s[K / 2];
	free(s);
}

static int load_trace(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "ncclbpf bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char line[4096], err[200];
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		struct ncclbpf_trace_rec r;
		if (ncclbpf_trace_parse(line, &r, err, sizeof(err)) != 1 ||
		    r.kind != NCCLBPF_TRACE_CALL || r.num_algo != 7 || r.num_proto != 3)
			continue;
		if (n_recs == cap) {
			cap = cap ? 2 * cap : 256;
			recs = realloc(recs, cap * sizeof(*recs));
		}
		recs[n_recs].coll = (int)r.coll;
		recs[n_recs].bytes = r.n_bytes;
		memcpy(recs[n_recs].table, r.cost, sizeof(recs[0].table));
		n_recs++;
	}
	fclose(f);
	return n_recs ? 0 : -1;
}

struct result {
	double mean, best, p50, p99;
	int ok;
};

/* Samples of one case, gathered over several rounds. */
struct samples {
	double *blocks; /* ns per call of each 1,000-call block */
	size_t n_blocks;
	uint64_t *calls; /* ticks of each call timed alone, timer cost removed */
	size_t n_calls;
	int failed;
};

enum { BLOCK = 1000, ROUNDS = 5 };

/* One round of a case: a fresh plugin state (refcount 0 -> 1 re-reads the environment), then
 * `calls` calls timed in 1,000-call blocks (two clock reads per block, so the timer's cost is
 * negligible) and `calls` calls timed one by one with the TSC. */
static void run_round(const char *lib, const char *policy, const char *engine, long calls,
		      struct samples *sm)
{
	if (policy)
		setenv("NCCLBPF_POLICY", policy, 1);
	else
		unsetenv("NCCLBPF_POLICY");
	setenv("NCCLBPF_ENGINE", engine, 1);
	struct plugin_host h;
	if (plugin_host_open(&h, lib)) {
		sm->failed = 1;
		return;
	}
	unsigned warns = plugin_host_log_count();
	void *ctx = NULL;
	h.v5->init(&ctx, 0x1234, 8, 1, plugin_host_logger, NULL, NULL);
	for (unsigned k = warns; k < plugin_host_log_count(); k++)
		if (strstr(plugin_host_log_line(k), "not loaded")) {
			fprintf(stderr, "ncclbpf bench: %s: %s\n", policy, plugin_host_log_line(k));
			sm->failed = 1;
		}
	float t[21];
	int ch;
	for (long i = 0; i < 20000 && !sm->failed; i++) { /* warm caches and predictors */
		const struct call_rec *r = &recs[(size_t)i % n_recs];
		memcpy(t, r->table, sizeof(t));
		ch = 0;
		h.v5->getCollInfo(ctx, r->coll, r->bytes, 1, (float **)t, 7, 3, 0, &ch);
	}
	for (long b = 0; b < calls / BLOCK && !sm->failed; b++) {
		uint64_t t0 = now_ns();
		for (long i = 0; i < BLOCK; i++) {
			const struct call_rec *r = &recs[(size_t)(b * BLOCK + i) % n_recs];
			memcpy(t, r->table, sizeof(t));
			ch = 0;
			h.v5->getCollInfo(ctx, r->coll, r->bytes, 1, (float **)t, 7, 3, 0, &ch);
		}
		sm->blocks[sm->n_blocks++] = (double)(now_ns() - t0) / (double)BLOCK;
	}
	for (long i = 0; i < calls && !sm->failed; i++) {
		const struct call_rec *r = &recs[(size_t)i % n_recs];
		memcpy(t, r->table, sizeof(t));
		ch = 0;
		uint64_t a = tsc();
		h.v5->getCollInfo(ctx, r->coll, r->bytes, 1, (float **)t, 7, 3, 0, &ch);
		uint64_t b = tsc();
		uint64_t d = b - a;
		sm->calls[sm->n_calls++] = d > timer_cost ? d - timer_cost : 0;
	}
	h.v5->finalize(ctx);
	plugin_host_close(&h);
}

static struct result summarize(struct samples *sm)
{
	struct result res = {0};
	if (sm->failed || !sm->n_blocks || !sm->n_calls)
		return res;
	qsort(sm->blocks, sm->n_blocks, sizeof(double), cmp_double);
	qsort(sm->calls, sm->n_calls, sizeof(uint64_t), cmp_u64);
	res.mean = sm->blocks[sm->n_blocks / 2];
	res.best = sm->blocks[0];
	res.p50 = (double)sm->calls[sm->n_calls / 2] / tsc_per_ns;
	res.p99 = (double)sm->calls[(size_t)((double)sm->n_calls * 0.99)] / tsc_per_ns;
	res.ok = 1;
	return res;
}

static void samples_init(struct samples *sm, long calls)
{
	memset(sm, 0, sizeof(*sm));
	sm->blocks = malloc(((size_t)calls / BLOCK + ROUNDS) * sizeof(double));
	sm->calls = malloc(((size_t)calls + ROUNDS) * sizeof(uint64_t));
	if (!sm->blocks || !sm->calls)
		sm->failed = 1;
}

static void samples_free(struct samples *sm)
{
	free(sm->blocks);
	free(sm->calls);
}

/* Cases measured together are interleaved round by round, so that a burst of load on a shared
 * machine hits all of them alike rather than whichever case happened to run then. The batch
 * figure is the median (and the best) of all 1,000-call block means. */
static void run_cases(int n, const char *const *libs, const char *const *policies,
		      const char *const *engines, long calls, struct result *out)
{
	struct samples sm[3];
	for (int k = 0; k < n; k++)
		samples_init(&sm[k], calls);
	for (int round = 0; round < ROUNDS; round++)
		for (int k = 0; k < n; k++)
			if (!sm[k].failed)
				run_round(libs[k], policies[k], engines[k], calls / ROUNDS, &sm[k]);
	for (int k = 0; k < n; k++) {
		out[k] = summarize(&sm[k]);
		samples_free(&sm[k]);
	}
}

static void policy_path(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/policies/%s.o", NCCLBPF_BUILD_DIR, name);
	if (access(out, R_OK) != 0)
		snprintf(out, len, "%s/benchmarks/policies/%s.o", NCCLBPF_BUILD_DIR, name);
}

static void reload_costs(const char *name, int n)
{
	char path[4096];
	policy_path(name, path, sizeof(path));
	double *v[8];
	for (int k = 0; k < 8; k++)
		v[k] = calloc((size_t)n, sizeof(double));
	int ok = 0;
	for (int i = 0; i < n; i++) {
		struct ncclbpf_reload_report r = {.sz = sizeof(r)};
		if (ncclbpf_rt_reload(path, &r)) {
			printf("  %-12s rejected: %s\n", name, r.msg);
			break;
		}
		double f[8] = {r.parse_ns, r.verify_ns, r.load_ns,  r.jit_ns,
			       r.swap_ns,  r.retire_ns, r.carry_ns, r.total_ns};
		for (int k = 0; k < 8; k++)
			v[k][ok] = f[k] / 1e3;
		ok++;
	}
	if (ok) {
		for (int k = 0; k < 8; k++)
			qsort(v[k], (size_t)ok, sizeof(double), cmp_double);
		printf("  %-12s %8.1f %8.1f %8.1f %8.1f %8.3f %8.1f %8.1f %9.1f   (median of %d)\n",
		       name, v[0][ok / 2], v[1][ok / 2], v[2][ok / 2], v[3][ok / 2], v[4][ok / 2],
		       v[5][ok / 2], v[6][ok / 2], v[7][ok / 2], ok);
	}
	for (int k = 0; k < 8; k++)
		free(v[k]);
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
		struct ncclbpf_tuner_ctx x;
		memset(&x, 0, sizeof(x));
		x.algorithm = x.protocol = -1;
		uint64_t ver = 0;
		if (ncclbpf_rt_run_tuner(&x, &ver) != 0) {
			s->none++;
		} else {
			int v = x.n_channels - 1; /* version.c: channels = 1 + v % 60 */
			if (v < 1 || x.algorithm != v % 2 || x.protocol != (v % 6) / 2 ||
			    ver < s->last)
				s->mixed++;
			s->last = ver;
		}
		s->calls++;
	}
	return NULL;
}

static int stress(int threads, int reloads)
{
	char paths[4][4096];
	for (int v = 0; v < 4; v++) {
		snprintf(paths[v], sizeof(paths[v]), "%s/tests/version_policies/version%d.o",
			 NCCLBPF_BUILD_DIR, v + 1);
		if (access(paths[v], R_OK)) {
			fprintf(stderr, "ncclbpf bench: %s missing (built with the tests)\n",
				paths[v]);
			return 1;
		}
	}
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	if (ncclbpf_rt_reload(paths[0], &r)) {
		fprintf(stderr, "ncclbpf bench: %s\n", r.msg);
		return 1;
	}
	pthread_t th[64];
	struct stress_thread st[64];
	if (threads > 64)
		threads = 64;
	memset(st, 0, sizeof(st));
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, stress_main, &st[i]);
	uint64_t t0 = now_ns(), swap_max = 0, swap_sum = 0, failed = 0;
	for (int i = 0; i < reloads; i++) {
		if (ncclbpf_rt_reload(paths[(i + 1) % 4], &r)) {
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

static int cmd_bench(int argc, char **argv)
{
	long calls = 1000000;
	int reloads = 200, do_stress = 0, threads = 8, stress_reloads = 1000;
	const char *trace = NCCLBPF_SOURCE_DIR "/adapters/nccl/traces/dgx-h100-8gpu.trace";
	const char *plugin = plugin_host_default_path(), *native = NCCLBPF_NATIVE_TUNER_PATH;
	char policies_buf[256] = "noop,size_aware,table_tuner,two_lookups";
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--calls") && v)
			calls = atol(argv[++i]);
		else if (!strcmp(argv[i], "--reloads") && v)
			reloads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--trace") && v)
			trace = argv[++i];
		else if (!strcmp(argv[i], "--plugin") && v)
			plugin = argv[++i];
		else if (!strcmp(argv[i], "--native") && v)
			native = argv[++i];
		else if (!strcmp(argv[i], "--policies") && v)
			snprintf(policies_buf, sizeof(policies_buf), "%s", argv[++i]);
		else if (!strcmp(argv[i], "--stress"))
			do_stress = 1;
		else if (!strcmp(argv[i], "--threads") && v)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--stress-reloads") && v)
			stress_reloads = atoi(argv[++i]);
		else {
			fprintf(stderr,
				"usage: ncclbpf bench [--calls N] [--reloads N] [--trace F] "
				"[--policies a,b] [--plugin LIB] [--native LIB] [--stress "
				"[--threads T] [--stress-reloads R]]\n");
			return 2;
		}
	}
	if (calls < ROUNDS * BLOCK)
		calls = ROUNDS * BLOCK;
	setenv("NCCLBPF_WATCH", "0", 1);
	unsetenv("NCCLBPF_TRACE");
	if (do_stress)
		return stress(threads, stress_reloads);
	if (load_trace(trace))
		return 1;
	calibrate();
	printf(
	    "tuner decision cost through ncclTunerPlugin_v5.getCollInfo, %ld calls per case over "
	    "%zu cost tables of %s\n",
	    calls, n_recs, trace);
	printf(
	    "TSC %.3f GHz, timer cost %.1f ns (subtracted from per-call figures); each call also "
	    "copies the 84-byte table in, as NCCL fills it\n\n",
	    tsc_per_ns, (double)timer_cost / tsc_per_ns);
	plugin_host_quiet = 1; /* the no-policy case WARNs by design */
	struct result none;
	const char *none_lib[1] = {plugin}, *none_pol[1] = {NULL}, *none_eng[1] = {"jit"};
	run_cases(1, none_lib, none_pol, none_eng, calls, &none);
	plugin_host_quiet = 0;
	printf("%-12s %-7s %9s %9s %9s %9s %9s   %-34s\n", "policy", "engine", "mean ns", "best ns",
	       "p50 ns", "p99 ns", "-floor", "vs native: mean diff, ratio (best)");
	if (none.ok)
		printf(
		    "%-12s %-7s %9.1f %9.1f %9.1f %9.1f %9s   (no policy: the adapter's floor)\n",
		    "none", "-", none.mean, none.best, none.p50, none.p99, "");
	char *save = NULL;
	for (char *name = strtok_r(policies_buf, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		char native_name[128], path[4096];
		snprintf(native_name, sizeof(native_name), "native:%s", name);
		policy_path(name, path, sizeof(path));
		const char *libs[3] = {native, plugin, plugin};
		const char *pols[3] = {native_name, path, path};
		const char *engs[3] = {"jit", "jit", "interp"};
		struct result res3[3];
		run_cases(3, libs, pols, engs, calls, res3);
		const struct result nat = res3[0];
		const struct result *rs[3] = {&res3[0], &res3[1], &res3[2]};
		const char *en[3] = {"native", "jit", "interp"};
		for (int k = 0; k < 3; k++) {
			if (!rs[k]->ok) {
				printf("%-12s %-7s   (not run)\n", name, en[k]);
				continue;
			}
			/* -floor: what running the policy adds to the adapter's no-policy cost */
			printf("%-12s %-7s %9.1f %9.1f %9.1f %9.1f %9.1f", name, en[k], rs[k]->mean,
			       rs[k]->best, rs[k]->p50, rs[k]->p99,
			       none.ok ? rs[k]->mean - none.mean : 0.0);
			if (k && nat.ok)
				printf("   %+7.1f ns %5.2fx (%+6.1f ns %5.2fx)",
				       rs[k]->mean - nat.mean, rs[k]->mean / nat.mean,
				       rs[k]->best - nat.best, rs[k]->best / nat.best);
			printf("\n");
		}
	}
	printf("\nreload cost (us) through the runtime: ELF/BTF parse, verification, rest of "
	       "load, JIT, pointer swap, retire, map carry-over, total\n");
	printf("  %-12s %8s %8s %8s %8s %8s %8s %8s %9s\n", "policy", "parse", "verify", "load",
	       "jit", "swap", "retire", "carry", "total");
	snprintf(policies_buf, sizeof(policies_buf), "noop,size_aware,table_tuner,two_lookups");
	save = NULL;
	for (char *name = strtok_r(policies_buf, ",", &save); name;
	     name = strtok_r(NULL, ",", &save))
		reload_costs(name, reloads);
	ncclbpf_rt_unload();
	free(recs);
	return 0;
}

NCCLBPF_COMMAND(bench_cmd, .name = "bench", .args = "[--calls N] [--stress]",
		.summary = "tuner decision and reload cost (eBPF JIT/interp vs native C)",
		.run = cmd_bench);
