/* Rank-consistency soundness campaign: generated decision programs with map reads and writes.
 *
 * Each program of the diff generator (tests/diff/gen.h, every family plus maps, ring buffers
 * and the rank-local helpers) becomes the body of a decision program: a fixed entry stores one
 * per-call input word (ctx->in) into the first word of its buffer, calls the generated code as a
 * subprogram with that buffer, and writes the returned r0 (into which the generated code folds
 * its registers and stack) to a decision field (ctx->out). The buffer is an element of a
 * per-communicator map, and so are two of the generator's eight maps; the others are plain
 * (an array, a one-element global-data array, a hash), per-CPU, LRU or a ring buffer. Maps are
 * classified as the loader does (docs/verifier.md, restated here for raw programs): rank-local
 * are the per-CPU and LRU maps and every non-per-communicator map the program may write.
 *
 * Every accepted program then runs as two simulated ranks of communicator C, each also serving a
 * communicator D: same calls of C with the same inputs on both, but D's calls interleaved
 * differently, rank A on one CPU, rank B moving to another halfway (every fourth program), each
 * rank with its own process state (plain maps) and its own instances of C's and D's
 * per-communicator maps, at different times (clock) and with different random numbers. C's decision
 * stream and the final contents of C's per-communicator maps must be identical on both ranks (and
 * D's likewise); any difference is a rank-consistency bug of the verifier (or of the
 * per-communicator binding).
 *
 * --oracle-check runs the same with nothing flagged rank-local (the loader's rule switched off)
 * and must find divergent programs: it shows the comparison catches what the rule prevents.
 * Usage: rank_campaign [--count N] [--seed S] [--progress N] [--oracle-check] [-v] */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "gen_env.h"
#include "insn_macros.h"
#include "ebpf/helpers.h"
#include "ebpf/jit.h"
#include "ebpf/maps.h"
#include "ebpf/exec.h"
#include "ebpf/progtype.h"
#include "ebpf/verifier.h"

#define N_GEN_MAPS 8
#define IO_MAP	   N_GEN_MAPS /* the buffer: one element of a per-communicator array */
#define N_MAPS	   (N_GEN_MAPS + 1)
#define C_CALLS	   8
#define D_CALLS	   5
#define PER_COMM   ((1u << 6) | (1u << 7) | (1u << IO_MAP))

/* The generator's maps: 6 and 7 are per-communicator (an array and a hash), the rest plain. */
static const struct gen_map maps[N_GEN_MAPS] = {
    {EBPF_MAP_TYPE_ARRAY, 4, 48, 4},	{EBPF_MAP_TYPE_ARRAY, 4, 64, 1},
    {EBPF_MAP_TYPE_HASH, 8, 16, 8},	{EBPF_MAP_TYPE_PERCPU_ARRAY, 4, 24, 2},
    {EBPF_MAP_TYPE_LRU_HASH, 4, 32, 4}, {EBPF_MAP_TYPE_RINGBUF, 0, 0, 4096},
    {EBPF_MAP_TYPE_ARRAY, 4, 48, 4},	{EBPF_MAP_TYPE_HASH, 8, 16, 8},
};

/* ctx: in (uniform input, read-only), out (the decision). */
static const struct ebpf_ctx_field fields[] = {
    {"in", 0, 8, EBPF_CTX_READ},
    {"out", 8, 8, EBPF_CTX_READ | EBPF_CTX_WRITE | EBPF_CTX_DECISION},
};
struct dctx {
	uint64_t in, out;
};

#define ENTRY_INSNS 18

