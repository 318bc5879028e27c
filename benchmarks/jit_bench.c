/* JIT benchmark, every figure a ratio against a baseline measured in the same run:
 *  1. compute kernels (benchmarks/jit_kernels.c, the same C compiled by gcc -O2 and by clang
 *     -target bpf): JIT time / native time (target <= 2) and interpreter time / JIT time
 *     (target >= 5); the three results must agree;
 *  2. call overhead of a no-op program through the JIT entry point and through ebpf_exec__run
 *     against a no-op C function called through a function pointer (target: within 2 ns);
 *  3. compile time and code size of policy-shaped programs and the kernels (target < 20 us).
 *
 *   jit_bench KERNEL_DIR [POLICY_DIR] [--quick]
 * KERNEL_DIR holds k_<name>.bin (raw instructions); POLICY_DIR the compiled policies (*.o),
 * whose programs are loaded (verified) once and then compiled repeatedly; --quick runs a few
 * iterations (smoke test). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "insn_macros.h"
#include "ncclbpf/runtime.h"
#include "ebpf/helpers.h"
#include "ebpf/jit.h"
#include "ebpf/maps.h"
#include "ebpf/object.h"
#include "ebpf/exec.h"
#include "ncclbpf/nccl_platform.h"
#include "skip.h"

uint64_t k_sieve(uint64_t *mem, uint64_t len);
uint64_t k_log2(uint64_t *mem, uint64_t len);
uint64_t k_memcpy(uint64_t *mem, uint64_t len);
uint64_t k_switch(uint64_t *mem, uint64_t len);

static int quick;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct ebpf_exec *load_bin(const char *dir, const char *name)
{
	char path[1024], err[256];
	struct ebpf_insn insns[4096];
	struct ebpf_exec_opts po = {.sz = sizeof(po), .helpers = ebpf_helpers_default()};
	struct ebpf_exec *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s.bin", dir, name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(2);
	}
	n = fread(insns, sizeof(insns[0]), 4096, f);
	fclose(f);
	p = ebpf_exec__new(insns, (uint32_t)n, &po, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "%s: %s\n", name, err);
		exit(2);
	}
	return p;
}

/* --- 1. compute kernels ---------------------------------------------------------------------- */

typedef uint64_t (*kernel_fn)(uint64_t *, uint64_t);

static uint64_t mem[2048] __attribute__((aligned(64)));

static void init_mem(void)
{
	for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++)
		mem[i] = i * 0x9e3779b97f4a7c15ull + 12345;
}

/* Best of several trials of the mean time per call. */
static double time_native(kernel_fn volatile fn, uint64_t len, int calls, uint64_t *res)
{
	double best = 1e30;

	for (int t = 0; t < (quick ? 1 : 7); t++) {
		uint64_t t0 = now_ns(), r = 0;

		for (int i = 0; i < calls; i++)
			r = fn(mem, len);
		double ns = (double)(now_ns() - t0) / calls;
		if (ns < best)
			best = ns;
		*res = r;
	}
	return best;
}

static double time_jit(ebpf_jit_fn volatile fn, uint64_t len, int calls, uint64_t *res)
{
	double best = 1e30;

	for (int t = 0; t < (quick ? 1 : 7); t++) {
		uint64_t t0 = now_ns(), r = 0;

		for (int i = 0; i < calls; i++)
			r = fn((uintptr_t)mem, len);
		double ns = (double)(now_ns() - t0) / calls;
		if (ns < best)
			best = ns;
		*res = r;
	}
	return best;
}

static double time_interp(const struct ebpf_exec *p, uint64_t len, int calls, uint64_t *res)
{
	double best = 1e30;

	for (int t = 0; t < (quick ? 1 : 3); t++) {
		uint64_t t0 = now_ns(), r = 0, r0 = 0;

		for (int i = 0; i < calls; i++) {
			ebpf_exec__run(p, EBPF_ENGINE_INTERP, (uintptr_t)mem, len, NULL, &r0);
			r = r0;
		}
		double ns = (double)(now_ns() - t0) / calls;
		if (ns < best)
			best = ns;
		*res = r;
	}
	return best;
}

