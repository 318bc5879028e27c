/* Control plane tests through the real plugin (docs/control-plane.md).
 *
 *   test_cp single PLUGIN VERSION_DIR TABLE_TUNER.o
 *     One process, two tuner contexts of one communicator (two ranks in one process): a bundle
 *     reload and a map update proposed by the controller library switch both contexts at the
 *     same seq; the trace shows g and the hash.
 *   test_cp multi PLUGIN VERSION_DIR [--procs N] [--reloads K] [--seed S] [--wait-ms W]
 *     N forked processes each dlopen the plugin, create one communicator with the same commId
 *     and call getCollInfo at different speeds (random sleeps, one rank that stalls now and
 *     then; a window keeps them within a few hundred calls of each other, as collectives do),
 *     while the parent reloads between four real bundles whose decisions encode their version,
 *     with faults: controllers killed at random steps or times (SIGKILL), two concurrent
 *     controllers, a garbage bundle, an unreadable bundle, a bundle refused by one rank only.
 *     Every rank records its decision per seq and the plugin's decision log (NCCLBPF_CP_LOG);
 *     the test check_failures on any seq where ranks decided differently, on a log that disagrees
 * with the decisions, or on a call that hangs (NCCLBPF_CP_WAIT_MS + a 30 s hang guard).
 *   test_cp stuck PLUGIN VERSION_DIR
 *     An acknowledged reload whose directory becomes unusable (decision neither readable nor
 *     creatable): the call at the fence still returns (bounded), with a WARN.
 *   test_cp percomm PLUGIN EXPLORE.o
 *     Per-communicator maps across a control-plane reload: two ranks of one communicator (two
 *     contexts) run policies/explore_protocols.c, whose per-bucket counts live in a
 *     per-communicator map, while a controller reloads the same bundle; each rank's count
 *     carries over at the agreed seq, so both decide at every seq as a rank that never
 *     reloaded (a forked process without control plane).
 *   test_cp split PLUGIN EXPLORE.o TRACE_DIR
 *     The GPU job of scripts/gpu-split.sh without GPUs, for its check (gpu_e2e_check.py split):
 *     4 forked ranks each belong to the whole communicator and to a half (by rank parity),
 *     make the same calls per communicator as every other rank of it but interleave the two
 *     communicators differently on each rank, under policies/explore_protocols.c, recording
 *     TRACE_DIR/trace.rankN. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "harness.h"
#include "ncclbpf/control.h"

#define COMM_ID	  0x5eed0000c0ffee01ull
#define MAX_PROCS 16

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t file_hash(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	static unsigned char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return ncclbpf_cp_hash(buf, n);
}

static void *open_comm(struct harness_plugin *p, uint64_t comm_id, int nranks)
{
	void *ctx = NULL;
	ncclNvlDomainInfo_v5_t nvl = {1, nranks, nranks};
	static ncclTunerConstants_v5_t consts;
	if (p->v5->init(&ctx, comm_id, (size_t)nranks, 1, harness_logger, &nvl, &consts) !=
	    ncclSuccess)
		return NULL;
	return ctx;
}

static void *open_ctx(struct harness_plugin *p, int nranks)
{
	return open_comm(p, COMM_ID, nranks);
}

/* One AllReduce decision; returns the channel count the plugin asked for (the version policies
 * encode their version in it: 1 + v). */
static int call(struct harness_plugin *p, void *ctx, size_t bytes)
{
	float t[7 * 3];
	harness_table(t, 7, 3, 4, bytes);
	int ch = 0;
	p->v5->getCollInfo(ctx, 4, bytes, 1, (float **)t, 7, 3, 0, &ch);
	return ch;
}

/* --- single ------------------------------------------------------------------------------- */

struct ctl_arg {
	const char *dir, *bundle;
	int map;
	struct ncclbpf_cp_report rep;
	int ret;
	volatile int done;
};

