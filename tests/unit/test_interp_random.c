/* Random programs against ebpf_exec__new and the interpreter variants.
 *
 * Properties: ebpf_exec__new never crashes and either accepts or gives one line naming an
 * instruction; an accepted program never crashes the bounds-checking interpreter (it ends with
 * r0 or a fault, within the instruction limit); and when the checked run succeeds, the fast and
 * instruction-limited variants give the same r0 and leave the same memory behind (the checked
 * run proved every access in bounds and every stack read initialised, so the result is
 * deterministic).
 *
 * usage: test_interp_random [count [seed]]   (default 100000 programs, seed 1) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "insn_macros.h"
#include "ebpf/exec.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static uint64_t h_mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return a * 31 + b * 7 + (c ^ d) - e;
}
static const struct ebpf_helper_proto p_mix = {
    .id = 3, .name = "mix", .fn = h_mix, .args = {EBPF_ARG_ANYTHING, EBPF_ARG_ANYTHING}};
static struct ebpf_helper_table table;

static int32_t rand_imm(void)
{
	static const int32_t special[] = {0, 1, -1, 2, 7, 31, 32, 63, 64, INT32_MIN, INT32_MAX, 16};
	switch (below(3)) {
	case 0:
		return special[below(sizeof(special) / sizeof(special[0]))];
	case 1:
		return (int32_t)below(64) - 32;
	default:
		return (int32_t)rnd();
	}
}

/* An instruction that is usually structurally valid and usually touches memory near r1 (the
 * 64-byte buffer) or r10. */