static int bench_kernels(const char *dir)
{
	static const struct {
		const char *name;
		kernel_fn native;
		uint64_t len;
	} k[] = {
	    {"k_sieve", k_sieve, 8192},
	    {"k_log2", k_log2, 2048},
	    {"k_memcpy", k_memcpy, 2048},
	    {"k_switch", k_switch, 2048},
	};
	int bad = 0;

	printf("\n1. compute kernels (ns per call; best of several trials)\n");
	printf("   %-9s %11s %11s %11s %10s %10s\n", "kernel", "gcc -O2", "JIT", "interp",
	       "JIT/gcc", "interp/JIT");
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct ebpf_exec *p = load_bin(dir, k[i].name);
		char err[256];
		uint64_t rn, rj, ri;
		int calls = quick ? 2 : 2000;
		double tn, tj, ti;

		if (ebpf_exec__jit(p, NULL, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", k[i].name, err);
			return 1;
		}
		init_mem();
		tn = time_native(k[i].native, k[i].len, calls, &rn);
		init_mem();
		tj = time_jit(ebpf_exec__jit_fn(p), k[i].len, calls, &rj);
		init_mem();
		ti = time_interp(p, k[i].len, quick ? 1 : 100, &ri);
		printf("   %-9s %11.0f %11.0f %11.0f %9.2fx %9.1fx\n", k[i].name + 2, tn, tj, ti,
		       tj / tn, ti / tj);
		if (rn != rj || rj != ri) {
			fprintf(stderr, "%s: results differ: native %llu jit %llu interp %llu\n",
				k[i].name, (unsigned long long)rn, (unsigned long long)rj,
				(unsigned long long)ri);
			bad = 1;
		}
		ebpf_exec__free(p);
	}
	return bad;
}

/* --- 2. call overhead ------------------------------------------------------------------------ */

__attribute__((noinline)) static uint64_t native_noop(uint64_t a, uint64_t b)
{
	__asm__ volatile("");
	return 0;
}

/* One timed round of n calls of fn through a pointer: ns per call. */
static double call_round(uint64_t (*volatile fn)(uint64_t, uint64_t), long n)
{
	uint64_t t0 = now_ns(), r = 0;

	for (long i = 0; i < n; i++)
		r += fn((uint64_t)i, 0);
	double ns = (double)(now_ns() - t0) / (double)n;
	if (r == 42)
		printf("?");
	return ns;
}

static double per_call(uint64_t (*volatile fn)(uint64_t, uint64_t), long n)
{
	double best = 1e30;

	for (int t = 0; t < (quick ? 1 : 9); t++) {
		double ns = call_round(fn, n);
		if (ns < best)
			best = ns;
	}
	return best;
}

static double per_run(const struct ebpf_exec *p, enum ebpf_engine e, long n)
{
	double best = 1e30;

	for (int t = 0; t < (quick ? 1 : 9); t++) {
		uint64_t t0 = now_ns(), r = 0, r0;

		for (long i = 0; i < n; i++) {
			ebpf_exec__run(p, e, (uint64_t)i, 0, NULL, &r0);
			r += r0;
		}
		double ns = (double)(now_ns() - t0) / (double)n;
		if (ns < best)
			best = ns;
		if (r == 42)
			printf("?");
	}
	return best;
}

/* The runtime's hot-path entry (epoch section, active-policy load, JIT call) on a tuner
 * context, with the no-op policy loaded from policy_dir: inline, as the adapters' hooks use it. */
static const float zero_costs[NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS];
static struct ncclbpf_rt_tuner_ctx rt_ctx = {.cost_f32 = zero_costs};

static double rt_round(long n)
{
	uint64_t t0 = now_ns(), r = 0, ver = 0;

	for (long i = 0; i < n; i++) {
		rt_ctx.x.seq = (uint64_t)i;
		r += (uint64_t)ncclbpf_rt_run_tuner(&rt_ctx, &ver);
	}
	double ns = (double)(now_ns() - t0) / (double)n;
	if (r == 42)
		printf("?");
	return ns;
}

