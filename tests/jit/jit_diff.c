/* Differential test: the JIT against the interpreter on generated programs (tests/diff/gen.h).
 *
 * For every seed: generate a program, optionally put a map in front of it, create it, compile
 * it, then run it once with each engine from identical memory and compare r0, the return code,
 * the input buffer and the map contents. The generator folds every register and the whole stack
 * window into r0 at each exit, so a wrong stack shows up in r0.
 *
 * Map modes (chosen from the seed; only when the program takes a buffer): a prologue looks up a
 * constant key in an ARRAY map (the JIT inlines that lookup) or a HASH map (a helper call); when
 * the lookup hits, the program works on the map value instead of the buffer, so its loads,
 * stores and atomics land in map memory. Some seeds also compile with EBPF_JIT_F_NO_INLINE or
 * EBPF_JIT_F_FAR_CALLS or EBPF_JIT_F_BASELINE to cover the helper-call, absolute-call and
 * non-BMI2 shift paths.
 *
 *   jit_diff [--count N] [--seed S] [--families LIST] [--max-fail K] [--quiet]
 * Seeds S, S+1, ..., S+N-1; exit status 1 on any mismatch. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../diff/gen.h"
#include "ebpf/helpers.h"
#include "ebpf/jit.h"
#include "ebpf/maps.h"
#include "ebpf/exec.h"
#include "keeping_call.h"
#include "skip.h"

#define N_KEYS	     4
#define PROLOGUE_LEN 12

enum map_mode { MODE_NONE, MODE_ARRAY, MODE_HASH };

struct snapshot {
	int ret;
	uint64_t r0;
	uint8_t buf[GEN_MAX_BUF];
	uint8_t vals[N_KEYS][GEN_MAX_BUF];
	int present[N_KEYS];
};

static struct ebpf_map *maps_cache[2][GEN_MAX_BUF / 8 + 1];

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Options varied per seed: mostly short programs, sometimes long ones, every nesting depth,
 * loop count and function count. */
static void opts_for_seed(uint64_t seed, uint32_t families, struct gen_opts *o)
{
	uint64_t h = mix64(seed ^ 0x243f6a8885a308d3ull);

	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->families = families;
	o->max_len =
	    (h & 7) == 0 ? 100 + (uint32_t)((h >> 8) % 200) : 4 + (uint32_t)((h >> 8) % 60);
	o->max_depth = 1 + (uint32_t)((h >> 20) % 4);
	o->max_loop_iters = 1 + (uint32_t)((h >> 24) % 10);
	o->max_funcs = 1 + (uint32_t)((h >> 28) % GEN_MAX_FUNCS);
}

static struct ebpf_map *get_map(enum map_mode mode, uint32_t value_size)
{
	struct ebpf_map **slot = &maps_cache[mode == MODE_HASH][value_size / 8];
	char err[128];

	if (!*slot) {
		struct ebpf_map_def def = {
		    .sz = sizeof(def),
		    .name = mode == MODE_HASH ? "h" : "a",
		    .type = mode == MODE_HASH ? EBPF_MAP_TYPE_HASH : EBPF_MAP_TYPE_ARRAY,
		    .key_size = 4,
		    .value_size = value_size,
		    .max_entries = N_KEYS,
		};

		*slot = ebpf_map__create(&def, err, sizeof(err));
		if (!*slot) {
			fprintf(stderr, "map create: %s\n", err);
			exit(2);
		}
	}
	return *slot;
}

/* Same starting memory for each engine. */
static void reset(const struct gen_prog *gp, uint8_t *buf, struct ebpf_map *m)
{
	memcpy(buf, gp->buf, gp->buf_len);
	if (!m)
		return;
	for (uint32_t k = 0; k < N_KEYS; k++) {
		uint8_t v[GEN_MAX_BUF];

		for (uint32_t b = 0; b < gp->buf_len; b++)
			v[b] = (uint8_t)(gp->buf[b] ^ (0x35 * (k + 1)) ^ b);
		if (ebpf_map__update_elem(m, &k, v, EBPF_ANY)) {
			fprintf(stderr, "map update failed\n");
			exit(2);
		}
	}
}