static void *ctl_thread(void *a_)
{
	struct ctl_arg *a = a_;
	struct ncclbpf_cp_opts o = {.sz = sizeof(o), .timeout_ms = 5000, .done_timeout_ms = 5000};
	a->rep.sz = sizeof(a->rep);
	if (a->map) {
		/* table_tuner's .data: row 0 (<= 4 KiB) asks for 7 channels instead of 2. */
		struct {
			uint64_t max;
			int32_t a, p, ch;
			uint32_t pad;
		} rows[6] = {{4096, 0, 0, 7, 0},      {65536, 1, 0, 4, 0},
			     {1 << 20, 1, 1, 8, 0},   {16 << 20, 1, 2, 16, 0},
			     {256 << 20, 1, 2, 0, 0}, {0, 0, 0, 0, 0}};
		uint32_t key = 0;
		a->ret = ncclbpf_cp_map_update(a->dir, ".data", &key, sizeof(key), rows,
					       sizeof(rows), &o, &a->rep);
	} else {
		a->ret = ncclbpf_cp_reload(a->dir, a->bundle, &o, &a->rep);
	}
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Drives both contexts (B lagging behind A by lag calls) while a controller runs; returns the
 * seq of the first call where ch changed from before to after on both, checking they agree. */
static int64_t drive(struct harness_plugin *p, void *a, void *b, struct ctl_arg *ca, int before,
		     int after, size_t bytes)
{
	pthread_t t;
	pthread_create(&t, NULL, ctl_thread, ca);
	int chs_a[20000], chs_b[20000];
	int na = 0, nb = 0;
	uint64_t t0 = now_ns();
	while (na < 20000 &&
	       (!__atomic_load_n(&ca->done, __ATOMIC_ACQUIRE) || !nb || chs_b[nb - 1] != after)) {
		chs_a[na++] = call(p, a, bytes);
		if (na > 7 || __atomic_load_n(&ca->done, __ATOMIC_ACQUIRE))
			chs_b[nb++] = call(p, b, bytes);
		usleep(200);
		if (now_ns() - t0 > 120000000000ull) /* hang guard */
			break;
	}
	while (nb < na)
		chs_b[nb++] = call(p, b, bytes);
	pthread_join(t, NULL);
	printf("drive: %d calls per context, %.2f s\n", na, (now_ns() - t0) / 1e9);
	int64_t sw = -1;
	for (int i = 0; i < na; i++) {
		CHECKF(chs_a[i] == chs_b[i], "seq %d: context A decided %d, B %d", i, chs_a[i],
		       chs_b[i]);
		CHECKF(chs_a[i] == before || chs_a[i] == after, "seq %d: ch %d", i, chs_a[i]);
		if (sw < 0 && chs_a[i] == after)
			sw = i;
		if (sw >= 0)
			CHECKF(chs_a[i] == after, "seq %d: back to %d after the switch", i,
			       chs_a[i]);
	}
	return sw;
}

static int run_single(const char *plugin, const char *vdir, const char *table_tuner)
{
	char dir[] = "/tmp/ncclbpf-cp-single-XXXXXX", policy[4096], v2[4096], trace[4200];
	if (!mkdtemp(dir))
		return 1;
	snprintf(policy, sizeof(policy), "%s/version1.o", vdir);
	snprintf(v2, sizeof(v2), "%s/version2.o", vdir);
	snprintf(trace, sizeof(trace), "%s/trace.txt", dir);
	char cpdir[4200];
	snprintf(cpdir, sizeof(cpdir), "%s/d", dir);
	setenv("NCCLBPF_CP_DIR", cpdir, 1);
	setenv("NCCLBPF_POLICY", policy, 1);
	setenv("NCCLBPF_CP_POLL_MS", "1", 1);
	setenv("NCCLBPF_CP_LEAD_CALLS", "16", 1);
	setenv("NCCLBPF_TRACE", trace, 1);
	struct harness_plugin p;
	if (harness_open(&p, plugin))
		return 1;
	void *a = open_ctx(&p, 2), *b = open_ctx(&p, 2);
	CHECKF(a && b, "init");
	CHECKF(call(&p, a, 1000) == 2 && call(&p, b, 1000) == 2, "launch bundle version1 (ch 2)");

	struct ctl_arg ca = {.dir = cpdir, .bundle = v2};
	int64_t sw = drive(&p, a, b, &ca, 2, 3, 1000);
	CHECKF(ca.ret == 0, "reload: %d %s", ca.ret, ca.rep.msg);
	ncclbpf_cp_report_print(&ca.rep, stdout);
	CHECKF(ca.rep.n_comms == 1 && ca.rep.comms[0].n_members == 2, "one comm, two members");
	if (ca.rep.n_comms == 1)
		for (uint32_t i = 0; i < ca.rep.comms[0].n_members; i++)
			CHECKF(ca.rep.comms[0].members[i].state == NCCLBPF_CP_ACTIVE &&
				   (int64_t)ca.rep.comms[0].members[i].seq == sw + 1 &&
				   ca.rep.comms[0].members[i].g == 1,
			       "member %u active at seq %" PRIu64 " (switch seen at %" PRId64 ")",
			       i, ca.rep.comms[0].members[i].seq, sw + 1);
	printf("bundle reload: both contexts switched at seq %" PRId64 "\n", sw + 1);
	ncclbpf_cp_report_free(&ca.rep);

	/* The trace shows the version per call: g=1 and version2's hash from the switch on. */
	FILE *f = fopen(trace, "r");
	char line[2048];
	int with_g = 0;
	char want[64];
	snprintf(want, sizeof(want), "g=1 h=%016" PRIx64, file_hash(v2));
	while (f && fgets(line, sizeof(line), f))
		with_g += strstr(line, want) != NULL;
	if (f)
		fclose(f);
	CHECKF(with_g > 0, "trace lacks '%s'", want);

	/* A bundle rejected by every member: abort, nothing changes. */
	char bad[4200];
	snprintf(bad, sizeof(bad), "%s/garbage.o", dir);
	FILE *g = fopen(bad, "w");
	fputs("not an ELF object\n", g);
	fclose(g);
	struct ncclbpf_cp_report rep = {.sz = sizeof(rep)};
	struct ncclbpf_cp_opts o = {.sz = sizeof(o), .timeout_ms = 3000, .done_timeout_ms = 3000};
	int r = ncclbpf_cp_reload(cpdir, bad, &o, &rep);
	ncclbpf_cp_report_print(&rep, stdout);
	CHECKF(r == 1 && rep.aborted == 1, "garbage bundle: %d %s", r, rep.msg);
	ncclbpf_cp_report_free(&rep);
	CHECKF(call(&p, a, 1000) == 3 && call(&p, b, 1000) == 3, "still version2");
	/* Unreadable: nothing proposed. */
	r = ncclbpf_cp_reload(cpdir, "/nonexistent/bundle.o", &o, &rep);
	CHECKF(r < 0 && strstr(rep.msg, "cannot read"), "unreadable: %d %s", r, rep.msg);
	ncclbpf_cp_report_free(&rep);

	/* Map update: table_tuner bound through a bundle reload, then its .data row 0 changed. */
	if (table_tuner && *table_tuner) {
		struct ctl_arg c2 = {.dir = cpdir, .bundle = table_tuner};
		int64_t tsw = drive(&p, a, b, &c2, 3, 2, 1000);
		CHECKF(c2.ret == 0 && tsw > 0, "reload table_tuner: %s", c2.rep.msg);
		ncclbpf_cp_report_free(&c2.rep);
		struct ctl_arg c3 = {.dir = cpdir, .map = 1};
		int64_t msw = drive(&p, a, b, &c3, 2, 7, 1000);
		ncclbpf_cp_report_print(&c3.rep, stdout);
		CHECKF(c3.ret == 0 && msw > 0, "map update: %d %s", c3.ret, c3.rep.msg);
		printf("map update: both contexts switched at seq %" PRId64 "\n", msw + 1);
		ncclbpf_cp_report_free(&c3.rep);
	}
	p.v5->finalize(a);
	p.v5->finalize(b);
	harness_close(&p);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("%s\n", check_failures ? "FAILED" : "single: OK");
	return check_failures != 0;
}

/* --- multi -------------------------------------------------------------------------------- */

struct shared {
	volatile int stop;
	volatile uint64_t seq[MAX_PROCS];
	volatile uint64_t max_call_ns[MAX_PROCS];
	volatile uint64_t calls[MAX_PROCS];
};

static struct shared *sh;
static int n_procs = 4;
static unsigned wait_ms = 200;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int rank_main(int idx, const char *plugin, const char *work, const char *vdir, uint64_t seed)
{
	char v[4200], cpdir[4200], log[4200], out[4200];
	snprintf(v, sizeof(v), "%s/version1.o", vdir);
	snprintf(cpdir, sizeof(cpdir), "%s/d", work);
	snprintf(log, sizeof(log), "%s/log.%d", work, idx);
	snprintf(out, sizeof(out), "%s/calls.%d", work, idx);
	setenv("NCCLBPF_POLICY", v, 1);
	setenv("NCCLBPF_CP_DIR", cpdir, 1);
	setenv("NCCLBPF_CP_LOG", log, 1);
	if (idx == 1) {
		/* This rank alone refuses version4: every reload to it must abort everywhere. */
		char v4[4200], h[32];
		snprintf(v4, sizeof(v4), "%s/version4.o", vdir);
		snprintf(h, sizeof(h), "%016" PRIx64, file_hash(v4));
		setenv("NCCLBPF_CP_REJECT_HASH", h, 1);
	}
	struct harness_plugin p;
	if (harness_open(&p, plugin))
		return 2;
	void *ctx = open_ctx(&p, n_procs);
	if (!ctx)
		return 3;
	size_t cap = 1 << 16, n = 0;
	unsigned char *chs = malloc(cap);
	uint64_t s = seed * 7919 + (uint64_t)idx * 104729 + 1, max_ns = 0;
	const uint64_t window = 256;
	while (!sh->stop) {
		/* Collectives keep ranks within a window of calls of each other. */
		for (;;) {
			uint64_t lo = UINT64_MAX;
			for (int i = 0; i < n_procs; i++)
				lo = sh->seq[i] < lo ? sh->seq[i] : lo;
			if (n < lo + window || sh->stop)
				break;
			usleep(50);
		}
		if (n == cap)
			chs = realloc(chs, cap *= 2);
		uint64_t t0 = now_ns();
		int ch = call(&p, ctx, 1000);
		uint64_t dt = now_ns() - t0;
		if (dt > max_ns)
			max_ns = dt;
		chs[n++] = (unsigned char)ch;
		sh->seq[idx] = n;
		uint64_t r = rnd(&s);
		if (idx == n_procs - 1 && r % 3000 == 0)
			usleep(50000 + (useconds_t)(r % 250000)); /* the stalling rank */
		else if (r % 4 == 0)
			usleep((useconds_t)(r % 200));
	}
	p.v5->finalize(ctx);
	FILE *f = fopen(out, "wb");
	if (!f || fwrite(chs, 1, n, f) != n)
		return 4;
	fclose(f);
	sh->max_call_ns[idx] = max_ns;
	sh->calls[idx] = n;
	return 0;
}

struct counts {
	int committed, aborted, errors, killed, concurrent, garbage, unreadable, v4;
};

static void kill_at_step(int step, void *arg)
{
	if (step == *(int *)arg)
		raise(SIGKILL);
}

static int reload_in_child(const char *cpdir, const char *bundle, int die_step,
			   const struct ncclbpf_cp_opts *base)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct ncclbpf_cp_opts o = *base;
		o.step = die_step ? kill_at_step : NULL;
		o.step_arg = &die_step;
		int r = ncclbpf_cp_reload(cpdir, bundle, &o, NULL);
		_exit(r < 0 ? 3 : r);
	}
	return pid;
}

