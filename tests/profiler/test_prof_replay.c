/* A profiler trace recorded through the shipped plugin and replayed offline: the plugin (loaded
 * as NCCL loads it) records, with NCCLBPF_TRACE naming a per-process file (%h host, %p pid),
 * the events of two communicators (profiler tables v5 and v6) running policies/profiler_latency
 * (collectives counted per communicator, rank, collective type and size bucket, with their GPU
 * latencies); `ncclbpf replay --json` passes that trace through the plugin again and the
 * resulting `latency` map must hold exactly what the driven stream implies: every bucket's
 * count, total, minimum, maximum and last latency and last seq. While recording, `ncclbpf stat`
 * of this process must count the profiler program's runs: one per finished collective, all of
 * them COLL_END (profiler_latency is SEC("profiler/coll_end")).
 *
 * usage: test_prof_replay PLUGIN.so NCCLBPF-CLI PROFILER_LATENCY.o WORKDIR */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "json_tree.h"
#include "ncclbpf.h"
#include "ncclbpf/proc_registry.h"
#include "prof_stream.h"

#define MAX_KEYS 32

/* What the policy must have counted for one (comm, rank, collective type, bucket). */
struct expect {
	uint64_t comm;
	uint32_t rank, coll, bucket;
	uint64_t count, total, min, max, last, last_seq;
	int seen;
};
static struct expect want[MAX_KEYS];
static int n_want;
static uint64_t n_colls, n_channels;

static uint32_t log2_u64(uint64_t v)
{
	uint32_t b = 0;
	while (v >>= 1)
		b++;
	return b;
}

static void expect_coll(uint64_t comm, uint32_t rank, uint32_t coll, uint64_t bytes, uint64_t seq,
			uint64_t ns)
{
	uint32_t bucket = log2_u64(bytes);
	struct expect *e = NULL;
	for (int i = 0; i < n_want; i++)
		if (want[i].comm == comm && want[i].rank == rank && want[i].coll == coll &&
		    want[i].bucket == bucket)
			e = &want[i];
	if (!e) {
		e = &want[n_want++];
		*e = (struct expect){comm, rank, coll, bucket, 0, 0, ns, ns, 0, 0, 0};
	}
	e->count++;
	e->total += ns;
	e->min = ns < e->min ? ns : e->min;
	e->max = ns > e->max ? ns : e->max;
	e->last = ns;
	e->last_seq = seq;
}

static void quiet(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		  const char *fmt, ...)
{
	(void)flags, (void)file, (void)line, (void)fmt;
	if (level == NCCL_LOG_WARN)
		fprintf(stderr, "[plugin WARN]\n");
}

/* One communicator's stream: collectives of several types and sizes, each with its channels
 * reported after the host stop (as NCCL's proxy thread does), with proxy-control noise in
 * between. GPU times are chosen so that the latencies differ per collective. */
static void *drive(const struct prof_api *a, uint64_t comm, int rank, uint32_t salt)
{
	static const struct {
		const char *func, *dtype;
		uint32_t coll;
		size_t count, elem;
	} kinds[] = {
	    {"AllReduce", "ncclFloat32", NCCLBPF_COLL_ALLREDUCE, 256, 4},    /* 1 KiB */
	    {"AllReduce", "ncclFloat32", NCCLBPF_COLL_ALLREDUCE, 262144, 4}, /* 1 MiB */
	    {"AllGather", "ncclInt8", NCCLBPF_COLL_ALLGATHER, 4096, 1},	     /* 4 KiB */
	    {"AllReduce", "ncclBfloat16", NCCLBPF_COLL_ALLREDUCE, 3000, 2},  /* 6000 B */
	};
	static int mask;
	void *ctx = NULL;
	CHECK(ps_init(a, &ctx, &mask, comm, 1, 2, rank, quiet) == ncclSuccess && ctx);
	CHECK(mask & ncclProfileColl && mask & ncclProfileKernelCh);
	for (uint64_t seq = 0; seq < 40; seq++) {
		size_t k = (seq % 7 + salt) % 4; /* uneven: buckets get different counts */
		int nch = 1 + (int)((seq + salt) % 4);
		void *coll = ps_coll_host(a, ctx, rank, seq, kinds[k].func, kinds[k].count,
					  kinds[k].dtype, nch, "RING", "SIMPLE");
		ps_proxy_ctrl(a, ctx, rank);
		uint64_t base = 1000000000ull * (salt + 1) + seq * 100000, lo = ~0ull, hi = 0;
		for (int ch = 0; ch < nch; ch++) {
			uint64_t s = base + (uint64_t)ch * 13, e = s + 2000 + seq * 17 + ch * 101;
			ps_kch(a, ctx, coll, rank, ch, s, e);
			lo = s < lo ? s : lo;
			hi = e > hi ? e : hi;
		}
		n_colls++;
		n_channels += (uint64_t)nch;
		expect_coll(comm, (uint32_t)rank, kinds[k].coll, kinds[k].count * kinds[k].elem,
			    seq, hi - lo);
	}
	return ctx;
}