static void snap(const struct gen_prog *gp, const uint8_t *buf, struct ebpf_map *m,
		 struct snapshot *s)
{
	memset(s->buf, 0, sizeof(s->buf));
	memcpy(s->buf, buf, gp->buf_len);
	memset(s->vals, 0, sizeof(s->vals));
	memset(s->present, 0, sizeof(s->present));
	if (!m)
		return;
	for (uint32_t k = 0; k < N_KEYS; k++) {
		void *v = ebpf_map__lookup_elem(m, &k);

		s->present[k] = v != NULL;
		if (v)
			memcpy(s->vals[k], v, gp->buf_len);
	}
}

static int compare(const struct gen_prog *gp, const struct snapshot *a, const struct snapshot *b,
		   char *what, size_t len)
{
	if (a->ret != b->ret) {
		snprintf(what, len, "return code: interp %d jit %d", a->ret, b->ret);
		return 1;
	}
	if (a->r0 != b->r0) {
		snprintf(what, len, "r0: interp 0x%" PRIx64 " jit 0x%" PRIx64, a->r0, b->r0);
		return 1;
	}
	for (uint32_t i = 0; i < gp->buf_len; i++)
		if (a->buf[i] != b->buf[i]) {
			snprintf(what, len, "buffer byte %u: interp 0x%02x jit 0x%02x", i,
				 a->buf[i], b->buf[i]);
			return 1;
		}
	for (uint32_t k = 0; k < N_KEYS; k++) {
		if (a->present[k] != b->present[k]) {
			snprintf(what, len, "map key %u presence differs", k);
			return 1;
		}
		for (uint32_t i = 0; i < gp->buf_len; i++)
			if (a->vals[k][i] != b->vals[k][i]) {
				snprintf(what, len, "map key %u byte %u: interp 0x%02x jit 0x%02x",
					 k, i, a->vals[k][i], b->vals[k][i]);
				return 1;
			}
	}
	return 0;
}

struct totals {
	uint64_t programs, insns, mismatches, rejected_new, rejected_jit, mode[3], inlined,
	    no_inline, far_calls, faults, keeping;
	uint64_t compile_ns;
};

