/* The paths a getCollInfo call takes and what each one counts, through the exported table with
 * the adapter and runtime linked in:
 * - every call adds one to exactly one counter of its communicator, the one of its outcome (no
 *   policy, malformed, left to NCCL, invalid, or the cell of an applied decision); a decision
 *   that sets the channel count also adds to the channel histogram, nothing else does. The
 *   calls, and each call's number (seq), are the sum (ncclbpf_comm__calls);
 * - the flags that choose the register-keeping entries (ncclbpf_rt__tuner_keeps) for a program
 *   that writes no output, one that decides, and one that reads seq (which takes the plain path);
 * - the dispatch's routes with a deciding program active: other table shapes, malformed shapes,
 *   no communicator, a thread's first call (handed on by the keeping entry);
 * - a program that writes no output sees the outputs at their defaults when it reads them, and
 *   the table is left untouched (it lies in a page that faults on any access).
 * usage: test_tuner_paths [TEST_POLICY_DIR]  (tests/plugin/policies, compiled; without it only
 * the calls without a policy run) */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "harness.h"
#include "ncclbpf/runtime.h"

extern const ncclTuner_v5_t ncclTunerPlugin_v5;

/* Every counter of a communicator, in one array: seq, stats[], applied_cell, applied_channels. */
#define N_STATS	      NCCLBPF_STAT_MAX
#define N_CELLS	      (NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS)
#define N_COUNTERS    (1 + N_STATS + N_CELLS + 65)
#define AT_STAT(s)    (1 + (s))
#define AT_CELL(a, p) (1 + N_STATS + (a)*NCCLBPF_NUM_PROTOS + (p))
#define AT_CH(n)      (1 + N_STATS + N_CELLS + (n))

static void snap(const struct ncclbpf_comm *c, uint64_t *o)
{
	o[0] = c->seq;
	memcpy(o + AT_STAT(0), c->stats, sizeof(c->stats));
	memcpy(o + AT_CELL(0, 0), c->applied_cell, sizeof(c->applied_cell));
	memcpy(o + AT_CH(0), c->applied_channels, sizeof(c->applied_channels));
}

/* One getCollInfo call of bytes bytes on a num_algo x num_proto table (bytes 0: a NULL table, a
 * malformed call); CHECKs that it added one to the counter at want, and to want2 too when
 * want2 >= 0, and changed nothing else. Returns the channel count as the call left it (0 in). */
static int call_counts_shape(void *ctx, size_t bytes, int num_algo, int num_proto, int want,
			     int want2, const char *what)
{
	struct ncclbpf_comm *c = ctx;
	uint64_t before[N_COUNTERS], after[N_COUNTERS];
	float t[64];
	if (num_algo * num_proto <= 21)
		harness_table(t, num_algo, num_proto, 4, 1 << 20);
	int ch = 0;
	snap(c, before);
	uint64_t calls = ncclbpf_comm__calls(c);
	CHECK(ncclTunerPlugin_v5.getCollInfo(ctx, 4, bytes, 1, bytes == 0 ? NULL : (float **)t,
					     num_algo, num_proto, 0, &ch) == ncclSuccess);
	snap(c, after);
	int changed = 0;
	for (int i = 0; i < N_COUNTERS; i++) {
		uint64_t d = after[i] - before[i];
		if (i == want || i == want2)
			CHECKF(d == 1, "%s: counter %d +%llu, want +1", what, i,
			       (unsigned long long)d);
		else if (d)
			changed++;
	}
	CHECKF(changed == 0, "%s: %d other counters changed", what, changed);
	CHECKF(ncclbpf_comm__calls(c) == calls + 1, "%s: calls %llu -> %llu", what,
	       (unsigned long long)calls, (unsigned long long)ncclbpf_comm__calls(c));
	return ch;
}

/* The same on a 7 x 3 table, NCCL's shape since 2.23. */
static void call_counts(void *ctx, size_t bytes, int want, int want2, const char *what)
{
	call_counts_shape(ctx, bytes, 7, 3, want, want2, what);
}