static uint64_t u64_of(const struct json *obj, const char *key)
{
	const struct json *v = json_get(obj, key);
	return v && v->kind == JSON_NUM ? strtoull(v->num_text, NULL, 10) : ~0ull;
}

/* Runs cmd through the shell; what it prints on stdout in out (NUL-terminated, *len bytes).
 * Returns pclose's status, -1 when it could not start. */
static int run_stdout(const char *cmd, char *out, size_t cap, size_t *len)
{
	*len = 0;
	out[0] = 0;
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	*len = fread(out, 1, cap - 1, p);
	out[*len] = 0;
	return pclose(p);
}

/* `ncclbpf stat` of this process: the profiler program ran once per finished collective. */
static void check_stat(const char *cli, const char *cp_dir)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "%s stat %d --dir %s --json", cli, (int)getpid(), cp_dir);
	static char out[1 << 18];
	size_t n;
	int st = run_stdout(cmd, out, sizeof(out), &n);
	CHECK(st != -1);
	if (st == -1)
		return;
	CHECKF(st == 0, "%s failed: %s", cmd, out);
	struct json *d = json_parse(out, n, NULL, 0);
	CHECKF(d != NULL, "stat --json is not JSON: %.300s", out);
	const struct json *progs = json_get(d, "progs"), *prof = NULL;
	for (int i = 0; progs && progs->kind == JSON_ARR && i < progs->n; i++)
		if (json_str(progs->v[i], "hook") &&
		    !strcmp(json_str(progs->v[i], "hook"), "profiler"))
			prof = progs->v[i];
	CHECKF(prof != NULL, "stat lists no profiler program: %.300s", out);
	CHECK_EQ_U64(u64_of(prof, "runs"), n_colls);
	CHECK_EQ_U64(u64_of(prof, "runs_coll_end"), n_colls);
	CHECK_EQ_U64(u64_of(prof, "runs_coll_start"), 0);
	CHECK_EQ_U64(u64_of(prof, "runs_kernel_ch"), 0);
	json_free(d);
}