static int run_multi(const char *plugin, const char *vdir, int reloads, uint64_t seed)
{
	char work[] = "/tmp/ncclbpf-cp-multi-XXXXXX";
	if (!mkdtemp(work))
		return 1;
	char cpdir[4200], garbage[4200], ws[32];
	snprintf(cpdir, sizeof(cpdir), "%s/d", work);
	snprintf(garbage, sizeof(garbage), "%s/garbage.o", work);
	FILE *g = fopen(garbage, "w");
	fputs("\177ELF but not really\n", g);
	fclose(g);
	snprintf(ws, sizeof(ws), "%u", wait_ms);
	setenv("NCCLBPF_CP_WAIT_MS", ws, 1);
	setenv("NCCLBPF_CP_POLL_MS", "1", 1);
	setenv("NCCLBPF_CP_LEAD_CALLS", "32", 1);
	setenv("NCCLBPF_WATCH", "0", 1);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset((void *)sh, 0, sizeof(*sh));
	pid_t ranks[MAX_PROCS];
	for (int i = 0; i < n_procs; i++) {
		ranks[i] = fork();
		if (ranks[i] == 0)
			_exit(rank_main(i, plugin, work, vdir, seed));
	}
	/* Wait until every rank registered. */
	char members[4300];
	snprintf(members, sizeof(members), "%s/comms/%016llx/members", cpdir,
		 (unsigned long long)COMM_ID);
	for (int tries = 0; tries < 5000; tries++) {
		int cnt = 0;
		for (int i = 0; i < n_procs; i++)
			cnt += sh->seq[i] > 0;
		if (cnt == n_procs)
			break;
		usleep(1000);
	}
	uint64_t t0 = now_ns(), s = seed * 2 + 1;
	struct counts k = {0};
	struct ncclbpf_cp_opts o = {
	    .sz = sizeof(o), .timeout_ms = 3000, .done_timeout_ms = 3000, .poll_ms = 1};
	char bundle[4200];
	int prev = 1;
	for (int i = 0; i < reloads; i++) {
		uint64_t r = rnd(&s) % 1000;
		int v = 1 + (int)(rnd(&s) % 4);
		if (v == prev)
			v = 1 + v % 4;
		snprintf(bundle, sizeof(bundle), "%s/version%d.o", vdir, v);
		struct ncclbpf_cp_report rep = {.sz = sizeof(rep)};
		int ret;
		if (r < 20) { /* garbage bundle: every member refuses */
			ret = ncclbpf_cp_reload(cpdir, garbage, &o, &rep);
			CHECKF(ret == 1, "garbage bundle committed? %d %s", ret, rep.msg);
			k.garbage++;
		} else if (r < 30) { /* unreadable: nothing proposed */
			ret = ncclbpf_cp_reload(cpdir, "/nonexistent/x.o", &o, &rep);
			CHECKF(ret < 0, "unreadable bundle: %d", ret);
			k.unreadable++;
			ret = -1;
		} else if (r < 60) { /* controller killed: at a step, or at a random time */
			int step = (int)(rnd(&s) % 4);
			pid_t pid = reload_in_child(cpdir, bundle, step, &o);
			if (!step) {
				usleep((useconds_t)(rnd(&s) % 20000));
				kill(pid, SIGKILL);
			}
			int st;
			waitpid(pid, &st, 0);
			k.killed++;
			ret = -1;
		} else if (r < 80) { /* two concurrent controllers */
			char b2[4200];
			snprintf(b2, sizeof(b2), "%s/version%d.o", vdir, 1 + (v % 4));
			pid_t p1 = reload_in_child(cpdir, bundle, 0, &o);
			pid_t p2 = reload_in_child(cpdir, b2, 0, &o);
			int s1, s2;
			waitpid(p1, &s1, 0);
			waitpid(p2, &s2, 0);
			k.concurrent++;
			ret = -1;
		} else {
			ret = ncclbpf_cp_reload(cpdir, bundle, &o, &rep);
			if (v == 4)
				CHECKF(ret == 1, "version4 (refused by rank 1) committed: %s",
				       rep.msg);
			if (v == 4)
				k.v4++;
		}
		if (ret == 0)
			k.committed++, prev = v;
		else if (ret == 1)
			k.aborted++;
		ncclbpf_cp_report_free(&rep);
		if (reloads >= 100 && i % (reloads / 10) == 0)
			fprintf(stderr, "  %d/%d reloads, %.1f s\n", i, reloads,
				(now_ns() - t0) / 1e9);
	}
	sh->stop = 1;
	for (int i = 0; i < n_procs; i++) {
		int st;
		waitpid(ranks[i], &st, 0);
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rank %d exit status %d", i, st);
	}
	double wall = (now_ns() - t0) / 1e9;

	/* Decisions: one value per seq across ranks. */
	unsigned char *chs[MAX_PROCS];
	size_t lens[MAX_PROCS], L = SIZE_MAX;
	for (int i = 0; i < n_procs; i++) {
		char path[4300];
		snprintf(path, sizeof(path), "%s/calls.%d", work, i);
		FILE *f = fopen(path, "rb");
		chs[i] = malloc(sh->calls[i] + 1);
		lens[i] = f ? fread(chs[i], 1, sh->calls[i], f) : 0;
		if (f)
			fclose(f);
		L = lens[i] < L ? lens[i] : L;
	}
	uint64_t split = 0, switches = 0;
	for (size_t q = 0; q < L; q++) {
		for (int i = 1; i < n_procs; i++)
			if (chs[i][q] != chs[0][q]) {
				if (!split)
					fprintf(stderr, "split at seq %zu: rank 0 %d, rank %d %d\n",
						q, chs[0][q], i, chs[i][q]);
				split++;
				break;
			}
		switches += q && chs[0][q] != chs[0][q - 1];
	}
	CHECKF(split == 0, "%" PRIu64 " seqs decided differently across ranks", split);

	/* Each rank's decision log: the (seq, g, hash) transitions agree across ranks and with the
	 * decisions (version v decides ch = 1 + v). */
	uint64_t vh[5];
	for (int v = 1; v <= 4; v++) {
		snprintf(bundle, sizeof(bundle), "%s/version%d.o", vdir, v);
		vh[v] = file_hash(bundle);
	}
	char *logs[MAX_PROCS];
	for (int i = 0; i < n_procs; i++) {
		char path[4300];
		snprintf(path, sizeof(path), "%s/log.%d", work, i);
		FILE *f = fopen(path, "r");
		size_t cap = 1 << 16, n = 0;
		logs[i] = malloc(cap);
		char line[512];
		uint64_t last_seq = 0, last_g = 0, hash = 0;
		int vcur = 0;
		size_t q = 0;
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long long S, G, H;
			char *p = strstr(line, "seq=");
			if (!p || sscanf(p, "seq=%llu g=%llu hash=%llx", &S, &G, &H) != 3)
				continue;
			if (n + 64 > cap)
				logs[i] = realloc(logs[i], cap *= 2);
			/* Per rank the transitions, as text, for comparing ranks below. */
			n += (size_t)snprintf(logs[i] + n, cap - n, "%llu %llu %llx\n", S, G, H);
			CHECKF(G == 0 || (G == last_g + 1 && S >= last_seq),
			       "rank %d log out of order", i);
			/* Calls before this switch ran the previous version. */
			for (; q < S && q < lens[i]; q++)
				if (vcur)
					CHECKF(chs[i][q] == 1 + vcur,
					       "rank %d seq %zu: ch %d, log says "
					       "version %d",
					       i, q, chs[i][q], vcur);
			vcur = 0;
			for (int v = 1; v <= 4; v++)
				if (vh[v] == H)
					vcur = v;
			last_seq = S;
			last_g = G;
			hash = H;
		}
		for (; q < lens[i]; q++)
			if (vcur)
				CHECKF(chs[i][q] == 1 + vcur, "rank %d seq %zu: ch %d, log says %d",
				       i, q, chs[i][q], vcur);
		(void)hash;
		logs[i][n] = 0;
		if (f)
			fclose(f);
	}
	for (int i = 1; i < n_procs; i++) {
		/* Transitions at seqs every rank reached must be identical. */
		char *a = logs[0], *b = logs[i];
		while (*a && *b) {
			unsigned long long sa = strtoull(a, NULL, 10), sb = strtoull(b, NULL, 10);
			if (sa >= L || sb >= L)
				break;
			size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
			CHECKF(la == lb && !strncmp(a, b, la),
			       "rank 0 and %d logs differ: %.*s | %.*s", i, (int)la, a, (int)lb, b);
			if (la != lb || strncmp(a, b, la))
				break;
			a += la + 1;
			b += lb + 1;
		}
	}
	uint64_t max_call = 0;
	for (int i = 0; i < n_procs; i++)
		max_call = sh->max_call_ns[i] > max_call ? sh->max_call_ns[i] : max_call;
	/* A hang guard, not a latency bound: a call waiting for a stalled rank gives up at
	 * NCCLBPF_CP_WAIT_MS by deciding abort, so it never blocks for good; on a loaded machine
	 * the process may not run for a while after that, hence the wide margin. */
	const uint64_t slack_ms = 30000;
	CHECKF(max_call <= ((uint64_t)wait_ms + slack_ms) * 1000000ull,
	       "a call took %.1f ms (bound %u + %" PRIu64 ")", max_call / 1e6, wait_ms, slack_ms);
	CHECKF(k.committed > 0, "nothing committed");
	printf("multi: %d processes, %d reloads in %.1f s: %d committed, %d aborted (incl. %d "
	       "version4 refused by rank 1, %d garbage), %d unreadable, %d controllers killed, %d "
	       "concurrent pairs; %zu seqs compared, %" PRIu64 " decision changes, %" PRIu64
	       " split decisions; longest call %.2f ms (bound %u ms + %" PRIu64 " ms slack)\n",
	       n_procs, reloads, wall, k.committed, k.aborted, k.v4, k.garbage, k.unreadable,
	       k.killed, k.concurrent, L, switches, split, max_call / 1e6, wait_ms, slack_ms);
	for (int i = 0; i < n_procs; i++) {
		free(chs[i]);
		free(logs[i]);
	}
	if (!check_failures) {
		char cmd[4300];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", work);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", work);
	} else {
		fprintf(stderr, "left %s for inspection\n", work);
	}
	printf("%s\n", check_failures ? "FAILED" : "multi: OK");
	return check_failures != 0;
}

