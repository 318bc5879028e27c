/* The generator's contract: deterministic per seed, structurally valid (every jump lands inside
 * its own function, every function ends in exit, every callee is called, 64-bit immediates are
 * whole), it only uses the families it was asked for, safe programs never trap (also with maps
 * and helpers), and the map families produce the patterns they promise. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gen.h"
#include "gen_env.h"
#include "ebpf/helpers.h"
#include "ebpf/exec.h"

static struct gen_env env;

/* Runs p in the bounds-checking interpreter with its buffer as the only region (and its maps,
 * fresh); returns the run's status (-EFAULT on a trap). */
static int run_checked(const struct gen_prog *p, uint64_t *r0)
{
	uint64_t buf[GEN_MAX_BUF / 8];
	char err[200];
	memcpy(buf, p->buf, p->buf_len);
	if (gen_env_prepare(&env, p, err, sizeof(err))) {
		fprintf(stderr, "seed %llu: maps: %s\n", (unsigned long long)p->seed, err);
		return -1000;
	}
	gen_env_reset(&env);
	struct ebpf_exec_opts po = {.sz = sizeof(po),
				    .helpers = ebpf_helpers_default(),
				    .maps = env.maps,
				    .n_maps = env.n_maps};
	struct ebpf_exec *prog = ebpf_exec__new(p->insns, p->n_insns, &po, err, sizeof(err));
	if (!prog) {
		fprintf(stderr, "seed %llu: ebpf_exec__new: %s\n", (unsigned long long)p->seed,
			err);
		return -1000;
	}
	struct ebpf_region reg = {(uint64_t)(uintptr_t)buf, p->buf_len,
				  EBPF_REGION_READ | EBPF_REGION_WRITE};
	struct ebpf_run_opts ro = {.sz = sizeof(ro),
				   .checked = 1,
				   .regions = &reg,
				   .n_regions = p->buf_len ? 1 : 0,
				   .insn_limit = 1u << 24};
	int rc =
	    ebpf_interp__run(prog, p->buf_len ? (uint64_t)(uintptr_t)buf : 0, p->buf_len, &ro, r0);
	ebpf_exec__free(prog);
	return rc;
}

static int is_jmp_class(uint8_t code)
{
	return EBPF_CLASS(code) == EBPF_JMP || EBPF_CLASS(code) == EBPF_JMP32;
}

/* 1 when p satisfies the structural contract; reports the first violation. */
static int structurally_valid(const struct gen_prog *p)
{
	int called[GEN_MAX_FUNCS] = {1};
	for (uint32_t f = 0; f < p->n_funcs; f++) {
		uint32_t lo = p->func_start[f];
		uint32_t hi = f + 1 < p->n_funcs ? p->func_start[f + 1] : p->n_insns;
		if (p->insns[hi - 1].code != (EBPF_JMP | EBPF_EXIT)) {
			fprintf(stderr, "seed %llu: func %u does not end in exit\n",
				(unsigned long long)p->seed, f);
			return 0;
		}
		for (uint32_t pc = lo; pc < hi; pc++) {
			const struct ebpf_insn *i = &p->insns[pc];
			if (ebpf_insn_is_lddw(i)) {
				if (pc + 1 >= hi || p->insns[pc + 1].code) {
					fprintf(stderr, "seed %llu: bad lddw at %u\n",
						(unsigned long long)p->seed, pc);
					return 0;
				}
				pc++;
				continue;
			}
			if (!is_jmp_class(i->code))
				continue;
			uint8_t op = EBPF_OP(i->code);
			if (op == EBPF_EXIT)
				continue;
			int64_t target;
			if (op == EBPF_CALL && i->src_reg == EBPF_PSEUDO_HELPER)
				continue;
			if (op == EBPF_CALL) {
				target = (int64_t)pc + 1 + i->imm;
				uint32_t k;
				for (k = 0; k < p->n_funcs; k++)
					if (p->func_start[k] == target)
						break;
				if (i->src_reg != EBPF_PSEUDO_CALL || k == p->n_funcs || k <= f) {
					fprintf(stderr, "seed %llu: bad call at %u\n",
						(unsigned long long)p->seed, pc);
					return 0;
				}
				called[k] = 1;
				continue;
			}
			if (op == EBPF_JA && EBPF_CLASS(i->code) == EBPF_JMP32)
				target = (int64_t)pc + 1 + i->imm;
			else
				target = (int64_t)pc + 1 + i->off;
			if (target < lo || target >= hi) {
				fprintf(stderr, "seed %llu: jump at %u leaves its function\n",
					(unsigned long long)p->seed, pc);
				return 0;
			}
		}
	}
	for (uint32_t f = 0; f < p->n_funcs; f++)
		if (!called[f]) {
			fprintf(stderr, "seed %llu: func %u never called\n",
				(unsigned long long)p->seed, f);
			return 0;
		}
	return 1;
}

