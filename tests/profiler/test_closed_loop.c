/* The paper's closed-loop experiment in its rank-consistent form (issue #8 items 4-5).
 *
 * Four simulated ranks of one communicator live in this process: each has a profiler context
 * and a tuner context (ncclProfiler_v5 / ncclTunerPlugin_v5, adapter and runtime linked in) with
 * the same commId. The bundle is policies/closed_loop_channels.o: its tuner takes the channel
 * count from the uniform map `channels_by_bucket`, its profiler program aggregates GPU latency
 * per (comm, rank, collective, size bucket) into `telemetry`. For every collective seq each rank
 * calls getCollInfo, then reports the collective to the profiler as NCCL would (Coll, then one
 * KernelCh per channel it used, GPU timestamps from a latency model: more channels help up to a
 * point, a 10x spike is injected over a range of seqs, every rank has its own clock offset,
 * speed and noise).
 *
 * The agent (a thread here; in production `ncclbpf map dump` + `ncclbpf map update --job`)
 * reads rank 0's telemetry, ramps the channel count up from a conservative 2 while latency
 * improves, backs off when latency jumps far above what the current count gave before, and
 * ramps up again after. Every change goes through the control plane (ncclbpf_cp_map_update),
 * which activates it on all four tuner contexts at one agreed seq. The test fails unless all four
 * ranks decided identically at every seq, the trajectory ramps / backs off / recovers, and the
 * control plane's decision log shows every activation at the same seq for every member.
 *
 * usage: test_closed_loop CLOSED_LOOP_CHANNELS.o [COLLECTIVES] */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "harness.h"
#include "ncclbpf/control.h"
#include "ncclbpf/runtime.h"
#include "nccl_profiler.h"

extern const ncclTuner_v5_t ncclTunerPlugin_v5;
extern const ncclProfiler_v5_t ncclProfiler_v5;

#define RANKS	   4
#define COMM	   0xc105ed100900ull
#define BYTES	   (16u << 20) /* AllReduce of 16 MiB: tuner and profiler bytes agree */
#define BUCKET	   24	       /* floor(log2(BYTES)) */
#define NCCL_CH	   8	       /* what "NCCL's choice" uses in this simulation */
#define WINDOW	   2000	       /* collectives per agent measurement */
#define SETTLE	   200	       /* collectives skipped after an activation */
#define SPIKE_GAIN 10

static long n_colls = 100000;
static long spike_lo, spike_hi;
static int *decided[RANKS]; /* n_channels each rank's tuner returned, per seq */
static int mask;
static char cp_dir[256], cp_log[300];
static _Atomic int finished;