/* --- stuck: the acknowledged reload's directory becomes unusable after the ack (replaced by a
 * file, which no permission bit undoes for root), so its decision can be neither read nor
 * created, and its controller is gone. The call at the fence returns within twice
 * NCCLBPF_CP_WAIT_MS (a hang guard of seconds here) with a WARN, and the member acknowledges
 * no later proposal: the next reload aborts. -------------------------------------------------- */

static char stuck_reloads[4300];

/* The controller's step 2 (an ack seen): break the reload's directory, then die. */
static void break_reload_dir(int step, void *arg)
{
	(void)arg;
	if (step != 2)
		return;
	char cmd[9000];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && for r in *; do mv \"$r\" \"$r.moved\" && echo x > \"$r\"; done",
		 stuck_reloads);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot break %s\n", stuck_reloads);
	_exit(0);
}

static int run_stuck(const char *plugin, const char *vdir)
{
	char dir[] = "/tmp/ncclbpf-cp-stuck-XXXXXX", policy[4096], v2[4096], cpdir[4200];
	if (!mkdtemp(dir))
		return 1;
	snprintf(policy, sizeof(policy), "%s/version1.o", vdir);
	snprintf(v2, sizeof(v2), "%s/version2.o", vdir);
	snprintf(cpdir, sizeof(cpdir), "%s/d", dir);
	snprintf(stuck_reloads, sizeof(stuck_reloads), "%s/comms/%016llx/reloads", cpdir,
		 (unsigned long long)COMM_ID);
	setenv("NCCLBPF_CP_DIR", cpdir, 1);
	setenv("NCCLBPF_POLICY", policy, 1);
	setenv("NCCLBPF_CP_WAIT_MS", "200", 1);
	setenv("NCCLBPF_CP_LEAD_CALLS", "8", 1);
	setenv("NCCLBPF_CP_POLL_MS", "1", 1);
	alarm(60); /* the old wait never ended */
	struct harness_plugin p;
	if (harness_open(&p, plugin))
		return 1;
	void *ctx = open_ctx(&p, 1);
	CHECK(ctx && call(&p, ctx, 1000) == 2); /* version1 */
	struct ncclbpf_cp_opts o = {.sz = sizeof(o), .timeout_ms = 5000, .step = break_reload_dir};
	pid_t c = fork();
	if (c == 0)
		_exit(ncclbpf_cp_reload(cpdir, v2, &o, NULL) < 0 ? 3 : 0);
	uint64_t longest = 0, t0 = now_ns();
	int st = 0, exited = 0;
	for (int k = 0; k < 3000 && now_ns() - t0 < 20000000000ull; k++) {
		uint64_t c0 = now_ns();
		int ch = call(&p, ctx, 1000);
		uint64_t took = now_ns() - c0;
		longest = took > longest ? took : longest;
		CHECKF(ch == 2, "call %d decided %d: the broken reload switched", k, ch);
		if (!exited && waitpid(c, &st, WNOHANG) == c)
			exited = 1;
		if (exited && strstr(harness_last_warn, "leaves the control plane"))
			break;
		usleep(500);
	}
	if (!exited)
		waitpid(c, &st, 0);
	printf("stuck: the longest call took %.0f ms\n", longest / 1e6);
	CHECKF(strstr(harness_last_warn, "can be neither read nor created") &&
		   strstr(harness_last_warn, "leaves the control plane"),
	       "no WARN: %s", harness_last_warn);
	CHECKF(longest < 5000000000ull, "a call waited %.1f s", longest / 1e9);
	/* The member acknowledges nothing more: the next reload aborts. */
	struct ncclbpf_cp_opts o2 = {.sz = sizeof(o2), .timeout_ms = 500, .done_timeout_ms = -1};
	struct ncclbpf_cp_report rep = {.sz = sizeof(rep)};
	int r = ncclbpf_cp_reload(cpdir, v2, &o2, &rep);
	CHECKF(r == 1 && rep.aborted == 1, "next reload: %d (%s)", r, rep.msg);
	ncclbpf_cp_report_free(&rep);
	for (int k = 0; k < 50; k++)
		CHECK(call(&p, ctx, 1000) == 2);
	p.v5->finalize(ctx);
	harness_close(&p);
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_summary("test_cp stuck");
}

