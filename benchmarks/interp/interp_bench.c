/* Interpreter benchmark: each kernel of progs.c runs natively (gcc -O2) and as eBPF in our
 * interpreter (and in the JIT when the engine has one), in the same process, on the same input;
 * the results must agree, then each engine is timed (minimum over repetitions of a calibrated
 * batch) and the table prints ns per call and the ratios.
 *
 *   interp_bench [--reps N] [--ms M] [--quick]
 *
 * --quick: one call per engine and no timing table, only the agreement check (CTest smoke). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ebpf/exec.h"
#include "ebpf/jit.h"
#include "progs.h"

#define DECLARE_BPF(name)                                                                          \
	extern const unsigned char bench_bpf_##name[];                                             \
	extern const unsigned int bench_bpf_##name##_len;
DECLARE_BPF(sieve)
DECLARE_BPF(log2)
DECLARE_BPF(memcpy)
DECLARE_BPF(switch)
DECLARE_BPF(crc32)

typedef uint64_t (*native_fn)(uint64_t *mem, uint64_t n);

struct kernel {
	const char *name;
	native_fn native;
	const unsigned char *bpf;
	const unsigned int *bpf_len;
	uint64_t n; /* work size per call */
};

#define KERNEL(name, n)                                                                            \
	{                                                                                          \
#name, bench_##name, bench_bpf_##name, &bench_bpf_##name##_len, n                  \
	}
static const struct kernel kernels[] = {
    KERNEL(sieve, 2000),  KERNEL(log2, 1000), KERNEL(memcpy, 16),
    KERNEL(switch, 1000), KERNEL(crc32, 512),
};
#define N_KERNELS (sizeof(kernels) / sizeof(kernels[0]))

/* Engines are columns; the JIT adds one. */
enum { ENG_NATIVE, ENG_INTERP, ENG_JIT, N_ENGINES };
static const char *const engine_names[N_ENGINES] = {"native", "interp", "jit"};

struct target {
	const struct kernel *k;
	struct ebpf_exec *prog;
	int have[N_ENGINES];
};

/* Called through a volatile pointer so gcc cannot specialise the native kernel for the
 * constant arguments of this file. */
static native_fn volatile native_call;
static volatile uint64_t sink;

static uint64_t call(const struct target *t, int eng, uint64_t *mem)
{
	uint64_t r0 = 0;
	switch (eng) {
	case ENG_NATIVE:
		native_call = t->k->native;
		return native_call(mem, t->k->n);
	case ENG_INTERP:
		ebpf_interp__run(t->prog, (uint64_t)(uintptr_t)mem, t->k->n, NULL, &r0);
		return r0;
	case ENG_JIT:
		ebpf_exec__run(t->prog, EBPF_ENGINE_JIT, (uint64_t)(uintptr_t)mem, t->k->n, NULL,
			       &r0);
		return r0;
	default:
		abort();
	}
}