static void load(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	CHECKF(ncclbpf_rt_reload(path, &r) == 0, "%s: %s", path, r.msg);
}

static int64_t seen(int k)
{
	uint32_t key = (uint32_t)k;
	int64_t v = 0;
	CHECK(ncclbpf_rt_map_lookup("seen", &key, &v) == 0);
	return v;
}

/* The decisions of tests/plugin/policies/by_size.c, counted where each belongs. */
static void by_size_outcomes(void *ctx, const char *what, int writes_channels)
{
	int ring_simple = AT_CELL(NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE);
	char w[128];
	snprintf(w, sizeof(w), "%s, left to NCCL", what);
	call_counts(ctx, 1 << 20, AT_STAT(NCCLBPF_STAT_DEFAULT), -1, w);
	snprintf(w, sizeof(w), "%s, invalid", what);
	call_counts(ctx, 1, AT_STAT(NCCLBPF_STAT_INVALID), -1, w);
	snprintf(w, sizeof(w), "%s, RING/SIMPLE", what);
	call_counts(ctx, 2, ring_simple, -1, w);
	if (!writes_channels) { /* by_size_cells.o: 3 bytes leaves NCCL's choice too */
		snprintf(w, sizeof(w), "%s, 3 bytes left to NCCL", what);
		call_counts(ctx, 3, AT_STAT(NCCLBPF_STAT_DEFAULT), -1, w);
		return;
	}
	/* channels only: the cell NCCL picks anyway, and the channel histogram */
	float t[21];
	harness_table(t, 7, 3, 4, 1 << 20); /* call_counts' table */
	int a = -1, p = -1;
	CHECK(nccl_cost_winner(t, 7, 3, &a, &p) == 0);
	snprintf(w, sizeof(w), "%s, 8 channels", what);
	call_counts(ctx, 3, AT_CELL(a, p), AT_CH(8), w);
	snprintf(w, sizeof(w), "%s, malformed", what);
	call_counts(ctx, 0, AT_STAT(NCCLBPF_STAT_BAD_CALL), -1, w);
}

struct thread_call {
	void *ctx;
	int ch;
};

static void *call_on_new_thread(void *arg)
{
	struct thread_call *tc = arg;
	float t[21];
	harness_table(t, 7, 3, 4, 1 << 20);
	tc->ch = 0;
	ncclTunerPlugin_v5.getCollInfo(tc->ctx, 4, 3, 1, (float **)t, 7, 3, 0, &tc->ch);
	return NULL;
}

/* getCollInfo's dispatch (tuner_coll_info: assembly on x86-64) with a deciding program that may
 * take a keeping entry (by_size.o): the calls it must hand on to the other paths, each decided
 * and counted as there. */