/* --- percomm ------------------------------------------------------------------------------ */

#define PC_CALLS 600

/* The protocol the plugin left NCCL with for call k (the table's cheapest cell after the
 * policy's decision; sizes walk 40 buckets so that exploration spans most of the run). */
static int pc_call(struct harness_plugin *p, void *ctx, int k)
{
	float t[7 * 3];
	size_t bytes = (size_t)1 << (k % 40 % 28 + 3);
	harness_table(t, 7, 3, 4, bytes);
	int ch = 0;
	p->v5->getCollInfo(ctx, k % 40 < 28 ? 4 : 2, bytes, 1, (float **)t, 7, 3, 0, &ch);
	int best = -1;
	for (int i = 0; i < 21; i++)
		if (t[i] >= 0 && (best < 0 || t[i] < t[best]))
			best = i;
	return best % 3;
}

static int run_percomm(const char *plugin, const char *explore)
{
	int lone[PC_CALLS], fd[2];
	CHECK(pipe(fd) == 0);
	pid_t pid = fork();
	if (pid == 0) { /* the reference: one rank, no control plane, no reload */
		struct harness_plugin p;
		unsetenv("NCCLBPF_CP_DIR");
		setenv("NCCLBPF_POLICY", explore, 1);
		if (harness_open(&p, plugin))
			_exit(2);
		void *ctx = open_ctx(&p, 2);
		for (int k = 0; k < PC_CALLS; k++)
			lone[k] = pc_call(&p, ctx, k);
		_exit(write(fd[1], lone, sizeof(lone)) == (ssize_t)sizeof(lone) ? 0 : 1);
	}
	close(fd[1]);
	size_t got = 0;
	for (ssize_t n;
	     got < sizeof(lone) && (n = read(fd[0], (char *)lone + got, sizeof(lone) - got)) > 0;)
		got += (size_t)n;
	close(fd[0]);
	int st = 0;
	CHECK(got == sizeof(lone) && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0);

	char dir[] = "/tmp/ncclbpf-cp-percomm-XXXXXX", cpdir[64];
	if (!mkdtemp(dir))
		return 1;
	snprintf(cpdir, sizeof(cpdir), "%s/d", dir);
	setenv("NCCLBPF_CP_DIR", cpdir, 1);
	setenv("NCCLBPF_POLICY", explore, 1);
	setenv("NCCLBPF_CP_POLL_MS", "1", 1);
	setenv("NCCLBPF_CP_LEAD_CALLS", "16", 1);
	struct harness_plugin p;
	if (harness_open(&p, plugin))
		return 1;
	void *a = open_ctx(&p, 2), *b = open_ctx(&p, 2);
	CHECKF(a && b, "init");
	struct ctl_arg ca = {.dir = cpdir, .bundle = explore};
	pthread_t t;
	int da[PC_CALLS], db[PC_CALLS], started = 0, done_at = -1;
	for (int k = 0; k < PC_CALLS; k++) {
		if (k == 20) {
			pthread_create(&t, NULL, ctl_thread, &ca);
			started = 1;
		}
		da[k] = pc_call(&p, a, k);
		db[k] = pc_call(&p, b, k);
		if (done_at < 0 && started && __atomic_load_n(&ca.done, __ATOMIC_ACQUIRE))
			done_at = k;
		usleep(300);
	}
	pthread_join(t, NULL);
	CHECKF(ca.ret == 0, "reload: %d %s", ca.ret, ca.rep.msg);
	CHECKF(ca.rep.n_comms == 1 && ca.rep.comms[0].n_members == 2 &&
		   ca.rep.comms[0].members[0].g == 1,
	       "both members switched");
	uint64_t at = ca.rep.n_comms ? ca.rep.comms[0].members[0].seq : 0;
	printf("percomm: reload active at seq %" PRIu64 " (controller done at call %d)\n", at,
	       done_at);
	/* the switch must land while exploration still runs, or the test shows nothing */
	CHECKF(at > 20 && at < 200, "switch at seq %" PRIu64, at);
	int diff = 0;
	for (int k = 0; k < PC_CALLS; k++)
		diff += da[k] != lone[k] || db[k] != lone[k];
	CHECKF(diff == 0, "%d calls decided otherwise than a rank that never reloaded", diff);
	ncclbpf_cp_report_free(&ca.rep);

	/* the programs own a per-communicator map: a map proposal for it is refused */
	struct ncclbpf_cp_opts o = {.sz = sizeof(o), .timeout_ms = 5000, .done_timeout_ms = 5000};
	struct ncclbpf_cp_report rep = {.sz = sizeof(rep)};
	uint32_t key = 0, val = 99;
	int rc = ncclbpf_cp_map_update(cpdir, "explore_calls", &key, sizeof(key), &val, sizeof(val),
				       &o, &rep);
	ncclbpf_cp_report_print(&rep, stdout);
	CHECKF(rc != 0 && rep.n_comms == 1 && rep.comms[0].n_members == 2 &&
		   strstr(rep.comms[0].members[0].msg, "is per-communicator"),
	       "map proposal for a per-communicator map: rc %d", rc);
	ncclbpf_cp_report_free(&rep);
	p.v5->finalize(a);
	p.v5->finalize(b);
	harness_close(&p);
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return check_summary("test_cp percomm");
}