/* The entry in front of the generated code (which starts at ENTRY_INSNS). */
static uint32_t build(const struct gen_prog *g, struct ebpf_insn *out)
{
	const struct ebpf_insn entry[ENTRY_INSNS] = {
	    MOV64_REG(6, 1),	       /* r6 = ctx */
	    LDX_MEM(EBPF_DW, 7, 6, 0), /* r7 = ctx->in */
	    ST_MEM(EBPF_W, 10, -4, 0), /* key 0 */
	    MOV64_REG(2, 10),
	    ALU64_IMM(EBPF_ADD, 2, -4),
	    LD_MAP_FD(1, IO_MAP),
	    CALL_HELPER(EBPF_FUNC_map_lookup_elem),
	    JMP_IMM(EBPF_JNE, 0, 0, 2),
	    MOV64_IMM(0, 0),
	    EXIT(),
	    STX_MEM(EBPF_DW, 0, 7, 0), /* buf[0..8) = the call's input */
	    MOV64_REG(1, 0),
	    MOV64_IMM(2, (int32_t)g->buf_len),
	    CALL_LOCAL(ENTRY_INSNS - 15), /* the generated code */
	    STX_MEM(EBPF_DW, 6, 0, 8),	  /* ctx->out = r0: the decision */
	    MOV64_IMM(0, 0),
	    EXIT(),
	};
	memcpy(out, entry, sizeof(entry));
	memcpy(out + ENTRY_INSNS, g->insns, g->n_insns * sizeof(*out));
	return ENTRY_INSNS + g->n_insns;
}

/* One rank's state: its plain maps, and its instances of C's and D's per-communicator maps. */
struct rank {
	struct gen_env plain, inst[2];
	struct ebpf_map *io[2];
	struct ebpf_map *table[N_MAPS]; /* what its program references */
	struct ebpf_map_binding *bind[2];
	struct ebpf_exec *prog;
};

static struct ebpf_map *templates[N_MAPS];

static struct ebpf_map *mk(const struct gen_map *m, uint32_t flags, const char *name)
{
	char err[200];
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = name,
				 .type = m->type,
				 .key_size = m->key_size,
				 .value_size = m->value_size,
				 .max_entries = m->max_entries,
				 .flags = flags};
	struct ebpf_map *x = ebpf_map__create(&d, err, sizeof(err));
	if (!x) {
		fprintf(stderr, "map %s: %s\n", name, err);
		exit(1);
	}
	return x;
}

static void rank_init(struct rank *r, const struct gen_prog *g)
{
	static const struct gen_map io = {EBPF_MAP_TYPE_ARRAY, 4, GEN_MAX_BUF, 1};
	char err[200];
	for (int k = 0; k < 3; k++)
		if (gen_env_prepare(k ? &r->inst[k - 1] : &r->plain, g, err, sizeof(err))) {
			fprintf(stderr, "maps: %s\n", err);
			exit(1);
		}
	for (int c = 0; c < 2; c++) {
		r->io[c] = mk(&io, 0, "io");
		r->bind[c] = calloc(1, sizeof(*r->bind[c]) + 3 * sizeof(r->bind[c]->e[0]));
		r->bind[c]->n = 3;
		for (uint32_t i = 0, j = 0; i < N_MAPS; i++) {
			if (!((PER_COMM >> i) & 1))
				continue;
			r->bind[c]->e[j].tmpl = templates[i];
			r->bind[c]->e[j++].inst = i == IO_MAP ? r->io[c] : r->inst[c].maps[i];
		}
	}
	for (uint32_t i = 0; i < N_MAPS; i++)
		r->table[i] = (PER_COMM >> i) & 1 ? templates[i] : r->plain.maps[i];
}

/* Fresh state for one program: maps emptied, each communicator's buffer the program's. */
static void rank_reset(struct rank *r, const struct gen_prog *g)
{
	uint32_t k = 0;
	gen_env_reset(&r->plain);
	for (int c = 0; c < 2; c++) {
		uint8_t buf[GEN_MAX_BUF] = {0};
		gen_env_reset(&r->inst[c]);
		memcpy(buf, g->buf, g->buf_len);
		ebpf_map__user_update(r->io[c], &k, buf, EBPF_ANY);
	}
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu % CPU_SETSIZE, &s);
	sched_setaffinity(0, sizeof(s), &s); /* best effort: one CPU keeps its slot either way */
}