/* 1 when p contains an instruction only a family outside mask would produce. */
static int uses_outside(const struct gen_prog *p, uint32_t mask)
{
	for (uint32_t pc = 0; pc < p->n_insns; pc++) {
		const struct ebpf_insn *i = &p->insns[pc];
		uint8_t cls = EBPF_CLASS(i->code), op = EBPF_OP(i->code);
		if (ebpf_insn_is_lddw(i)) {
			if (i->src_reg && !(mask & GEN_MAP_LOOKUP) &&
			    (i->src_reg != EBPF_PSEUDO_MAP_FD ||
			     !(mask & (GEN_MAP_FAMILIES & ~GEN_MAP_LOOKUP))))
				return 1;
			pc++;
			continue;
		}
		if (cls == EBPF_JMP && op == EBPF_CALL && i->src_reg == EBPF_PSEUDO_HELPER) {
			int32_t id = i->imm;
			uint32_t fam =
			    id == EBPF_FUNC_map_lookup_elem ? GEN_MAP_LOOKUP
			    : id == EBPF_FUNC_map_update_elem || id == EBPF_FUNC_map_delete_elem
				? GEN_MAP_UPDATE
			    : id >= EBPF_FUNC_ringbuf_output && id <= EBPF_FUNC_ringbuf_discard
				? GEN_RINGBUF
				: GEN_NONDET;
			if (!(mask & fam))
				return 1;
			continue;
		}
		if ((cls == EBPF_ALU || cls == EBPF_ALU64) && (op == EBPF_DIV || op == EBPF_MOD) &&
		    !(mask & (i->off ? GEN_SDIVMOD : GEN_DIVMOD)))
			return 1;
		if ((cls == EBPF_ALU || cls == EBPF_ALU64) && op == EBPF_MOV && i->off &&
		    !(mask & GEN_MOVSX))
			return 1;
		if (cls == EBPF_ALU64 && op == EBPF_END && !(mask & GEN_V4_BSWAP))
			return 1;
		if (cls == EBPF_LDX && EBPF_MODE(i->code) == EBPF_MEMSX && !(mask & GEN_MEMSX))
			return 1;
		if (cls == EBPF_STX && EBPF_MODE(i->code) == EBPF_ATOMIC && !(mask & GEN_ATOMIC))
			return 1;
		if (cls == EBPF_JMP && op == EBPF_CALL && !(mask & GEN_CALL))
			return 1;
		if (cls == EBPF_JMP32 && op == EBPF_JA && !(mask & GEN_GOTOL))
			return 1;
		if ((cls == EBPF_LDX || cls == EBPF_STX || cls == EBPF_ST) && i->dst_reg == 9 &&
		    cls != EBPF_LDX && !(mask & GEN_BUF))
			return 1;
	}
	return 0;
}