/* --- split ---------------------------------------------------------------------------------- */

static int run_split(const char *plugin, const char *explore, const char *tdir)
{
	pid_t pids[4];
	for (int r = 0; r < 4; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			char trace[4200];
			snprintf(trace, sizeof(trace), "%s/trace.rank%d", tdir, r);
			unsetenv("NCCLBPF_CP_DIR");
			setenv("NCCLBPF_POLICY", explore, 1);
			setenv("NCCLBPF_TRACE", trace, 1);
			struct harness_plugin p;
			if (harness_open(&p, plugin))
				_exit(2);
			void *world = open_comm(&p, COMM_ID, 4);
			void *half = open_comm(&p, COMM_ID + 1 + (uint64_t)(r % 2), 2);
			if (!world || !half)
				_exit(3);
			/* per communicator the same calls on every rank; their interleaving differs
			 * from rank to rank (rank r runs r + 1 world calls between half calls) */
			int w = 0, h = 0;
			while (w < 200 || h < 120) {
				for (int k = 0; k <= r && w < 200; k++, w++)
					pc_call(&p, world, w);
				if (h < 120)
					pc_call(&p, half, h++);
			}
			p.v5->finalize(half);
			p.v5->finalize(world);
			_exit(0);
		}
	}
	int bad = 0;
	for (int r = 0; r < 4; r++) {
		int st;
		waitpid(pids[r], &st, 0);
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	}
	return bad != 0;
}

