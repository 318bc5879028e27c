/* Hot reload under load: T threads call the tuner (through ncclTunerPlugin_v5.getCollInfo and
 * through the runtime directly) while another thread replaces the policy R times. Every policy
 * version v owns a heap record {magic, v}; its program reads the record once per output, and the
 * record is poisoned and freed when the runtime frees that version (after the epoch drain).
 * So a call that ran across a switch, or a policy freed while in use, shows up as a decision
 * mixing two versions, a poisoned value, or an ASan/TSan report.
 *
 * With VERSION-DIR (tests/plugin/policies/version.c built as version1..4.o), a second phase does
 * the same with real eBPF bundles: load, verify, JIT, swap and retire of compiled code while the
 * threads run it.
 *
 * usage: test_reload_stress [THREADS [RELOADS [MIN_CALLS [VERSION-DIR]]]]   (defaults 8 2000
 * 200000; calls continue until both the reloads are done and MIN_CALLS calls were made in total)
 * The full run: test_reload_stress 8 1000 10000000 */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "ncclbpf/runtime.h"

/* A cost table of zeros for runs outside NCCL (ncclbpf_rt_tuner_ctx.cost_f32). */
static const float zero_costs[NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS];

extern const ncclTuner_v5_t ncclTunerPlugin_v5;

#define MAGIC 0x5eed5eed5eed5eedull

struct vrec {
	volatile uint64_t magic;
	volatile uint64_t version;
};

/* Decision of version v: algorithm v%2 (tree/ring), protocol (v%6)/2, channels 1+v%60, each
 * computed from a separate read of the record. */
static uint64_t versioned(uint64_t c, uint64_t arg)
{
	struct ncclbpf_tuner_ctx *x = (struct ncclbpf_tuner_ctx *)(uintptr_t)c;
	const struct vrec *r = (const struct vrec *)(uintptr_t)arg;
	x->algorithm = (int32_t)(r->version % 2);
	x->protocol = (int32_t)((r->version % 6) / 2);
	if (r->magic != MAGIC)
		x->protocol = 99; /* poisoned record: makes the decision invalid */
	x->n_channels = (int32_t)(1 + r->version % 60);
	return 0;
}

static int n_threads = 8, n_reloads = 2000;
static int released;

/* Runs when the runtime frees a retired version: no call may read the record any more. */
static void release_rec(uint64_t arg)
{
	struct vrec *r = (struct vrec *)(uintptr_t)arg;
	r->magic = 0;
	r->version = 12345;
	free(r);
	__atomic_add_fetch(&released, 1, __ATOMIC_RELAXED);
}
static long min_calls = 200000;
static volatile int reloading = 1;

struct caller {
	int id;
	long calls, bad, no_decision;
	uint64_t last_version;
};

static void *caller_main(void *arg)
{
	struct caller *c = arg;
	void *ctx = NULL;
	ncclTunerPlugin_v5.init(&ctx, 1000 + (uint64_t)c->id, 8, 1, harness_logger, NULL, NULL);
	float base[21];
	harness_table(base, 7, 3, 4, 1 << 20);
	while (__atomic_load_n(&reloading, __ATOMIC_RELAXED) || c->calls < min_calls / n_threads) {
		if (c->id % 2) {
			/* Through the exported entry point: the decision must be one version's. */
			float t[21];
			memcpy(t, base, sizeof(t));
			int ch = 0;
			ncclTunerPlugin_v5.getCollInfo(ctx, 4, 1 << 20, 1, (float **)t, 7, 3, 0,
						       &ch);
			int a = -1, p = -1;
			for (int k = 0; k < 21 && a < 0; k++)
				if (t[k] == 0.0f) {
					a = k / 3;
					p = k % 3;
				}
			if (ch == 0 || a < 0)
				c->no_decision++;
			else if (a != (ch - 1) % 2 || p != ((ch - 1) % 6) / 2)
				c->bad++;
		} else {
			/* Through the runtime: also checks the reported version and its order. */
			struct ncclbpf_rt_tuner_ctx rx = {.cost_f32 = zero_costs};
			rx.x.algorithm = rx.x.protocol = -1;
			uint64_t v = 0;
			if (ncclbpf_rt_run_tuner(&rx, &v) != 0)
				c->no_decision++;
			else if (rx.x.algorithm != (int)(v % 2) ||
				 rx.x.protocol != (int)((v % 6) / 2) ||
				 rx.x.n_channels != (int)(1 + v % 60) || v < c->last_version)
				c->bad++;
			c->last_version = v;
		}
		c->calls++;
	}
	ncclTunerPlugin_v5.finalize(ctx);
	return NULL;
}

/* Phase 2: eBPF bundles whose decisions encode their .rodata version (1..4). */
static volatile int bpf_stop;
struct bpf_caller {
	long calls, bad, none;
	uint64_t last;
};

static void *bpf_caller_main(void *arg)
{
	struct bpf_caller *c = arg;
	while (!__atomic_load_n(&bpf_stop, __ATOMIC_RELAXED)) {
		struct ncclbpf_rt_tuner_ctx rx = {.cost_f32 = zero_costs};
		rx.x.algorithm = rx.x.protocol = -1;
		uint64_t v = 0;
		if (ncclbpf_rt_run_tuner(&rx, &v) != 0) {
			c->none++;
		} else {
			int pv = rx.x.n_channels - 1;
			if (pv < 1 || pv > 4 || rx.x.algorithm != pv % 2 ||
			    rx.x.protocol != (pv % 6) / 2 || v < c->last)
				c->bad++;
			c->last = v;
		}
		c->calls++;
	}
	return NULL;
}