static int run_one(uint64_t seed, uint32_t families, struct totals *t, int max_print)
{
	static struct gen_prog gp;
	static struct ebpf_insn insns[GEN_MAX_INSNS + PROLOGUE_LEN];
	static uint8_t buf[GEN_MAX_BUF] __attribute__((aligned(8)));
	struct gen_opts o;
	struct ebpf_map *m = NULL, *maps[1];
	struct ebpf_exec_opts po = {.sz = sizeof(po), .helpers = ebpf_helpers_default()};
	struct ebpf_jit_opts jo = {.sz = sizeof(jo)};
	struct ebpf_jit_stats st;
	struct snapshot si, sj;
	struct ebpf_exec *prog;
	uint64_t h = mix64(seed);
	enum map_mode mode = MODE_NONE;
	uint32_t n = 0;
	char err[256], what[160];
	uint64_t r0;

	opts_for_seed(seed, families, &o);
	if (gen_program(seed, &o, &gp)) {
		fprintf(stderr, "seed %" PRIu64 ": generator refused its options\n", seed);
		return 1;
	}
	if (gp.buf_len && (h & 3) >= 2)
		mode = (h & 3) == 2 ? MODE_ARRAY : MODE_HASH;
	if (mode != MODE_NONE) {
		int32_t key = (int32_t)((h >> 8) % (N_KEYS + 1)); /* N_KEYS: a miss */

		m = get_map(mode, gp.buf_len);
		maps[0] = m;
		po.maps = maps;
		po.n_maps = 1;
		insns[n++] = (struct ebpf_insn){EBPF_ALU64 | EBPF_MOV | EBPF_X, 6, 1, 0, 0};
		insns[n++] = (struct ebpf_insn){EBPF_ALU64 | EBPF_MOV | EBPF_X, 7, 2, 0, 0};
		insns[n++] = (struct ebpf_insn){EBPF_ST | EBPF_MEM | EBPF_W, 10, 0, -4, key};
		insns[n++] =
		    (struct ebpf_insn){EBPF_LD | EBPF_DW | EBPF_IMM, 1, EBPF_PSEUDO_MAP_FD, 0, 0};
		insns[n++] = (struct ebpf_insn){0, 0, 0, 0, 0};
		insns[n++] = (struct ebpf_insn){EBPF_ALU64 | EBPF_MOV | EBPF_X, 2, 10, 0, 0};
		insns[n++] = (struct ebpf_insn){EBPF_ALU64 | EBPF_ADD | EBPF_K, 2, 0, 0, -4};
		insns[n++] = (struct ebpf_insn){EBPF_JMP | EBPF_CALL, 0, EBPF_PSEUDO_HELPER, 0,
						EBPF_FUNC_map_lookup_elem};
		insns[n++] = (struct ebpf_insn){EBPF_JMP | EBPF_JEQ | EBPF_K, 0, 0, 1, 0};
		insns[n++] = (struct ebpf_insn){EBPF_ALU64 | EBPF_MOV | EBPF_X, 6, 0, 0, 0};
		insns[n++] = (struct ebpf_insn){EBPF_ALU64 | EBPF_MOV | EBPF_X, 1, 6, 0, 0};
		insns[n++] = (struct ebpf_insn){EBPF_ALU64 | EBPF_MOV | EBPF_X, 2, 7, 0, 0};
	}
	memcpy(insns + n, gp.insns, gp.n_insns * sizeof(gp.insns[0]));
	n += gp.n_insns;
	t->mode[mode]++;
	t->programs++;
	t->insns += n;

	prog = ebpf_exec__new(insns, n, &po, err, sizeof(err));
	if (!prog) {
		t->rejected_new++;
		if (t->rejected_new <= (uint64_t)max_print)
			fprintf(stderr, "seed %" PRIu64 ": ebpf_exec__new: %s\n", seed, err);
		return 1;
	}
	if (((h >> 16) & 7) == 0) {
		jo.flags |= EBPF_JIT_F_NO_INLINE;
		t->no_inline++;
	}
	if (((h >> 20) & 7) == 0) {
		jo.flags |= EBPF_JIT_F_FAR_CALLS;
		t->far_calls++;
	}
	if (((h >> 24) & 3) == 0)
		jo.flags |= EBPF_JIT_F_BASELINE; /* shifts through cl instead of BMI2 */
	if (ebpf_exec__jit_opts(prog, &jo, &st, err, sizeof(err))) {
		t->rejected_jit++;
		if (t->rejected_jit <= (uint64_t)max_print) {
			fprintf(stderr, "seed %" PRIu64 ": ebpf_exec__jit: %s\n", seed, err);
			gen_print(stderr, &gp);
		}
		ebpf_exec__free(prog);
		return 1;
	}
	t->inlined += st.n_inlined;
	t->compile_ns += st.compile_ns;

	reset(&gp, buf, m);
	r0 = 0;
	si.ret = ebpf_exec__run(prog, EBPF_ENGINE_INTERP, (uintptr_t)(gp.buf_len ? buf : NULL),
				gp.buf_len, NULL, &r0);
	si.r0 = r0;
	snap(&gp, buf, m, &si);

	reset(&gp, buf, m);
	r0 = 0;
	sj.ret = ebpf_exec__run(prog, EBPF_ENGINE_JIT, (uintptr_t)(gp.buf_len ? buf : NULL),
				gp.buf_len, NULL, &r0);
	sj.r0 = r0;
	snap(&gp, buf, m, &sj);
	if (sj.ret)
		t->faults++;
	/* An entry that calls nothing (an inlined lookup calls nothing) keeps registers, and
	 * only such an entry may claim to. Run through the keeping call, it must do what the
	 * plain call did and keep the registers. */
	uint32_t calls = 0;

	for (uint32_t i = 0; i < n; i++)
		calls += insns[i].code == (EBPF_JMP | EBPF_CALL);
	what[0] = 0;
#ifdef EBPF_JIT_HAVE_KEEPING_CALL
	if (!st.keeps_regs && calls == st.n_inlined)
		snprintf(what, sizeof(what), "calls nothing (%u inlined) but keeps_regs 0",
			 st.n_inlined);
#endif
	if (st.keeps_regs) {
		int lost = -1;

		t->keeping++;
		if (calls > st.n_inlined)
			snprintf(what, sizeof(what), "keeps_regs with %u calls, %u inlined", calls,
				 st.n_inlined);
#ifdef EBPF_JIT_HAVE_KEEPING_CALL
		struct snapshot sk = {0};
		char diff[sizeof(what)];

		reset(&gp, buf, m);
		sk.r0 =
		    call_keeping_checked(ebpf_exec__jit_fn(prog),
					 (uintptr_t)(gp.buf_len ? buf : NULL), gp.buf_len, &lost);
		sk.ret = sj.ret;
		snap(&gp, buf, m, &sk);
		if (!what[0] && lost >= 0)
			snprintf(what, sizeof(what), "keeping entry changed %s", KEPT_NAMES[lost]);
		else if (!what[0] && compare(&gp, &sj, &sk, diff, sizeof(diff)))
			snprintf(what, sizeof(what), "plain vs keeping call: %.120s", diff);
#endif
	}
	ebpf_exec__free(prog);

	if (what[0] || compare(&gp, &si, &sj, what, sizeof(what))) {
		t->mismatches++;
		if (t->mismatches <= (uint64_t)max_print) {
			fprintf(stderr,
				"MISMATCH seed %" PRIu64 " (map mode %d, jit flags 0x%x): %s\n",
				seed, mode, jo.flags, what);
			gen_print(stderr, &gp);
		}
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t count = 1000, seed = 1;
	uint32_t families = 0;
	int max_print = 3, quiet = 0;
	struct totals t = {0};
	struct timespec t0, t1;
	double secs;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--families") && i + 1 < argc) {
			if (gen_parse_families(argv[++i], &families)) {
				fprintf(stderr, "unknown family in '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--max-fail") && i + 1 < argc)
			max_print = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else {
			fprintf(stderr,
				"usage: %s [--count N] [--seed S] [--families LIST] [--max-fail K] "
				"[--quiet]\n",
				argv[0]);
			return 2;
		}
	}
	if (!ebpf_jit_available())
		return test_skip("jit", "no JIT backend for this architecture");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = 0; i < count; i++) {
		run_one(seed + i, families, &t, max_print);
		if (!quiet && count >= 1000000 && i && i % 1000000 == 0)
			fprintf(stderr, "  %" PRIu64 " programs, %" PRIu64 " mismatches\n", i,
				t.mismatches);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("jit_diff: seeds %" PRIu64 "..%" PRIu64 ": %" PRIu64 " programs (%" PRIu64
	       " insns), %" PRIu64 " mismatches, %" PRIu64 " rejected by ebpf_exec__new, %" PRIu64
	       " refused by the JIT\n",
	       seed, seed + count - 1, t.programs, t.insns, t.mismatches, t.rejected_new,
	       t.rejected_jit);
	printf("  map modes none/array/hash %" PRIu64 "/%" PRIu64 "/%" PRIu64 ", %" PRIu64
	       " lookups inlined, %" PRIu64 " no-inline, %" PRIu64 " far-call compiles, %" PRIu64
	       " faulted runs (both engines), %" PRIu64 " register-keeping entries checked\n",
	       t.mode[0], t.mode[1], t.mode[2], t.inlined, t.no_inline, t.far_calls, t.faults,
	       t.keeping);
	printf("  mean compile %.2f us, %.1f s, %.0f programs/s\n",
	       t.programs ? (double)t.compile_ns / 1e3 / (double)t.programs : 0.0, secs,
	       secs > 0 ? (double)t.programs / secs : 0.0);
	for (int k = 0; k < 2; k++)
		for (size_t v = 0; v < sizeof(maps_cache[0]) / sizeof(maps_cache[0][0]); v++)
			ebpf_map__free(maps_cache[k][v]);
	return t.mismatches || t.rejected_new || t.rejected_jit ? 1 : 0;
}