/* --- ranks: N ranks of one communicator under the caller's environment (`ncclbpf run`),
 * calling until STOPFILE exists (at most 60 s); for the CLI tests. --------------------------- */

static int run_ranks(const char *plugin, int n, const char *stopfile)
{
	pid_t pids[MAX_PROCS];
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct harness_plugin p;
			if (harness_open(&p, plugin))
				_exit(2);
			void *ctx = open_ctx(&p, n);
			uint64_t t0 = now_ns();
			for (uint64_t k = 0; now_ns() - t0 < 60000000000ull; k++) {
				call(&p, ctx, 1000);
				usleep(300);
				if (k % 64 == 0 && access(stopfile, F_OK) == 0)
					break;
			}
			p.v5->finalize(ctx);
			_exit(0);
		}
	}
	int bad = 0;
	for (int i = 0; i < n; i++) {
		int st;
		waitpid(pids[i], &st, 0);
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	}
	return bad != 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "ranks"))
		return run_ranks(argv[2], atoi(argv[3]), argv[4]);
	if (argc == 4 && !strcmp(argv[1], "stuck"))
		return run_stuck(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "percomm"))
		return run_percomm(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "split"))
		return run_split(argv[2], argv[3], argv[4]);
	if (argc >= 4 && !strcmp(argv[1], "single"))
		return run_single(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
	if (argc >= 4 && !strcmp(argv[1], "multi")) {
		int reloads = 40;
		uint64_t seed = (uint64_t)time(NULL);
		for (int i = 4; i + 1 < argc; i += 2) {
			if (!strcmp(argv[i], "--procs"))
				n_procs = atoi(argv[i + 1]);
			else if (!strcmp(argv[i], "--reloads"))
				reloads = atoi(argv[i + 1]);
			else if (!strcmp(argv[i], "--seed"))
				seed = strtoull(argv[i + 1], NULL, 0);
			else if (!strcmp(argv[i], "--wait-ms"))
				wait_ms = (unsigned)atoi(argv[i + 1]);
		}
		if (n_procs < 2 || n_procs > MAX_PROCS)
			return 2;
		printf("seed %" PRIu64 "\n", seed);
		return run_multi(argv[2], argv[3], reloads, seed);
	}
	fprintf(stderr,
		"usage: test_cp single PLUGIN VERSION_DIR [TABLE_TUNER.o]\n"
		"       test_cp stuck PLUGIN VERSION_DIR\n"
		"       test_cp percomm PLUGIN EXPLORE.o\n"
		"       test_cp split PLUGIN EXPLORE.o TRACE_DIR\n"
		"       test_cp multi PLUGIN VERSION_DIR [--procs N] [--reloads K] [--seed S] "
		"[--wait-ms W]\n");
	return 2;
}