static void init_mem(uint64_t *mem)
{
	uint64_t x = 0x243f6a8885a308d3ull;
	for (unsigned k = 0; k < BENCH_MEM_BYTES / 8; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		mem[k] = x;
	}
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Calls per batch so that one batch takes about ms milliseconds. */
static uint64_t calibrate(const struct target *t, int eng, uint64_t *mem, double ms)
{
	uint64_t iters = 1;
	for (;;) {
		double t0 = now_ns();
		for (uint64_t i = 0; i < iters; i++)
			sink += call(t, eng, mem);
		if (now_ns() - t0 >= ms * 1e6 / 4 || iters >= (1ull << 30))
			return iters * 4;
		iters *= 2;
	}
}

/* ns per call of one batch. */
static double time_batch(const struct target *t, int eng, uint64_t *mem, uint64_t iters)
{
	double t0 = now_ns();
	for (uint64_t i = 0; i < iters; i++)
		sink += call(t, eng, mem);
	return (now_ns() - t0) / (double)iters;
}

int main(int argc, char **argv)
{
	int reps = 31, quick = 0;
	double ms = 1; /* short batches: fewer of them are preempted on a busy machine */
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--quick"))
			quick = 1;
		else if (!strcmp(argv[k], "--reps") && k + 1 < argc)
			reps = atoi(argv[++k]);
		else if (!strcmp(argv[k], "--ms") && k + 1 < argc)
			ms = atof(argv[++k]);
		else {
			fprintf(stderr, "usage: %s [--reps N] [--ms M] [--quick]\n", argv[0]);
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;

	struct target targets[N_KERNELS];
	int failed = 0;
	for (unsigned i = 0; i < N_KERNELS; i++) {
		struct target *t = &targets[i];
		char err[256];
		memset(t, 0, sizeof(*t));
		t->k = &kernels[i];
		t->have[ENG_NATIVE] = 1;
		struct ebpf_exec_opts po = {.sz = sizeof(po), .name = t->k->name};
		t->prog = ebpf_exec__new((const struct ebpf_insn *)t->k->bpf, *t->k->bpf_len / 8,
					 &po, err, sizeof(err));
		if (!t->prog) {
			fprintf(stderr, "%s: ebpf_exec__new: %s\n", t->k->name, err);
			failed = 1;
			continue;
		}
		t->have[ENG_INTERP] = 1;
		struct ebpf_jit_stats st;
		if (ebpf_jit_available() && ebpf_exec__jit(t->prog, &st, err, sizeof(err)) == 0)
			t->have[ENG_JIT] = 1;
		else if (ebpf_jit_available()) {
			fprintf(stderr, "%s: JIT: %s\n", t->k->name, err);
			failed = 1;
		}
		/* Agreement: every engine computes the native result from the same input. */
		uint64_t mem[BENCH_MEM_BYTES / 8], expect = 0;
		for (int e = 0; e < N_ENGINES; e++) {
			if (!t->have[e])
				continue;
			init_mem(mem);
			uint64_t got = call(t, e, mem);
			if (e == ENG_NATIVE)
				expect = got;
			else if (got != expect) {
				fprintf(stderr,
					"%s: %s returned 0x%" PRIx64 ", native 0x%" PRIx64 "\n",
					t->k->name, engine_names[e], got, expect);
				failed = 1;
			}
		}
		if (quick)
			printf("%-8s %3u insns  result 0x%016" PRIx64 "%s\n", t->k->name,
			       *t->k->bpf_len / 8, expect, failed ? "" : "  (engines agree)");
	}
	if (failed || quick) {
		for (unsigned i = 0; i < N_KERNELS; i++)
			ebpf_exec__free(targets[i].prog);
		if (!failed)
			printf("interp_bench: quick run, all engines agree\n");
		return failed;
	}

	printf(
	    "interp_bench: ns per call, minimum of %d repetitions (~%.1f ms each), same process\n",
	    reps, ms);
	printf("%-8s %6s %6s %11s %11s %9s", "program", "insns", "n", "native ns", "interp ns",
	       "interp/x");
	if (targets[0].have[ENG_JIT])
		printf(" %11s %9s %12s", "jit ns", "jit/x", "interp/jit");
	printf("\n");
	for (unsigned i = 0; i < N_KERNELS; i++) {
		struct target *t = &targets[i];
		uint64_t mem[BENCH_MEM_BYTES / 8];
		init_mem(mem);
		double ns[N_ENGINES];
		uint64_t iters[N_ENGINES] = {0};
		for (int e = 0; e < N_ENGINES; e++) {
			ns[e] = 1e300;
			if (t->have[e])
				iters[e] = calibrate(t, e, mem, ms);
		}
		/* Engines take turns within each repetition, so a burst of load on this shared
		 * machine hits all of them alike; each keeps its best batch. */
		for (int r = 0; r < reps; r++)
			for (int e = 0; e < N_ENGINES; e++) {
				if (!t->have[e])
					continue;
				double v = time_batch(t, e, mem, iters[e]);
				if (v < ns[e])
					ns[e] = v;
			}
		printf("%-8s %6u %6" PRIu64 " %11.1f %11.1f %8.1fx", t->k->name, *t->k->bpf_len / 8,
		       t->k->n, ns[ENG_NATIVE], ns[ENG_INTERP], ns[ENG_INTERP] / ns[ENG_NATIVE]);
		if (t->have[ENG_JIT])
			printf(" %11.1f %8.2fx %11.1fx", ns[ENG_JIT], ns[ENG_JIT] / ns[ENG_NATIVE],
			       ns[ENG_INTERP] / ns[ENG_JIT]);
		printf("\n");
		ebpf_exec__free(t->prog);
	}
	return 0;
}