static void check_replay(const char *cli, const char *policy, const char *trace, const char *dir)
{
	char cmd[20000], err_path[4200];
	snprintf(err_path, sizeof(err_path), "%s/replay.err", dir);
	snprintf(cmd, sizeof(cmd), "%s replay --policy %s --maps latency --json %s 2>%s", cli,
		 policy, trace, err_path);
	static char out[1 << 20];
	size_t n;
	int st = run_stdout(cmd, out, sizeof(out), &n);
	CHECK(st != -1);
	if (st == -1)
		return;
	CHECKF(st == 0, "replay failed: %s (stderr in %s)", cmd, err_path);
	char err[256];
	struct json *d = json_parse(out, n, err, sizeof(err));
	CHECKF(d != NULL, "replay --json is not JSON (%s): %.300s", err, out);
	if (!d)
		return;
	const struct json *prof = json_get(d, "profiler");
	CHECK_EQ_U64(u64_of(prof, "comms"), 2);
	CHECK_EQ_U64(u64_of(prof, "collectives"), n_colls);
	CHECK_EQ_U64(u64_of(prof, "channels"), n_channels);
	CHECK_EQ_U64(u64_of(prof, "orphans"), 0);
	const struct json *maps = json_get(d, "maps");
	CHECK(maps && maps->kind == JSON_ARR && maps->n == 1);
	const struct json *elems = maps && maps->n == 1 ? json_get(maps->v[0], "elements") : NULL;
	CHECK(elems && elems->kind == JSON_ARR);
	int n_elems = elems && elems->kind == JSON_ARR ? elems->n : 0;
	CHECK_EQ_U64((uint64_t)n_elems, (uint64_t)n_want);
	for (int i = 0; i < n_elems; i++) {
		const struct json *k = json_get(elems->v[i], "key");
		const struct json *v = json_get(elems->v[i], "value");
		struct expect *e = NULL;
		for (int w = 0; w < n_want; w++)
			if (want[w].comm == u64_of(k, "comm_id") &&
			    want[w].rank == u64_of(k, "rank") &&
			    want[w].coll == u64_of(k, "coll_type") &&
			    want[w].bucket == u64_of(k, "bucket"))
				e = &want[w];
		CHECKF(e != NULL, "unexpected key: comm %llu rank %llu coll %llu bucket %llu",
		       (unsigned long long)u64_of(k, "comm_id"),
		       (unsigned long long)u64_of(k, "rank"),
		       (unsigned long long)u64_of(k, "coll_type"),
		       (unsigned long long)u64_of(k, "bucket"));
		if (!e)
			continue;
		e->seen++;
		CHECK_EQ_U64(u64_of(v, "count"), e->count);
		CHECK_EQ_U64(u64_of(v, "total_ns"), e->total);
		CHECK_EQ_U64(u64_of(v, "min_ns"), e->min);
		CHECK_EQ_U64(u64_of(v, "max_ns"), e->max);
		CHECK_EQ_U64(u64_of(v, "last_ns"), e->last);
		CHECK_EQ_U64(u64_of(v, "last_seq"), e->last_seq);
	}
	for (int w = 0; w < n_want; w++)
		CHECKF(want[w].seen == 1, "bucket %u of collective %u (rank %u) seen %d times",
		       want[w].bucket, want[w].coll, want[w].rank, want[w].seen);
	json_free(d);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: %s PLUGIN.so NCCLBPF-CLI PROFILER_LATENCY.o WORKDIR\n",
			argv[0]);
		return 2;
	}
	const char *lib = argv[1], *cli = argv[2], *policy = argv[3], *dir = argv[4];
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	char host[256], trace[4200], tmpl[4200];
	ncclbpf_rt_host_name(host, sizeof(host));
	snprintf(tmpl, sizeof(tmpl), "%s/prof.%%h.%%p.trace", dir);
	snprintf(trace, sizeof(trace), "%s/prof.%s.%d.trace", dir, host, (int)getpid());
	unlink(trace);
	setenv("NCCLBPF_TRACE", tmpl, 1);
	setenv("NCCLBPF_POLICY", policy, 1);
	setenv("NCCLBPF_WATCH", "0", 1);
	/* Inspection under a private directory, for `ncclbpf stat --dir`. */
	char cp_dir[4200];
	snprintf(cp_dir, sizeof(cp_dir), "%s/cp", dir);
	if (mkdir(cp_dir, 0700) != 0 && errno != EEXIST)
		perror(cp_dir);
	setenv("NCCLBPF_CP_DIR", cp_dir, 1);
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	CHECKF(h != NULL, "dlopen %s: %s", lib, dlerror());
	if (!h)
		return check_summary("test_prof_replay");
	struct prof_api v5 = {5, dlsym(h, "ncclProfiler_v4"), dlsym(h, "ncclProfiler_v5"),
			      dlsym(h, "ncclProfiler_v6")};
	struct prof_api v6 = v5;
	v6.version = 6;
	CHECK(v5.v4 && v5.v5 && v5.v6);
	if (v5.v4 && v5.v5 && v5.v6) {
		CHECK(ps_finalize(&v5, drive(&v5, 0x1111aaaa2222bbbbull, 0, 0)) == ncclSuccess);
		void *ctx = drive(&v6, 0x3333cccc4444ddddull, 1, 3);
		check_stat(cli, cp_dir);
		CHECK(ps_finalize(&v6, ctx) == ncclSuccess);
	}
	dlclose(h);
	unsetenv("NCCLBPF_TRACE");
	unsetenv("NCCLBPF_CP_DIR");
	struct stat st;
	CHECKF(stat(trace, &st) == 0 && st.st_size > 0,
	       "no trace at %s (NCCLBPF_TRACE=%s: %%h, %%p not expanded?)", trace, tmpl);
	check_replay(cli, policy, trace, dir);
	return check_summary("test_prof_replay");
}