/* The same entry inside a function that the caller reaches through a pointer, as NCCL reaches
 * a hook: compared with per_call(native_noop), this is what a hook adds over one that calls no
 * policy at all (the hook's own call is in both). */
__attribute__((noinline)) static uint64_t hook_shaped(uint64_t seq, uint64_t unused)
{
	uint64_t ver = 0;
	(void)unused;
	rt_ctx.x.seq = seq;
	return (uint64_t)ncclbpf_rt_run_tuner(&rt_ctx, &ver);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static double median_d(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int bench_calls(const char *policy_dir)
{
	struct ebpf_insn noop[] = {MOV64_IMM(0, 0), EXIT()};
	struct ebpf_exec *p = ebpf_exec__new(noop, INSN_CNT(noop), NULL, NULL, 0);
	long n = quick ? 1000 : 20000000;
	double tc, tj, tr, ti;

	if (!p || ebpf_exec__jit(p, NULL, NULL, 0))
		return 1;
	tc = per_call(native_noop, n);
	tj = per_call(ebpf_exec__jit_fn(p), n);
	tr = per_run(p, EBPF_ENGINE_DEFAULT, n);
	ti = per_run(p, EBPF_ENGINE_INTERP, n / 10);
	printf("\n2. no-op call (ns per call, best of 9 x %ld calls)\n", n);
	printf("   C function through a pointer   %6.2f\n", tc);
	printf("   JIT entry point (fn pointer)    %6.2f   (+%.2f ns over C)\n", tj, tj - tc);
	printf("   ebpf_exec__run, default engine  %6.2f   (+%.2f ns over C)\n", tr, tr - tc);
	printf("   ebpf_exec__run, interpreter     %6.2f   (%.1fx the JIT entry)\n", ti, ti / tj);
	if (policy_dir) {
		char path[4096];
		struct ncclbpf_reload_report rep = {.sz = sizeof(rep)};

		snprintf(path, sizeof(path), "%s/noop.o", policy_dir);
		setenv("NCCLBPF_WATCH", "0", 1);
		ncclbpf_rt_acquire();
		if (ncclbpf_rt_reload(path, &rep) == 0) {
			/* Interleaved rounds, each entry round paired with a C round just before
			 * it: a shared machine's drift (frequency, neighbours) cancels in the
			 * differences, which best-of-N figures taken minutes apart do not. */
			enum { ROUNDS = 15 };
			int rounds = quick ? 1 : ROUNDS;
			long m = quick ? n : n / 4;
			double c[ROUNDS], e[ROUNDS], h[ROUNDS], de[ROUNDS], dh[ROUNDS];
			for (int t = 0; t < rounds; t++) {
				c[t] = call_round(native_noop, m);
				e[t] = rt_round(m);
				h[t] = call_round(hook_shaped, m);
				de[t] = e[t] - c[t];
				dh[t] = h[t] - c[t];
			}
			printf(
			    "   runtime entry, %d paired rounds x %ld calls (medians; differences "
			    "paired per round)\n",
			    rounds, m);
			printf("   C function through a pointer   %6.2f\n", median_d(c, rounds));
			printf("   runtime entry (ncclbpf_rt_run_tuner, noop.o, JIT)  %6.2f   "
			       "(+%.2f ns over C)\n",
			       median_d(e, rounds), median_d(de, rounds));
			printf("   hook through a pointer running that entry   %6.2f   "
			       "(+%.2f ns over C)\n",
			       median_d(h, rounds), median_d(dh, rounds));
		} else {
			printf("   runtime entry: %s\n", rep.msg);
		}
		ncclbpf_rt_release();
	}
	ebpf_exec__free(p);
	return 0;
}

/* --- 3. compile time ------------------------------------------------------------------------- */

static void compile_stats(const char *name, const struct ebpf_insn *insns, uint32_t n,
			  const struct ebpf_exec_opts *po)
{
	int reps = quick ? 3 : 301;
	uint64_t *t = calloc((size_t)reps, sizeof(*t));
	struct ebpf_jit_stats st = {0};

	for (int i = 0; i < reps; i++) {
		char err[256];
		struct ebpf_exec *p = ebpf_exec__new(insns, n, po, err, sizeof(err));

		if (!p || ebpf_exec__jit(p, &st, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", name, err);
			exit(1);
		}
		t[i] = st.compile_ns;
		ebpf_exec__free(p);
	}
	qsort(t, (size_t)reps, sizeof(*t), cmp_u64);
	printf("   %-22s %5u insns %6u bytes  median %6.2f us  min %6.2f us  %s\n", name, n,
	       st.code_size, (double)t[reps / 2] / 1e3, (double)t[0] / 1e3,
	       st.n_inlined ? "(lookups inlined)" : "");
	free(t);
}

static void bench_compile(const char *dir)
{
	char err[128];
	struct ebpf_map_def ad = {.sz = sizeof(ad),
				  .name = "cfg",
				  .type = EBPF_MAP_TYPE_ARRAY,
				  .key_size = 4,
				  .value_size = 16,
				  .max_entries = 8};
	struct ebpf_map_def hd = {.sz = sizeof(hd),
				  .name = "tel",
				  .type = EBPF_MAP_TYPE_HASH,
				  .key_size = 8,
				  .value_size = 32,
				  .max_entries = 64};
	struct ebpf_map *maps[2] = {ebpf_map__create(&ad, err, sizeof(err)),
				    ebpf_map__create(&hd, err, sizeof(err))};
	struct ebpf_exec_opts po = {
	    .sz = sizeof(po), .helpers = ebpf_helpers_default(), .maps = maps, .n_maps = 2};
	struct ebpf_insn noop[] = {MOV64_IMM(0, 0), EXIT()};
	/* size-aware tuner: reads n_bytes (ctx + 8) and coll_type (ctx + 24), writes algorithm,
	 * protocol and channels (ctx + 224/228/232) */
	struct ebpf_insn size_aware[] = {
	    LDX_MEM(EBPF_DW, 2, 1, 8),
	    LDX_MEM(EBPF_W, 3, 1, 24),
	    JMP_IMM(EBPF_JGT, 2, 4096, 4),
	    ST_MEM(EBPF_W, 1, 224, 0),
	    ST_MEM(EBPF_W, 1, 228, 2),
	    ST_MEM(EBPF_W, 1, 232, 2),
	    JA(11),
	    JMP_IMM(EBPF_JGT, 2, 1 << 20, 7),
	    ST_MEM(EBPF_W, 1, 224, 1),
	    ST_MEM(EBPF_W, 1, 228, 0),
	    MOV64_IMM(4, 4),
	    JMP_IMM(EBPF_JNE, 3, 4, 1),
	    MOV64_IMM(4, 6),
	    STX_MEM(EBPF_W, 1, 4, 232),
	    JA(3),
	    ST_MEM(EBPF_W, 1, 224, 1),
	    ST_MEM(EBPF_W, 1, 228, 2),
	    ST_MEM(EBPF_W, 1, 232, 8),
	    MOV64_IMM(0, 0),
	    EXIT(),
	};
	/* two lookups: a constant ARRAY (inlined) and a HASH keyed by the communicator */
	struct ebpf_insn lookups[] = {
	    MOV64_REG(6, 1),
	    LDX_MEM(EBPF_W, 2, 6, 24),
	    STX_MEM(EBPF_W, 10, 2, -4),
	    LD_MAP_FD(1, 0),
	    MOV64_REG(2, 10),
	    ALU64_IMM(EBPF_ADD, 2, -4),
	    CALL_HELPER(EBPF_FUNC_map_lookup_elem),
	    MOV64_IMM(7, 0),
	    JMP_IMM(EBPF_JEQ, 0, 0, 1),
	    LDX_MEM(EBPF_DW, 7, 0, 8),
	    LDX_MEM(EBPF_DW, 2, 6, 0),
	    STX_MEM(EBPF_DW, 10, 2, -16),
	    LD_MAP_FD(1, 1),
	    MOV64_REG(2, 10),
	    ALU64_IMM(EBPF_ADD, 2, -16),
	    CALL_HELPER(EBPF_FUNC_map_lookup_elem),
	    JMP_IMM(EBPF_JEQ, 0, 0, 3),
	    LDX_MEM(EBPF_DW, 1, 0, 0),
	    JMP_REG(EBPF_JGT, 1, 7, 1),
	    STX_MEM(EBPF_W, 6, 7, 232),
	    MOV64_IMM(0, 0),
	    EXIT(),
	};
	static const char *const kernels[] = {"k_sieve", "k_log2", "k_memcpy", "k_switch"};

	printf("\n3. compile time (median of %d compiles; includes mmap + mprotect)\n",
	       quick ? 3 : 301);
	compile_stats("noop", noop, INSN_CNT(noop), &po);
	compile_stats("size_aware (tuner)", size_aware, INSN_CNT(size_aware), &po);
	compile_stats("two map lookups", lookups, INSN_CNT(lookups), &po);
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
		struct ebpf_exec *p = load_bin(dir, kernels[i]);

		compile_stats(kernels[i], ebpf_exec__insns(p), ebpf_exec__insn_cnt(p), &po);
		ebpf_exec__free(p);
	}
	ebpf_map__free(maps[0]);
	ebpf_map__free(maps[1]);
}

/* Every program of every shipped policy: loaded and verified once, then compiled repeatedly
 * from its loaded form (maps resolved, so constant ARRAY lookups are inlined as at run time). */
static int bench_policies(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d) {
		printf("   (no policy directory %s)\n", dir);
		return 0;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[1024], err[256], name[160];
		struct ebpf_object *obj;
		struct ebpf_object_load_opts lo = {.sz = sizeof(lo)};
		struct ebpf_map *maps[EBPF_OBJECT_MAX_MAPS];
		struct ebpf_exec_opts po = {.sz = sizeof(po), .helpers = ebpf_helpers_default()};
		struct ebpf_program *pg = NULL;

		if (len < 3 || strcmp(de->d_name + len - 2, ".o"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		obj = ncclbpf_object_open_file(path, NULL, err, sizeof(err));
		if (!obj || ebpf_object__load(obj, &lo, err, sizeof(err))) {
			printf("   %-22s not loaded: %s\n", de->d_name, err);
			ebpf_object__close(obj);
			continue;
		}
		po.n_maps = ebpf_object__map_cnt(obj);
		for (uint32_t i = 0; i < po.n_maps && i < EBPF_OBJECT_MAX_MAPS; i++)
			maps[i] = ebpf_object_map__map(ebpf_object__map(obj, i));
		po.maps = maps;
		while ((pg = ebpf_object__next_program(obj, pg))) {
			struct ebpf_exec *lp = ebpf_program__exec(pg);

			snprintf(name, sizeof(name), "%.*s:%s", (int)(len - 2), de->d_name,
				 ebpf_program__name(pg));
			compile_stats(name, ebpf_exec__insns(lp), ebpf_exec__insn_cnt(lp), &po);
			n++;
		}
		ebpf_object__close(obj);
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	int bad;
	const char *policy_dir = NULL;

	if (argc < 2) {
		fprintf(stderr, "usage: %s KERNEL_DIR [POLICY_DIR] [--quick]\n", argv[0]);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else
			policy_dir = argv[i];
	}
	if (!ebpf_jit_available())
		return test_skip("jit", "no JIT backend for this architecture");
	printf("NCCLbpf JIT benchmark%s\n", quick ? " (quick smoke run: figures meaningless)" : "");
	bad = bench_kernels(argv[1]);
	bad |= bench_calls(policy_dir);
	bench_compile(argv[1]);
	if (policy_dir) {
		printf("\n4. compile time of the shipped policies (%s)\n", policy_dir);
		bench_policies(policy_dir);
	}
	return bad;
}