/* Runs rank r's calls: C's C_CALLS and D's D_CALLS in an interleaving drawn from ilv, moving to
 * CPU move_to halfway (-1: staying); C's decisions into out[], D's into dout[]. */
static void rank_run(struct rank *r, uint64_t seed, uint64_t ilv, int move_to, int ncpu,
		     uint64_t out[C_CALLS], uint64_t dout[D_CALLS])
{
	int c = 0, d = 0, step = 0;
	while (c < C_CALLS || d < D_CALLS) {
		ilv = mix(ilv + 1);
		int comm = c == C_CALLS ? 1 : d == D_CALLS ? 0 : (int)(ilv % 3 == 0);
		struct dctx x = {
		    .in = mix(seed * 31 + (uint64_t)comm * 1000 + (uint64_t)(comm ? d : c))};
		uint64_t r0 = 0;
		/* a migration halfway (per-CPU slots and the CPU number change under it) */
		if (move_to >= 0 && ncpu > 1 && step == (C_CALLS + D_CALLS) / 2)
			pin(move_to);
		step++;
		ebpf_map__bind(r->bind[comm]);
		ebpf_exec__run(r->prog, EBPF_ENGINE_INTERP, (uint64_t)(uintptr_t)&x, 0, NULL, &r0);
		ebpf_map__bind(NULL);
		if (comm)
			dout[d++] = x.out;
		else
			out[c++] = x.out;
	}
}

/* The contents of map m as (key, value) pairs in key order, for comparing ranks. */
static size_t contents(struct ebpf_map *m, uint8_t *buf, size_t cap)
{
	size_t ks = ebpf_map__key_size(m), vs = ebpf_map__user_value_size(m), n = 0;
	uint8_t key[8], next[8];
	const void *prev = NULL;
	if (ebpf_map__type(m) == EBPF_MAP_TYPE_ARRAY) {
		for (uint32_t k = 0; k < ebpf_map__max_entries(m) && n + vs <= cap; k++, n += vs)
			ebpf_map__user_lookup(m, &k, buf + n);
		return n;
	}
	/* hash: sum of key+value hashes (order of iteration may differ) */
	uint64_t sum = 0, cnt = 0;
	uint8_t val[512];
	while (!ebpf_map__get_next_key(m, prev, next)) {
		uint64_t h = 0;
		if (!ebpf_map__user_lookup(m, next, val)) {
			for (size_t i = 0; i < ks; i++)
				h = mix(h + next[i]);
			for (size_t i = 0; i < vs; i++)
				h = mix(h + val[i]);
			sum += h;
			cnt++;
		}
		memcpy(key, next, ks);
		prev = key;
	}
	memcpy(buf, &sum, 8);
	memcpy(buf + 8, &cnt, 8);
	return 16;
}