static void rand_insn(struct ebpf_insn *in, uint32_t pc, uint32_t n)
{
	static const uint8_t sizes[] = {EBPF_B, EBPF_H, EBPF_W, EBPF_DW};
	static const int32_t atomics[] = {EBPF_ATOMIC_ADD,
					  EBPF_ATOMIC_OR,
					  EBPF_ATOMIC_AND,
					  EBPF_ATOMIC_XOR,
					  EBPF_ATOMIC_ADD | EBPF_FETCH,
					  EBPF_ATOMIC_OR | EBPF_FETCH,
					  EBPF_ATOMIC_AND | EBPF_FETCH,
					  EBPF_ATOMIC_XOR | EBPF_FETCH,
					  EBPF_XCHG,
					  EBPF_CMPXCHG};
	uint32_t kind = below(100);
	uint8_t base = below(3) ? (below(2) ? 1 : 10) : (uint8_t)below(11);

	memset(in, 0, sizeof(*in));
	in->dst_reg = below(10);
	in->src_reg = below(11);
	if (kind < 40) { /* ALU */
		uint8_t op = (uint8_t)(below(13) << 4), cls = below(2) ? EBPF_ALU64 : EBPF_ALU;
		in->code = cls | op | (below(2) ? EBPF_X : EBPF_K);
		if (op == EBPF_NEG)
			in->code &= ~EBPF_X;
		if (EBPF_SRC(in->code) == EBPF_K) {
			in->src_reg = 0;
			in->imm = rand_imm();
		}
		if ((op == EBPF_DIV || op == EBPF_MOD) && below(2))
			in->off = 1;
		if (op == EBPF_MOV && EBPF_SRC(in->code) == EBPF_X && below(3) == 0)
			in->off =
			    cls == EBPF_ALU64 ? (int16_t)(8 << below(3)) : (int16_t)(8 << below(2));
		if (op == EBPF_END) {
			in->src_reg = 0;
			in->imm = 16 << below(3);
			if (cls == EBPF_ALU64)
				in->code = EBPF_ALU64 | EBPF_END;
		}
	} else if (kind < 60) { /* conditional jump, mostly forward */
		uint8_t ops[] = {EBPF_JEQ,  EBPF_JGT, EBPF_JGE, EBPF_JSET, EBPF_JNE, EBPF_JSGT,
				 EBPF_JSGE, EBPF_JLT, EBPF_JLE, EBPF_JSLT, EBPF_JSLE};
		in->code = (below(2) ? EBPF_JMP : EBPF_JMP32) | ops[below(11)] |
			   (below(2) ? EBPF_X : EBPF_K);
		if (EBPF_SRC(in->code) == EBPF_K) {
			in->src_reg = 0;
			in->imm = rand_imm();
		}
		in->off = (int16_t)((int)below(n) - (int)pc - 1);
		if (below(4))
			in->off = (int16_t)below(n - pc);
	} else if (kind < 72) { /* load */
		in->code = EBPF_LDX | sizes[below(4)] | EBPF_MEM;
		if (below(4) == 0 && EBPF_SIZE(in->code) != EBPF_DW)
			in->code = (in->code & ~0xe0) | EBPF_MEMSX;
		in->src_reg = base;
		in->off = (int16_t)(base == 10 ? -(int)below(72) : (int)below(72) - 4);
	} else if (kind < 84) { /* store */
		in->code = (below(2) ? EBPF_STX : EBPF_ST) | sizes[below(4)] | EBPF_MEM;
		in->dst_reg = base;
		in->off = (int16_t)(base == 10 ? -(int)below(72) : (int)below(72) - 4);
		if (EBPF_CLASS(in->code) == EBPF_ST) {
			in->src_reg = 0;
			in->imm = rand_imm();
		}
	} else if (kind < 88) { /* atomic */
		in->code = EBPF_STX | (below(2) ? EBPF_W : EBPF_DW) | EBPF_ATOMIC;
		in->dst_reg = base;
		in->off = (int16_t)(base == 10 ? -8 * (int)below(9) : 8 * (int)below(9));
		in->imm = atomics[below(10)];
	} else if (kind < 91) { /* calls */
		in->code = EBPF_JMP | EBPF_CALL;
		in->dst_reg = 0;
		if (below(2)) {
			in->src_reg = EBPF_PSEUDO_CALL;
			in->imm = (int32_t)below(n) - (int32_t)pc - 1;
		} else {
			in->src_reg = 0;
			in->imm = below(8) ? 3 : (int32_t)below(300);
		}
	} else if (kind < 94) {
		in->code = EBPF_JMP | EBPF_EXIT;
		in->dst_reg = in->src_reg = 0;
	} else if (kind < 96) {
		in->code = below(2) ? (EBPF_JMP | EBPF_JA) : (EBPF_JMP32 | EBPF_JA);
		in->dst_reg = in->src_reg = 0;
		if (in->code == (EBPF_JMP | EBPF_JA))
			in->off = (int16_t)below(n - pc);
		else
			in->imm = (int32_t)below(n - pc);
	} else { /* raw noise */
		uint64_t r = rnd();
		memcpy(in, &r, sizeof(*in));
	}
}

static uint8_t mem[64], after[3][64];

/* Stack addresses differ between the variants (each has its own C frame), so runs are only
 * comparable when r10 serves as nothing but a load/store base. */
static int uses_fp_as_value(const struct ebpf_insn *p, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		const struct ebpf_insn *in = &p[k];
		uint8_t cls = EBPF_CLASS(in->code);

		if (ebpf_insn_is_lddw(in)) {
			k++;
			continue;
		}
		if (cls == EBPF_LDX || cls == EBPF_ST)
			continue;
		if (cls == EBPF_STX && in->src_reg != 10)
			continue;
		if (cls == EBPF_JMP &&
		    (EBPF_OP(in->code) == EBPF_CALL || EBPF_OP(in->code) == EBPF_EXIT))
			continue; /* helper args: r1-r5 only, r10 cannot be one */
		if (in->dst_reg == 10 || in->src_reg == 10)
			return 1;
	}
	return 0;
}