static void quiet(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		  const char *fmt, ...)
{
	(void)flags;
	(void)file;
	(void)line;
	if (level != NCCL_LOG_WARN)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "[WARN] ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

/* GPU time (ns) of one collective on rank r at seq s with ch channels: latency + bytes over the
 * channels' bandwidth + a per-channel cost; rank-specific speed and noise; 10x inside the spike. */
static uint64_t model_ns(int r, long s, int ch)
{
	double us = 20.0 + (double)BYTES / (ch * 2500.0) + 8.0 * ch;
	us *= 1.0 + 0.03 * r;
	uint64_t h =
	    (uint64_t)s * 0x9e3779b97f4a7c15ull ^ (uint64_t)(r + 1) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	us *= 0.98 + 0.04 * (double)(h % 1000) / 1000.0;
	if (s >= spike_lo && s < spike_hi)
		us *= SPIKE_GAIN;
	return (uint64_t)(us * 1000.0);
}

/* --- The ranks ------------------------------------------------------------------------------ */

static void *tuner_ctx[RANKS], *prof_ctx[RANKS];
static uint64_t gpu_clock[RANKS];

static int tune(int r)
{
	float t[7 * 3];
	harness_table(t, 7, 3, ncclFuncAllReduce, BYTES);
	int ch = 0;
	ncclTunerPlugin_v5.getCollInfo(tuner_ctx[r], ncclFuncAllReduce, BYTES, 1, (float **)t, 7, 3,
				       0, &ch);
	return ch;
}

static void report(int r, long s, int ch)
{
	const ncclProfiler_v5_t *p = &ncclProfiler_v5;
	ncclProfilerEventDescr_v5_t d;
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileColl;
	d.rank = r;
	d.coll.seqNumber = (uint64_t)s;
	d.coll.func = "AllReduce";
	d.coll.count = BYTES / 4;
	d.coll.datatype = "ncclFloat32";
	d.coll.nChannels = (uint8_t)ch;
	d.coll.algo = "RING";
	d.coll.proto = "SIMPLE";
	void *coll = NULL;
	p->startEvent(prof_ctx[r], &coll, &d);
	p->stopEvent(coll);
	uint64_t dur = model_ns(r, s, ch), t0 = gpu_clock[r];
	for (int c = 0; c < ch; c++) {
		memset(&d, 0, sizeof(d));
		d.type = ncclProfileKernelCh;
		d.parentObj = coll;
		d.rank = r;
		d.kernelCh.channelId = (uint8_t)c;
		d.kernelCh.pTimer = t0 + (uint64_t)c * 50; /* channels start a little apart */
		void *h = NULL;
		p->startEvent(prof_ctx[r], &h, &d);
		ncclProfilerEventStateArgs_v5_t a = {.kernelCh = {.pTimer = t0 + dur}};
		p->recordEventState(h, ncclProfilerKernelChStop, &a);
		p->stopEvent(h);
	}
	gpu_clock[r] = t0 + dur + 3000;
}

/* --- The agent ------------------------------------------------------------------------------- */

struct tel_key {
	uint64_t comm_id;
	uint32_t rank, coll_type, bucket, pad;
};
struct tel_val {
	uint64_t count, total_ns, min_ns, max_ns, last_ns, last_seq;
};

static int read_rank0(struct tel_val *v)
{
	struct tel_key k = {COMM, 0, ncclFuncAllReduce, BUCKET, 0};
	return ncclbpf_rt_map_lookup("telemetry", &k, v);
}

/* The ranks run seqs < horizon; the agent moves it. Gating the ranks on the agent makes the run
 * the same in seqs whatever the machine's load: the agent measures exactly the windows it asks
 * for, and proposes changes while the ranks stand still, so every activation lands at the seq
 * it acknowledged + NCCLBPF_CP_LEAD_CALLS. (On a GPU the ranks would run on while the agent
 * thinks; that only delays reactions, which the real-time runs in tests/cp cover.) */
static _Atomic long horizon;
static _Atomic long seqs_done; /* seqs every rank has completed */
static _Atomic int agent_gone;

static void run_until(long s)
{
	atomic_store(&horizon, s);
}

/* Lets the ranks run through seq s, then returns rank 0's telemetry (or -1 when the run ended
 * first). */
static int snapshot_at(long s, struct tel_val *v)
{
	run_until(s + 1);
	for (;;) {
		if (read_rank0(v) == 0 && (long)v->last_seq >= s)
			return 0;
		if (atomic_load(&finished))
			return -1;
		usleep(100);
	}
}

/* Waits until the ranks stand at the horizon. */
static int ranks_paused(void)
{
	while (atomic_load(&seqs_done) < atomic_load(&horizon) && atomic_load(&seqs_done) < n_colls)
		usleep(100);
	return atomic_load(&seqs_done) < n_colls;
}

#define MAX_UPDATES 256
static struct {
	long seq; /* activation seq the control plane reported */
	int ch;
	double mean_us; /* the window mean that led to it */
} updates[MAX_UPDATES];
static int n_updates, n_failed;

static int submit(int ch, double mean_us, long *active_seq)
{
	uint32_t key = ncclFuncAllReduce * 64 + BUCKET, val = (uint32_t)ch;
	/* The ranks stand still until this returns, so do not wait for them to reach the
	 * activation point (done_timeout_ms < 0): the report has S once the decision is commit. */
	if (!ranks_paused())
		return -1;
	struct ncclbpf_cp_opts o = {.sz = sizeof(o), .timeout_ms = 10000, .done_timeout_ms = -1};
	struct ncclbpf_cp_report rep = {.sz = sizeof(rep)};
	int e = ncclbpf_cp_map_update(cp_dir, "channels_by_bucket", &key, sizeof(key), &val,
				      sizeof(val), &o, &rep);
	if (e == 0 && rep.n_comms == 1 && rep.comms[0].committed) {
		*active_seq = (long)rep.comms[0].seq;
		if (n_updates < MAX_UPDATES)
			updates[n_updates++] = (typeof(updates[0])){*active_seq, ch, mean_us};
	} else {
		n_failed++;
		fprintf(stderr, "map update to %d channels: %d %s\n", ch, e, rep.msg);
	}
	ncclbpf_cp_report_free(&rep);
	return e;
}

static void *agent(void *arg)
{
	(void)arg;
	enum { RAMP, HOLD, BACKOFF } state = RAMP;
	double expected[65] = {0}; /* best window mean seen per channel count (us) */
	double prev = 1e30;
	int ch = 2; /* conservative start */
	long active = 0;
	if (submit(ch, 0, &active))
		return NULL;
	while (!atomic_load(&finished)) {
		struct tel_val a, b;
		if (snapshot_at(active + SETTLE, &a) || snapshot_at((long)a.last_seq + WINDOW, &b))
			break;
		if (b.count <= a.count)
			continue;
		double m = (double)(b.total_ns - a.total_ns) / (double)(b.count - a.count) / 1000.0;
		int next = ch;
		/* What this count should give: what it gave before, or on a first visit what the
		 * previous count gave (more channels never made it 3x slower in the ramp). */
		double ref = expected[ch] > 0 ? expected[ch] : prev;
		if (m > 3 * ref) {
			/* Far slower than expected: congestion. Back off once, then hold. */
			if (state != BACKOFF) {
				next = (ch / 2) & ~1; /* an even count: the ramp measured them */
				next = next < 2 ? 2 : next;
			}
			state = BACKOFF;
		} else if (state == BACKOFF) {
			/* Back to what this count used to give: the spike is over; ramp again. */
			state = RAMP;
			prev = m;
			next = ch + 2;
		} else if (state == RAMP) {
			if (m < prev * 0.97 && ch + 2 <= 32) {
				prev = m;
				next = ch + 2;
			} else if (m >= prev * 0.97) {
				state = HOLD; /* no longer improving: go back one step and stay */
				next = ch - 2 < 2 ? 2 : ch - 2;
			} else {
				state = HOLD;
			}
		}
		if (state != BACKOFF && (expected[ch] == 0 || m < expected[ch]))
			expected[ch] = m;
		if (next != ch) {
			if (submit(next, m, &active))
				break;
			ch = next;
		} else {
			active = (long)b.last_seq; /* next window starts here */
		}
	}
	return NULL;
}

static void *agent_main(void *arg)
{
	agent(arg);
	atomic_store(&agent_gone, 1); /* never leave the ranks waiting on a horizon */
	return NULL;
}

/* --- Checks ----------------------------------------------------------------------------------- */

/* Every activation in the control plane's decision log happened at the same seq on every
 * member: lines "cp comm=C member=M seq=S g=G hash=H ...". Returns the number of generations
 * that all RANKS members activated at one seq. */
static int check_cp_log(void)
{
	FILE *f = fopen(cp_log, "r");
	CHECK(f != NULL);
	if (!f)
		return 0;
	enum { MAXG = 512 };
	static long seq_of[MAXG];
	static int members_of[MAXG];
	int bad = 0, max_g = 0;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		const char *ps = strstr(line, " seq="), *pg = strstr(line, " g=");
		if (!ps || !pg)
			continue;
		long s = atol(ps + 5);
		int g = atoi(pg + 3);
		if (g <= 0 || g >= MAXG)
			continue;
		if (members_of[g] && seq_of[g] != s) {
			bad++;
			fprintf(stderr, "cp log: generation %d at seq %ld and %ld\n", g, seq_of[g],
				s);
		}
		seq_of[g] = s;
		members_of[g]++;
		max_g = g > max_g ? g : max_g;
	}
	fclose(f);
	CHECK_EQ_U64(bad, 0);
	int full = 0;
	for (int g = 1; g <= max_g; g++)
		full += members_of[g] == RANKS;
	return full;
}