static int same_state(struct rank *a, struct rank *b, int c)
{
	static uint8_t x[4096], y[4096];
	for (uint32_t i = 0; i < N_MAPS; i++) {
		if (!((PER_COMM >> i) & 1))
			continue;
		struct ebpf_map *ma = i == IO_MAP ? a->io[c] : a->inst[c].maps[i];
		struct ebpf_map *mb = i == IO_MAP ? b->io[c] : b->inst[c].maps[i];
		size_t na = contents(ma, x, sizeof(x)), nb = contents(mb, y, sizeof(y));
		if (na != nb || memcmp(x, y, na))
			return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t count = 2000, seed = 1, progress = 0;
	bool oracle_check = false, verbose = false;
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--count") && k + 1 < argc)
			count = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--seed") && k + 1 < argc)
			seed = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--progress") && k + 1 < argc)
			progress = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--oracle-check"))
			oracle_check = true;
		else if (!strcmp(argv[k], "-v"))
			verbose = true;
		else {
			fprintf(stderr,
				"usage: %s [--count N] [--seed S] [--progress N] [--oracle-check] "
				"[-v]\n",
				argv[0]);
			return 2;
		}
	}
	static const uint32_t helper_ids[] = {
	    EBPF_FUNC_map_lookup_elem, EBPF_FUNC_map_update_elem, EBPF_FUNC_map_delete_elem,
	    EBPF_FUNC_ktime_get_ns,    EBPF_FUNC_get_prandom_u32, EBPF_FUNC_get_smp_processor_id,
	    EBPF_FUNC_ringbuf_output,  EBPF_FUNC_ringbuf_reserve, EBPF_FUNC_ringbuf_submit,
	    EBPF_FUNC_ringbuf_discard};
	struct ebpf_prog_type type = {.name = "decide",
				      .section = "decide",
				      .ctx_size = sizeof(struct dctx),
				      .fields = fields,
				      .n_fields = 2,
				      .ret_min = 0,
				      .ret_max = 0,
				      .insn_budget = UINT64_MAX,
				      .flags = EBPF_PROG_TYPE_F_RANK_CONSISTENT};
	for (uint32_t h = 0; h < sizeof(helper_ids) / sizeof(helper_ids[0]); h++)
		type.helper_allow[helper_ids[h] / 64] |= 1ull << (helper_ids[h] % 64);
	static struct gen_prog g;
	static struct ebpf_insn insns[GEN_MAX_INSNS + ENTRY_INSNS];
	static struct rank ra, rb;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t accepted = 0, divergent = 0, rejected = 0, programs = 0, with_maps = 0;

	for (uint32_t i = 0; i < N_MAPS; i++) {
		static const struct gen_map io = {EBPF_MAP_TYPE_ARRAY, 4, GEN_MAX_BUF, 1};
		const struct gen_map *m = i == IO_MAP ? &io : &maps[i];
		templates[i] = mk(m, (PER_COMM >> i) & 1 ? EBPF_MAP_F_PER_COMM : 0, "tmpl");
	}
	for (uint64_t n = 0; n < count; n++) {
		uint64_t s = seed + n;
		struct gen_opts o;
		if (progress && n && n % progress == 0) {
			printf("... %" PRIu64 " programs, %" PRIu64 " accepted, %" PRIu64
			       " divergent\n",
			       n, accepted, divergent);
			fflush(stdout);
		}
		gen_opts_for_seed(s, GEN_ALL_FAMILIES | GEN_MAP_FAMILIES | GEN_NONDET, &o);
		o.maps = maps;
		o.n_maps = N_GEN_MAPS;
		if (!o.buf_len)
			o.buf_len = 8 * (1 + (uint32_t)(mix(s) % (GEN_MAX_BUF / 8)));
		if (gen_program(s, &o, &g) || !g.buf_len || g.n_insns + ENTRY_INSNS > GEN_MAX_INSNS)
			continue;
		if (!ra.prog && !ra.plain.n_maps) {
			rank_init(&ra, &g);
			rank_init(&rb, &g);
		}
		programs++;
		uint32_t len = build(&g, insns);
		/* the loader's rule for raw programs: per-CPU and LRU maps, then whatever the
		 * program writes (a second round when that adds a map) */
		uint8_t flags[N_MAPS];
		uint64_t local = 0;
		for (uint32_t i = 0; i < N_GEN_MAPS && !oracle_check; i++)
			if (maps[i].type == EBPF_MAP_TYPE_PERCPU_ARRAY ||
			    maps[i].type == EBPF_MAP_TYPE_LRU_HASH)
				local |= 1ull << i;
		int rc = 0;
		for (int round = 0; round < 2; round++) {
			for (uint32_t i = 0; i < N_MAPS; i++)
				flags[i] = ((local >> i) & 1 ? EBPF_VERIFY_MAP_RANK_LOCAL : 0) |
					   ((PER_COMM >> i) & 1 ? EBPF_VERIFY_MAP_PER_COMM : 0);
			struct ebpf_verify_opts vo = {.sz = sizeof(vo),
						      .type = &type,
						      .maps = ra.table,
						      .n_maps = N_MAPS,
						      .map_flags = flags,
						      .helpers = ebpf_helpers_default()};
			char err[512];
			rc = ebpf_verify(insns, len, &vo, NULL, err, sizeof(err));
			uint64_t w = 0;
			for (uint32_t i = 0; i < N_MAPS; i++)
				if ((flags[i] & EBPF_VERIFY_MAP_WRITTEN) && !((PER_COMM >> i) & 1))
					w |= 1ull << i;
			if (rc || oracle_check || !(w & ~local))
				break;
			local |= w;
		}
		if (rc) {
			rejected++;
			continue;
		}
		accepted++;
		for (uint32_t pc = 0; pc < len; pc++)
			if (insns[pc].code == (EBPF_JMP | EBPF_CALL) &&
			    insns[pc].src_reg == EBPF_PSEUDO_HELPER && pc > ENTRY_INSNS) {
				with_maps++;
				break;
			}
		/* two ranks */
		uint64_t ca[C_CALLS], cb[C_CALLS], da[D_CALLS], db[D_CALLS];
		struct rank *rk[2] = {&ra, &rb};
		char err[200];
		for (int k = 0; k < 2; k++) {
			struct ebpf_exec_opts po = {.sz = sizeof(po),
						    .helpers = ebpf_helpers_default(),
						    .maps = rk[k]->table,
						    .n_maps = N_MAPS};
			rk[k]->prog = ebpf_exec__new(insns, len, &po, err, sizeof(err));
			if (!rk[k]->prog) {
				fprintf(stderr, "seed %" PRIu64 ": ebpf_exec__new: %s\n", s, err);
				return 1;
			}
			rank_reset(rk[k], &g);
		}
		/* rank A stays on one CPU; rank B starts there and, for every fourth program (a
		 * migration costs the scheduler's time), moves to another CPU halfway */
		int here = sched_getcpu() < 0 ? 0 : sched_getcpu();
		pin(here);
		rank_run(&ra, s, mix(s ^ 0xa), -1, ncpu, ca, da);
		rank_run(&rb, s, mix(s ^ 0xb), n % 4 == 0 ? (here + 1) % ncpu : -1, ncpu, cb, db);
		int same = !memcmp(ca, cb, sizeof(ca)) && !memcmp(da, db, sizeof(da)) &&
			   same_state(&ra, &rb, 0) && same_state(&ra, &rb, 1);
		if (!same) {
			divergent++;
			if (!oracle_check || verbose)
				fprintf(stderr, "%s seed %" PRIu64 ": ranks decided differently\n",
					oracle_check ? "expected:" : "RANK-INCONSISTENT", s);
			if (verbose) {
				for (int k = 0; k < C_CALLS; k++)
					fprintf(stderr,
						"  C call %d: rank A %016" PRIx64
						", rank B %016" PRIx64 "\n",
						k, ca[k], cb[k]);
				for (int k = 0; k < D_CALLS; k++)
					fprintf(stderr,
						"  D call %d: rank A %016" PRIx64
						", rank B %016" PRIx64 "\n",
						k, da[k], db[k]);
				fprintf(stderr, "  per-communicator contents equal: C %d, D %d\n",
					same_state(&ra, &rb, 0), same_state(&ra, &rb, 1));
				gen_print(stderr, &g);
			}
		}
		for (int k = 0; k < 2; k++) {
			ebpf_exec__free(rk[k]->prog);
			rk[k]->prog = NULL;
		}
	}
	printf("programs %" PRIu64 ": accepted %" PRIu64 " (%" PRIu64
	       " calling helpers in the generated code), rejected %" PRIu64
	       "; accepted programs whose ranks decided differently: %" PRIu64 "%s\n",
	       programs, accepted, with_maps, rejected, divergent,
	       oracle_check ? " (rule switched off: must be > 0)" : " (must be 0)");
	if (oracle_check)
		return divergent > 0 ? 0 : 1;
	return divergent == 0 && accepted > 0 ? 0 : 1;
}