static void dispatch_routes(void *ctx)
{
	/* a well-formed table of another shape: the plain path, with the shape NCCL passed */
	float t[14];
	harness_table(t, 7, 2, 4, 1 << 20);
	int a = -1, p = -1;
	CHECK(nccl_cost_winner(t, 7, 2, &a, &p) == 0);
	CHECK(call_counts_shape(ctx, 3, 7, 2, AT_CELL(a, p), AT_CH(8), "7 x 2, 8 channels") == 8);
	/* RING/SIMPLE does not exist in a 7 x 2 table */
	call_counts_shape(ctx, 2, 7, 2, AT_STAT(NCCLBPF_STAT_INVALID), -1, "7 x 2, RING/SIMPLE");
	call_counts_shape(ctx, 2, 6, 3, AT_CELL(NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE), -1,
			  "6 x 3, RING/SIMPLE");
	/* shapes NCCL never passes: malformed */
	call_counts_shape(ctx, 2, 7, 4, AT_STAT(NCCLBPF_STAT_BAD_CALL), -1, "7 x 4");
	call_counts_shape(ctx, 2, 8, 3, AT_STAT(NCCLBPF_STAT_BAD_CALL), -1, "8 x 3");
	call_counts_shape(ctx, 2, 7, 0, AT_STAT(NCCLBPF_STAT_BAD_CALL), -1, "7 x 0");
	call_counts_shape(ctx, 2, 0, 3, AT_STAT(NCCLBPF_STAT_BAD_CALL), -1, "0 x 3");
	/* no communicator: nothing to count, success */
	int ch = 0;
	float u[21];
	harness_table(u, 7, 3, 4, 1 << 20);
	CHECK(ncclTunerPlugin_v5.getCollInfo(NULL, 4, 3, 1, (float **)u, 7, 3, 0, &ch) ==
	      ncclSuccess);
	CHECK(ch == 0);
	/* no channel pointer (NCCL always passes one): a channel request is dropped, on the
	 * keeping path and on the plain one alike (left to NCCL, counted as such) */
	struct ncclbpf_comm *cc = ctx;
	for (int np = 3; np >= 2; np--) {
		uint64_t b[N_COUNTERS], e[N_COUNTERS];
		harness_table(u, 7, np, 4, 1 << 20);
		snap(cc, b);
		CHECK(ncclTunerPlugin_v5.getCollInfo(ctx, 4, 3, 1, (float **)u, 7, np, 0, NULL) ==
		      ncclSuccess);
		snap(cc, e);
		CHECKF(e[AT_STAT(NCCLBPF_STAT_DEFAULT)] - b[AT_STAT(NCCLBPF_STAT_DEFAULT)] == 1,
		       "7 x %d, no channel pointer: counted as left to NCCL", np);
	}
	harness_table(u, 7, 3, 4, 1 << 20);
	/* a thread's first call (its epoch not yet on the inline path): the keeping entry hands
	 * it on with the arguments it was given, and the channel pointer reaches the decision */
	struct ncclbpf_comm *c = ctx;
	uint64_t before[N_COUNTERS], after[N_COUNTERS];
	snap(c, before);
	struct thread_call tc = {.ctx = ctx};
	pthread_t th;
	CHECK(pthread_create(&th, NULL, call_on_new_thread, &tc) == 0);
	CHECK(pthread_join(th, NULL) == 0);
	snap(c, after);
	CHECK(tc.ch == 8);
	CHECK(nccl_cost_winner(u, 7, 3, &a, &p) == 0);
	CHECK_EQ_U64(after[AT_CELL(a, p)] - before[AT_CELL(a, p)], 1);
	CHECK_EQ_U64(after[AT_CH(8)] - before[AT_CH(8)], 1);
}