static int eff(int ch)
{
	return ch ? ch : NCCL_CH;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s CLOSED_LOOP_CHANNELS.o [COLLECTIVES]\n", argv[0]);
		return 2;
	}
	if (argc > 2)
		n_colls = atol(argv[2]);
	if (n_colls < 20000) {
		fprintf(stderr, "need at least 20000 collectives\n");
		return 2;
	}
	spike_lo = n_colls * 4 / 10;
	spike_hi = n_colls * 52 / 100;
	snprintf(cp_dir, sizeof(cp_dir), "/tmp/ncclbpf-closed-loop-XXXXXX");
	if (!mkdtemp(cp_dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(cp_log, sizeof(cp_log), "%s.log", cp_dir);
	unlink(cp_log);
	setenv("NCCLBPF_POLICY", argv[1], 1);
	setenv("NCCLBPF_WATCH", "0", 1);
	setenv("NCCLBPF_CP_DIR", cp_dir, 1);
	setenv("NCCLBPF_CP_LOG", cp_log, 1);
	setenv("NCCLBPF_CP_LEAD_CALLS", "128", 1);
	setenv("NCCLBPF_CP_POLL_MS", "2", 1);

	for (int r = 0; r < RANKS; r++) {
		decided[r] = calloc((size_t)n_colls, sizeof(int));
		/* Profiler init first, as NCCL does (it learns the rank; the tuner never does). */
		CHECK(ncclProfiler_v5.init(&prof_ctx[r], COMM, &mask, "closed-loop", 1, RANKS, r,
					   quiet) == ncclSuccess);
		ncclNvlDomainInfo_v5_t nvl = {1, RANKS, RANKS};
		static ncclTunerConstants_v5_t consts;
		CHECK(ncclTunerPlugin_v5.init(&tuner_ctx[r], COMM, RANKS, 1, quiet, &nvl,
					      &consts) == ncclSuccess);
		gpu_clock[r] = 1000000000ull * (uint64_t)(r + 1); /* unrelated clocks */
	}
	CHECK_EQ_U64(mask, ncclProfileColl | ncclProfileKernelCh);

	pthread_t ta;
	pthread_create(&ta, NULL, agent_main, NULL);
	for (long s = 0; s < n_colls; s++) {
		while (s >= atomic_load(&horizon) && !atomic_load(&agent_gone))
			usleep(20);
		for (int r = 0; r < RANKS; r++) {
			decided[r][s] = tune(r);
			report(r, s, eff(decided[r][s]));
		}
		atomic_store(&seqs_done, s + 1);
	}
	atomic_store(&finished, 1);
	pthread_join(ta, NULL);

	/* 1. Identical decisions at every seq. */
	long differ = 0;
	for (long s = 0; s < n_colls; s++)
		for (int r = 1; r < RANKS; r++)
			differ += decided[r][s] != decided[0][s];
	CHECK_EQ_U64(differ, 0);

	/* 2. The trajectory: ramp up from 2 before the spike, back off during it, recover. */
	int max_before = 0, at_spike_end = eff(decided[0][spike_hi - 1]), max_after = 0,
	    first_set = -1;
	for (long s = 0; s < spike_lo; s++) {
		if (decided[0][s] && first_set < 0)
			first_set = decided[0][s];
		max_before = eff(decided[0][s]) > max_before ? eff(decided[0][s]) : max_before;
	}
	for (long s = spike_hi; s < n_colls; s++)
		max_after = eff(decided[0][s]) > max_after ? eff(decided[0][s]) : max_after;
	CHECK_EQ_U64(first_set, 2);
	CHECK(max_before >= 12);
	CHECK(at_spike_end * 2 <= max_before);
	CHECK(max_after >= max_before - 2);
	/* The seqs the control plane reported are where the decisions changed, on every rank. */
	for (int i = 0; i < n_updates; i++) {
		long S = updates[i].seq;
		if (S <= 0 || S >= n_colls)
			continue;
		for (int r = 0; r < RANKS; r++)
			CHECK(decided[r][S] == updates[i].ch);
	}
	/* 3. The control plane's own log agrees: every generation at one seq on all members. */
	int gens = check_cp_log();
	CHECK_EQ_U64(gens, n_updates);
	CHECK_EQ_U64(n_failed, 0);

	printf("closed loop: %d ranks x %ld collectives, spike x%d over seqs [%ld, %ld)\n", RANKS,
	       n_colls, SPIKE_GAIN, spike_lo, spike_hi);
	printf("  %d channel updates through the control plane (%d activated on all %d members at "
	       "one seq), %d failed\n",
	       n_updates, gens, RANKS, n_failed);
	for (int i = 0; i < n_updates; i++)
		printf("  seq %6ld: %2d channels (rank-0 window mean %.0f us)\n", updates[i].seq,
		       updates[i].ch, updates[i].mean_us);
	printf("  max channels before the spike %d, at its end %d, after it %d; seqs where ranks "
	       "decided differently: %ld\n",
	       max_before, at_spike_end, max_after, differ);

	for (int r = 0; r < RANKS; r++) {
		ncclTunerPlugin_v5.finalize(tuner_ctx[r]);
		ncclProfiler_v5.finalize(prof_ctx[r]);
		free(decided[r]);
	}
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", cp_dir, cp_log);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", cp_dir);
	return check_summary("test_closed_loop");
}