static void bpf_phase(const char *dir)
{
	char paths[4][4096];
	for (int v = 0; v < 4; v++)
		snprintf(paths[v], sizeof(paths[v]), "%s/version%d.o", dir, v + 1);
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	CHECK(ncclbpf_rt_reload(paths[0], &r) == 0);
	pthread_t th[64];
	struct bpf_caller cs[64];
	memset(cs, 0, sizeof(cs));
	for (int i = 0; i < n_threads; i++)
		pthread_create(&th[i], NULL, bpf_caller_main, &cs[i]);
	int failed = 0;
	for (int i = 0; i < n_reloads; i++)
		failed += ncclbpf_rt_reload(paths[(i + 1) % 4], &r) != 0;
	__atomic_store_n(&bpf_stop, 1, __ATOMIC_RELAXED);
	long calls = 0, bad = 0, none = 0;
	for (int i = 0; i < n_threads; i++) {
		pthread_join(th[i], NULL);
		calls += cs[i].calls;
		bad += cs[i].bad;
		none += cs[i].none;
	}
	printf(
	    "eBPF bundles: %d threads, %d reloads (%d failed), %ld calls: %ld mixed, %ld without "
	    "decision\n",
	    n_threads, n_reloads, failed, calls, bad, none);
	CHECK_EQ_U64(failed, 0);
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(none, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n_threads = atoi(argv[1]);
	if (argc > 2)
		n_reloads = atoi(argv[2]);
	if (argc > 3)
		min_calls = atol(argv[3]);
	setenv("NCCLBPF_WATCH", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	ncclbpf_rt_acquire();
	struct vrec *cur = malloc(sizeof(*cur));
	cur->magic = MAGIC;
	cur->version = 0;
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	struct ncclbpf_native_policy np = {
	    .sz = sizeof(np), .name = "v", .tuner = versioned, .release = release_rec};
	np.arg = (uintptr_t)cur;
	CHECK(ncclbpf_rt_install_native(&np, &r) == 0);
	uint64_t first = r.version;
	cur->version = first; /* not yet called by anyone: no thread runs */

	pthread_t th[64];
	struct caller cs[64];
	if (n_threads > 64)
		n_threads = 64;
	for (int i = 0; i < n_threads; i++) {
		cs[i] = (struct caller){.id = i};
		pthread_create(&th[i], NULL, caller_main, &cs[i]);
	}
	uint64_t max_swap = 0, sum_swap = 0, sum_drain = 0;
	for (int i = 0; i < n_reloads; i++) {
		struct vrec *next = malloc(sizeof(*next));
		next->magic = MAGIC;
		/* The version the runtime will assign is the next one; the record must hold it
		 * before publication, and the runtime assigns versions in order. */
		next->version = first + 1 + (uint64_t)i;
		np.arg = (uintptr_t)next;
		CHECK(ncclbpf_rt_install_native(&np, &r) == 0);
		CHECK_EQ_U64(r.version, next->version);
		sum_swap += r.swap_ns;
		sum_drain += r.retire_ns;
		if (r.swap_ns > max_swap)
			max_swap = r.swap_ns;
	}
	__atomic_store_n(&reloading, 0, __ATOMIC_RELAXED);
	long calls = 0, bad = 0, none = 0;
	for (int i = 0; i < n_threads; i++) {
		pthread_join(th[i], NULL);
		calls += cs[i].calls;
		bad += cs[i].bad;
		none += cs[i].no_decision;
	}
	printf("%d threads, %d reloads, %ld calls: %ld mixed/poisoned, %ld without decision; "
	       "swap mean %.0f ns max %.0f ns, retire mean %.1f us\n",
	       n_threads, n_reloads, calls, bad, none, n_reloads ? (double)sum_swap / n_reloads : 0,
	       (double)max_swap, n_reloads ? (double)sum_drain / n_reloads / 1e3 : 0);
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(none, 0);
	/* Statistics: every call through getCollInfo counted once, each ran a policy. */
	long via_plugin = 0;
	for (int i = 1; i < n_threads; i += 2)
		via_plugin += cs[i].calls;
	struct ncclbpf_rt_stats st;
	ncclbpf_rt_get_stats(&st);
	CHECK_EQ_U64(st.comm[NCCLBPF_STAT_CALLS], via_plugin);
	CHECK_EQ_U64(st.comm[NCCLBPF_STAT_RUNS], via_plugin);
	CHECK_EQ_U64(st.comm[NCCLBPF_STAT_APPLIED], via_plugin);
	CHECK_EQ_U64(st.reloads_ok, n_reloads + 1);
	CHECK_EQ_U64(st.active_version, first + (uint64_t)n_reloads);
	CHECK_EQ_U64(st.comms_live, 0);
	/* Unloading waits for the reclaimer: every version's record is released exactly once. */
	ncclbpf_rt_unload();
	CHECK_EQ_U64(released, n_reloads + 1);
	if (argc > 4)
		bpf_phase(argv[4]);
	ncclbpf_rt_unload();
	ncclbpf_rt_release();
	return check_summary("test_reload_stress");
}