static void fill(long i)
{
	for (unsigned b = 0; b < sizeof(mem); b++)
		mem[b] = (uint8_t)(b * 37 + i);
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 100000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	long accepted = 0, ran_ok = 0, faulted = 0, compared = 0, i;
	struct ebpf_insn p[40];
	char err[256];

	table.by_id[3] = &p_mix;
	rng_state = seed;
	for (i = 0; i < count; i++) {
		uint32_t n = 2 + below(38), k;
		struct ebpf_exec_opts o = {.sz = sizeof(o), .helpers = &table};
		struct ebpf_exec *prog;
		struct ebpf_region reg;
		struct ebpf_fault f;
		uint64_t r0c = 0, r0f = 0, r0l = 0;
		int rc;

		for (k = 0; k < n; k++)
			rand_insn(&p[k], k, n);
		/* occasionally a 64-bit load, always a plausible end */
		if (below(4) == 0 && n > 3) {
			k = below(n - 2);
			p[k] = LD_IMM64_RAW(below(10), 0, rnd());
			p[k + 1] = INSN(0, 0, 0, 0, (int32_t)rnd());
		}
		if (below(8))
			p[n - 1] = EXIT();
		err[0] = 0;
		prog = ebpf_exec__new(p, n, &o, err, sizeof(err));
		if (!prog) {
			CHECK(strncmp(err, "insn ", 5) == 0 && strchr(err, '\n') == NULL);
			if (strncmp(err, "insn ", 5))
				fprintf(stderr, "program %ld: message '%s'\n", i, err);
			continue;
		}
		accepted++;
		fill(i);
		reg = (struct ebpf_region){(uint64_t)(uintptr_t)mem, sizeof(mem),
					   EBPF_REGION_READ | EBPF_REGION_WRITE};
		rc = ebpf_interp__run(prog, (uint64_t)(uintptr_t)mem, sizeof(mem),
				      &(struct ebpf_run_opts){.sz = sizeof(struct ebpf_run_opts),
							      .checked = 1,
							      .regions = &reg,
							      .n_regions = 1,
							      .insn_limit = 5000,
							      .fault = &f},
				      &r0c);
		CHECK(rc == 0 || rc == -EFAULT);
		if (rc) {
			faulted++;
			CHECK(f.kind != EBPF_FAULT_NONE && f.msg[0] && strchr(f.msg, '\n') == NULL);
			ebpf_exec__free(prog);
			continue;
		}
		ran_ok++;
		/* With r10 used as a value, the path may depend on where the stack is, so the
		 * unchecked variants could go where the checked run did not. */
		if (uses_fp_as_value(p, n)) {
			ebpf_exec__free(prog);
			continue;
		}
		compared++;
		memcpy(after[0], mem, sizeof(mem));
		/* Same program, same input, unchecked: must agree. */
		fill(i);
		rc = ebpf_interp__run(prog, (uint64_t)(uintptr_t)mem, sizeof(mem), NULL, &r0f);
		CHECK_EQ_U64(rc, 0);
		memcpy(after[1], mem, sizeof(mem));
		fill(i);
		rc = ebpf_interp__run(
		    prog, (uint64_t)(uintptr_t)mem, sizeof(mem),
		    &(struct ebpf_run_opts){.sz = sizeof(struct ebpf_run_opts), .insn_limit = 5000},
		    &r0l);
		CHECK_EQ_U64(rc, 0);
		memcpy(after[2], mem, sizeof(mem));
		{
			if (r0c != r0f || r0c != r0l || memcmp(after[0], after[1], sizeof(mem)) ||
			    memcmp(after[0], after[2], sizeof(mem)))
				fprintf(
				    stderr,
				    "program %ld (seed %llu): variants differ: r0 checked 0x%llx "
				    "fast 0x%llx limited 0x%llx\n",
				    i, (unsigned long long)seed, (unsigned long long)r0c,
				    (unsigned long long)r0f, (unsigned long long)r0l);
			CHECK_EQ_U64(r0c, r0f);
			CHECK_EQ_U64(r0c, r0l);
			CHECK(memcmp(after[0], after[1], sizeof(mem)) == 0);
			CHECK(memcmp(after[0], after[2], sizeof(mem)) == 0);
		}
		ebpf_exec__free(prog);
	}
	printf("%ld programs (seed %llu): %ld accepted, %ld ran (%ld compared), %ld faulted\n",
	       count, (unsigned long long)seed, accepted, ran_ok, compared, faulted);
	CHECK(accepted > count / 20);
	CHECK(compared > count / 100 && faulted > 0);
	return check_summary("interp_random");
}