int main(int argc, char **argv)
{
	setenv("NCCLBPF_WATCH", "0", 1);
	setenv("NCCLBPF_INSPECT", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	unsetenv("NCCLBPF_ENGINE");
	const char *dir = argc > 1 ? argv[1] : NULL;
	void *ctx = NULL;
	ncclTunerPlugin_v5.init(&ctx, 42, 8, 1, harness_logger, NULL, NULL);
	struct ncclbpf_comm *c = ctx;
	CHECK(c != NULL);

	call_counts(ctx, 1 << 20, AT_STAT(NCCLBPF_STAT_NO_POLICY), -1, "no policy");
	call_counts(ctx, 0, AT_STAT(NCCLBPF_STAT_BAD_CALL), -1, "no policy, malformed");
	if (!dir || !dir[0]) {
		ncclTunerPlugin_v5.finalize(ctx);
		return check_summary("test_tuner_paths (no test policies)");
	}
#ifdef EBPF_JIT_HAVE_KEEPING_CALL
	const int jit = 1;
#else
	const int jit = 0;
#endif

	/* A program that writes no output: the observing entry. It reads n_bytes and the outputs,
	 * which start at their defaults; the table is never touched. */
	load(dir, "observer.o");
	CHECK_EQ_U64(ncclbpf_rt_hot_.tuner_keeps, jit ? NCCLBPF_RT_KEEPS | NCCLBPF_RT_KEEPS_INPUTS |
							    NCCLBPF_RT_KEEPS_OUTPUTS |
							    NCCLBPF_RT_KEEPS_CHANNELS
						      : 0);
	call_counts(ctx, 1 << 20, AT_STAT(NCCLBPF_STAT_DEFAULT), -1, "observer");
	float *sealed = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(sealed != MAP_FAILED);
	int ch = 5;
	ncclTunerPlugin_v5.getCollInfo(ctx, 4, 12345, 1, (float **)sealed, 7, 3, 0, &ch);
	munmap(sealed, 4096);
	CHECK(ch == 5);
	CHECK_EQ_U64(seen(0), 2);
	CHECK_EQ_U64(seen(1), 12345);
	CHECK(seen(2) == NCCLBPF_ALGO_DEFAULT && seen(3) == NCCLBPF_PROTO_DEFAULT &&
	      seen(4) == NCCLBPF_CHANNELS_DEFAULT);

	/* A program that decides: the keeping entry; every outcome counted once. */
	load(dir, "by_size.o");
	const uint32_t deciding = NCCLBPF_RT_KEEPS | NCCLBPF_RT_KEEPS_INPUTS |
				  NCCLBPF_RT_KEEPS_OUTPUTS | NCCLBPF_RT_KEEPS_WRITES;
	CHECK_EQ_U64(ncclbpf_rt_hot_.tuner_keeps, jit ? deciding | NCCLBPF_RT_KEEPS_CHANNELS : 0);
	by_size_outcomes(ctx, "by_size", 1);
	dispatch_routes(ctx);

	/* The same decisions from a program that reads seq: the plain path, and the seq it sees
	 * is the number of calls before it, whatever their outcomes were. */
	load(dir, "by_size_seq.o");
	CHECK_EQ_U64(ncclbpf_rt_hot_.tuner_keeps, 0);
	by_size_outcomes(ctx, "by_size_seq", 1);
	uint64_t calls = ncclbpf_comm__calls(c), got = 0;
	uint32_t zero = 0;
	float t[21];
	harness_table(t, 7, 3, 4, 1 << 20);
	ch = 0;
	ncclTunerPlugin_v5.getCollInfo(ctx, 4, 1 << 20, 1, (float **)t, 7, 3, 0, &ch);
	CHECK(ncclbpf_rt_map_lookup("last_seq", &zero, &got) == 0);
	CHECK_EQ_U64(got, calls);
	/* 2 + 2 observer + 5 + 10 dispatch_routes (the NULL context not counted) + 5
	 * (by_size_outcomes: its malformed call runs no program) */
	CHECK_EQ_U64(got, 24);

	/* Unloaded: no policy again. */
	ncclbpf_rt_unload();
	call_counts(ctx, 1 << 20, AT_STAT(NCCLBPF_STAT_NO_POLICY), -1, "unloaded");
	uint64_t st[NCCLBPF_STAT_MAX];
	ncclbpf_comm__stats(c, st, NULL);
	CHECK_EQ_U64(st[NCCLBPF_STAT_CALLS], 26);
	CHECK_EQ_U64(st[NCCLBPF_STAT_NO_POLICY], 2);
	CHECK_EQ_U64(st[NCCLBPF_STAT_BAD_CALL], 7);
	CHECK_EQ_U64(st[NCCLBPF_STAT_RUNS], 17);

	/* A deciding program that cannot touch n_channels: the keeping entry that neither fills
	 * nor looks at it; the channel count it leaves is NCCL's, on every outcome (the invalid
	 * and left-to-NCCL ones reach the full apply and its default test with it filled). */
	load(dir, "by_size_cells.o");
	CHECK_EQ_U64(ncclbpf_rt_hot_.tuner_keeps, jit ? deciding : 0);
	by_size_outcomes(ctx, "by_size_cells", 0);
	for (int k = 0; k < 3; k++) { /* *nChannels untouched whatever the outcome */
		harness_table(t, 7, 3, 4, 1 << 20);
		ch = 6;
		ncclTunerPlugin_v5.getCollInfo(ctx, 4, (size_t)(k + 1), 1, (float **)t, 7, 3, 0,
					       &ch);
		CHECK(ch == 6);
	}
	ncclTunerPlugin_v5.finalize(ctx);
	return check_summary("test_tuner_paths");
}