int main(void)
{
	static struct gen_prog a, b;
	struct gen_opts o = {.sz = sizeof(o)};

	/* Determinism, and different seeds give different programs. */
	int differ = 0;
	for (uint64_t s = 0; s < 200; s++) {
		CHECK(gen_program(s, &o, &a) == 0);
		CHECK(gen_program(s, &o, &b) == 0);
		CHECK(a.n_insns == b.n_insns &&
		      !memcmp(a.insns, b.insns, sizeof(a.insns[0]) * a.n_insns));
		CHECK(a.buf_len == b.buf_len && !memcmp(a.buf, b.buf, a.buf_len));
		CHECK(gen_program(s + 1000, &o, &b) == 0);
		differ += a.n_insns != b.n_insns ||
			  memcmp(a.insns, b.insns, sizeof(a.insns[0]) * a.n_insns);
	}
	CHECK(differ > 190);

	/* Structure over many seeds and a spread of options. */
	int bad = 0;
	for (uint64_t s = 0; s < 20000; s++) {
		struct gen_opts v = {.sz = sizeof(v),
				     .max_len = 1 + (uint32_t)(s % 200),
				     .max_depth = 1 + (uint32_t)(s % 5),
				     .max_loop_iters = 1 + (uint32_t)(s % 16)};
		CHECK(gen_program(s * 7919, &v, &a) == 0);
		CHECK(a.n_insns > 0 && a.n_insns <= GEN_MAX_INSNS);
		if (!structurally_valid(&a) && ++bad > 3)
			break;
	}
	CHECK(bad == 0);

	/* Family restrictions are honoured. */
	static const uint32_t masks[] = {GEN_ALU64,
					 GEN_ALU32 | GEN_JMP32,
					 GEN_V3_FAMILIES,
					 GEN_STACK | GEN_ALU64,
					 GEN_BUF | GEN_ATOMIC | GEN_ALU32,
					 GEN_ALL_FAMILIES & ~GEN_CALL};
	for (unsigned m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		o.families = masks[m];
		for (uint64_t s = 0; s < 500; s++) {
			CHECK(gen_program(s, &o, &a) == 0);
			CHECK(!uses_outside(&a, masks[m]));
			CHECK(structurally_valid(&a));
			CHECK(!(masks[m] & GEN_BUF) == !a.buf_len);
		}
	}

	/* Safe programs never trap in the bounds-checking interpreter (in-bounds, initialised
	 * accesses only, and they terminate); with unsafe_pct some do. */
	int traps = 0, unsafe_progs = 0;
	for (uint64_t s = 0; s < 3000; s++) {
		struct gen_opts v;
		uint64_t r0;
		gen_opts_for_seed(s, 0, &v);
		CHECK(gen_program(s, &v, &a) == 0);
		CHECK(a.n_unsafe == 0);
		int rc = run_checked(&a, &r0);
		if (rc)
			fprintf(stderr, "seed %llu: safe program trapped (%d)\n",
				(unsigned long long)s, rc);
		CHECK(rc == 0);
		v.unsafe_pct = 30;
		CHECK(gen_program(s, &v, &a) == 0);
		unsafe_progs += a.n_unsafe > 0;
		traps += run_checked(&a, &r0) == -14;
	}
	printf("unsafe_pct 30: %d of 3000 programs have unsafe accesses, %d trap\n", unsafe_progs,
	       traps);
	CHECK(unsafe_progs > 1000);
	CHECK(traps > 300);

	/* Maps and helpers: only with their families, structurally valid, the promised patterns
	 * appear, safe programs never trap in the bounds-checking interpreter (NULL checks, value
	 * and record bounds, records released), unsafe ones do. */
	static const uint32_t map_masks[] = {GEN_ALL_FAMILIES | GEN_MAP_FAMILIES | GEN_NONDET,
					     GEN_ALU64 | GEN_STACK | GEN_ATOMIC | GEN_MAP_LOOKUP,
					     GEN_ALU32 | GEN_JMP | GEN_MAP_UPDATE,
					     GEN_V3_FAMILIES | GEN_RINGBUF,
					     GEN_ALU64 | GEN_NONDET | GEN_LOOP};
	uint64_t seen[EBPF_FUNC_ringbuf_discard + 1] = {0}, null_checks = 0, value_atomics = 0;
	for (unsigned m = 0; m < sizeof(map_masks) / sizeof(map_masks[0]); m++) {
		int map_traps = 0, map_unsafe = 0;
		for (uint64_t s = 0; s < 1000; s++) {
			struct gen_opts v;
			uint64_t r0;
			gen_opts_for_seed(s, map_masks[m], &v);
			CHECK(gen_program(s, &v, &a) == 0);
			CHECK(!uses_outside(&a, map_masks[m]));
			CHECK(structurally_valid(&a));
			CHECK(a.n_maps ==
			      ((map_masks[m] & (GEN_MAP_FAMILIES | GEN_NONDET)) ? 6 : 0));
			int rc = run_checked(&a, &r0);
			if (rc)
				fprintf(stderr,
					"seed %llu (mask 0x%x): safe program trapped (%d)\n",
					(unsigned long long)s, map_masks[m], rc);
			CHECK(rc == 0);
			for (uint32_t pc = 0; pc < a.n_insns; pc++) {
				const struct ebpf_insn *i = &a.insns[pc];
				if (i->code == (EBPF_JMP | EBPF_CALL) && !i->src_reg &&
				    i->imm > 0 && i->imm <= EBPF_FUNC_ringbuf_discard)
					seen[i->imm]++;
				/* r = r0 after a lookup, then a NULL check on one of them */
				if (i->code == (EBPF_JMP | EBPF_CALL) && !i->src_reg &&
				    i->imm == EBPF_FUNC_map_lookup_elem && pc + 2 < a.n_insns &&
				    (a.insns[pc + 2].code == (EBPF_JMP | EBPF_JEQ | EBPF_K) ||
				     a.insns[pc + 2].code == (EBPF_JMP | EBPF_JNE | EBPF_K)))
					null_checks++;
				/* without the buffer, r6-r8 hold only values and records */
				if (!(map_masks[m] & GEN_BUF) && EBPF_CLASS(i->code) == EBPF_STX &&
				    EBPF_MODE(i->code) == EBPF_ATOMIC && i->dst_reg >= 6 &&
				    i->dst_reg <= 8)
					value_atomics++;
			}
			v.unsafe_pct = 30;
			CHECK(gen_program(s, &v, &a) == 0);
			map_unsafe += a.n_unsafe > 0;
			map_traps += run_checked(&a, &r0) == -14;
		}
		printf("families 0x%x, unsafe_pct 30: %d of 1000 programs have unsafe accesses, %d "
		       "trap\n",
		       map_masks[m], map_unsafe, map_traps);
		CHECK(!(map_masks[m] & GEN_MAP_FAMILIES) || map_traps > 100);
	}
	printf("helper calls:");
	for (uint32_t id = 1; id <= EBPF_FUNC_ringbuf_discard; id++)
		if (seen[id])
			printf(" %u x%llu", id, (unsigned long long)seen[id]);
	printf("; NULL-checked lookups %llu, atomics on values/records %llu\n",
	       (unsigned long long)null_checks, (unsigned long long)value_atomics);
	static const int32_t promised[] = {
	    EBPF_FUNC_map_lookup_elem, EBPF_FUNC_map_update_elem, EBPF_FUNC_map_delete_elem,
	    EBPF_FUNC_ktime_get_ns,    EBPF_FUNC_get_prandom_u32, EBPF_FUNC_get_smp_processor_id,
	    EBPF_FUNC_ringbuf_output,  EBPF_FUNC_ringbuf_reserve, EBPF_FUNC_ringbuf_submit,
	    EBPF_FUNC_ringbuf_discard};
	for (unsigned k = 0; k < sizeof(promised) / sizeof(promised[0]); k++)
		CHECKF(seen[promised[k]] > 20, "helper %d called %llu times", promised[k],
		       (unsigned long long)seen[promised[k]]);
	CHECK(null_checks > 100);
	CHECK(value_atomics > 20);
	gen_env_free(&env);

	/* Option checks and family names. */
	struct gen_opts badopt = {.sz = sizeof(badopt), .buf_len = 12};
	CHECK(gen_program(1, &badopt, &a) == -22);
	uint32_t mask = 0;
	CHECK(gen_parse_families("all,-call", &mask) == 0 &&
	      mask == (GEN_ALL_FAMILIES & ~GEN_CALL));
	CHECK(gen_parse_families("alu64,jmp", &mask) == 0 && mask == (GEN_ALU64 | GEN_JMP));
	CHECK(gen_parse_families("alu64,nope", &mask) != 0);
	CHECK(gen_parse_families("all,maps,nondet", &mask) == 0 &&
	      mask == (GEN_ALL_FAMILIES | GEN_MAP_FAMILIES | GEN_NONDET));
	struct gen_map too_small = {1 /* hash */, 4, 4, 8};
	struct gen_opts badmaps = {
	    .sz = sizeof(badmaps), .families = GEN_MAP_LOOKUP, .maps = &too_small, .n_maps = 1};
	CHECK(gen_program(1, &badmaps, &a) == -22);
	char names[256];
	gen_format_families(GEN_ALU32 | GEN_LOOP, names, sizeof(names));
	CHECK(!strcmp(names, "alu32,loop"));
	return check_summary("test_gen");
}
