/* Every JMP and JMP32 instruction of RFC 9669: each condition taken and not taken, signed
 * and unsigned, 64- and 32-bit, register and immediate form; ja with 16-bit off, gotol
 * (JMP32 ja with 32-bit imm), backward jumps. */
#include <stdint.h>

#include "interp_harness.h"

struct jmp_case {
	uint8_t op;
	uint64_t dst, src;
	int taken64, taken32;
};

static const struct jmp_case cases[] = {
    {EBPF_JEQ, 5, 5, 1, 1},
    {EBPF_JEQ, 5, 6, 0, 0},
    {EBPF_JEQ, 0x100000005ull, 5, 0, 1}, /* JMP32 sees only the low half */
    {EBPF_JNE, 5, 6, 1, 1},
    {EBPF_JNE, 5, 5, 0, 0},
    {EBPF_JNE, 0x100000005ull, 5, 1, 0},
    {EBPF_JSET, 6, 2, 1, 1},
    {EBPF_JSET, 6, 1, 0, 0},
    {EBPF_JSET, 0x100000000ull, 0x100000000ull, 1, 0},
    {EBPF_JGT, 6, 5, 1, 1},
    {EBPF_JGT, 5, 5, 0, 0},
    {EBPF_JGT, (uint64_t)-1, 1, 1, 1}, /* unsigned: -1 is the largest */
    {EBPF_JGT, 0x100000000ull, 1, 1, 0},
    {EBPF_JGE, 5, 5, 1, 1},
    {EBPF_JGE, 4, 5, 0, 0},
    {EBPF_JGE, 0xffffffff00000000ull, 1, 1, 0},
    {EBPF_JLT, 4, 5, 1, 1},
    {EBPF_JLT, 5, 5, 0, 0},
    {EBPF_JLT, 1, (uint64_t)-1, 1, 1},
    {EBPF_JLT, 0x100000000ull, 1, 0, 1},
    {EBPF_JLE, 5, 5, 1, 1},
    {EBPF_JLE, 6, 5, 0, 0},
    {EBPF_JLE, 0x100000000ull, 0, 0, 1},
    {EBPF_JSGT, 1, (uint64_t)-1, 1, 1}, /* signed: 1 > -1 */
    {EBPF_JSGT, (uint64_t)-1, 1, 0, 0},
    {EBPF_JSGT, 5, 5, 0, 0},
    {EBPF_JSGT, 0x80000000ull, 0, 1, 0}, /* positive in 64, negative in 32 */
    {EBPF_JSGE, 5, 5, 1, 1},
    {EBPF_JSGE, (uint64_t)-2, (uint64_t)-1, 0, 0},
    {EBPF_JSGE, 0x80000000ull, 1, 1, 0},
    {EBPF_JSLT, (uint64_t)-1, 1, 1, 1},
    {EBPF_JSLT, 1, (uint64_t)-1, 0, 0},
    {EBPF_JSLT, 5, 5, 0, 0},
    {EBPF_JSLT, 0x80000000ull, 0, 0, 1},
    {EBPF_JSLE, 5, 5, 1, 1},
    {EBPF_JSLE, (uint64_t)INT64_MIN, (uint64_t)INT64_MAX, 1, 0},
    {EBPF_JSLE, 6, 5, 0, 0},
    {EBPF_JSLE, 0xffffffffull, 0, 0, 1},
};

/* r0 = 1 when the jump is taken, 2 when not. */
static void run_case(const struct jmp_case *c, int is32, int is_reg)
{
	uint8_t cls = is32 ? EBPF_JMP32 : EBPF_JMP;
	int64_t sv = (int64_t)c->src;
	int want = is32 ? c->taken32 : c->taken64;
	struct ebpf_insn p[] = {
	    LD_IMM64(1, c->dst),
	    LD_IMM64(2, c->src),
	    is_reg ? INSN(cls | c->op | EBPF_X, 1, 2, 2, 0)
		   : INSN(cls | c->op | EBPF_K, 1, 0, 2, (int32_t)c->src),
	    MOV64_IMM(0, 2),
	    EXIT(),
	    MOV64_IMM(0, 1),
	    EXIT(),
	};
	char name[80];
	uint64_t r;

	/* The immediate is sign-extended to 64 bits (JMP) or taken as its low 32 bits (JMP32). */
	if (!is_reg && !is32 && (sv < INT32_MIN || sv > INT32_MAX))
		return;
	if (!is_reg && is32 && (c->src >> 32) && (sv < INT32_MIN || sv > INT32_MAX))
		return;
	snprintf(name, sizeof(name), "jmp%s op 0x%02x %s 0x%llx 0x%llx", is32 ? "32" : "", c->op,
		 is_reg ? "reg" : "imm", (unsigned long long)c->dst, (unsigned long long)c->src);
	r = harness_run(name, p, INSN_CNT(p), 0, 0, NULL);
	if (r != (uint64_t)(want ? 1 : 2))
		fprintf(stderr, "%s: %s, expected %s\n", name, r == 1 ? "taken" : "not taken",
			want ? "taken" : "not taken");
	CHECK_EQ_U64(r, want ? 1 : 2);
}

static void test_ja(void)
{
	struct ebpf_insn fwd[] = {MOV64_IMM(0, 1), JA(1), MOV64_IMM(0, 2), EXIT()};
	struct ebpf_insn gotol[] = {MOV64_IMM(0, 1), JA32(1), MOV64_IMM(0, 2), EXIT()};
	/* Backward jumps: a loop summing 1..10, and ja -1 style back edges through gotol. */
	struct ebpf_insn loop[] = {
	    MOV64_IMM(0, 0),
	    MOV64_IMM(1, 10),
	    ALU64_REG(EBPF_ADD, 0, 1),
	    ALU64_IMM(EBPF_SUB, 1, 1),
	    JMP_IMM(EBPF_JNE, 1, 0, -3),
	    EXIT(),
	};
	struct ebpf_insn loop32[] = {
	    MOV64_IMM(0, 0),
	    MOV32_IMM(1, 10),
	    ALU64_IMM(EBPF_ADD, 0, 2),
	    ALU32_IMM(EBPF_SUB, 1, 1),
	    JMP32_IMM(EBPF_JEQ, 1, 0, 1),
	    JA32(-4),
	    EXIT(),
	};
	/* A jump to the last instruction and ja 0 (a no-op). */
	struct ebpf_insn nop[] = {MOV64_IMM(0, 7), JA(0), JA32(0), JA(0), EXIT()};

	CHECK_EQ_U64(harness_run("ja", fwd, INSN_CNT(fwd), 0, 0, NULL), 1);
	CHECK_EQ_U64(harness_run("gotol", gotol, INSN_CNT(gotol), 0, 0, NULL), 1);
	CHECK_EQ_U64(harness_run("loop", loop, INSN_CNT(loop), 0, 0, NULL), 55);
	CHECK_EQ_U64(harness_run("loop32", loop32, INSN_CNT(loop32), 0, 0, NULL), 20);
	CHECK_EQ_U64(harness_run("ja 0", nop, INSN_CNT(nop), 0, 0, NULL), 7);
}

/* gotol reaches further than a 16-bit offset can. */
static void test_gotol_far(void)
{
	enum { N = 40000 };
	static struct ebpf_insn p[N + 4];
	uint32_t i;

	p[0] = MOV64_IMM(0, 1);
	p[1] = JA32(N);
	for (i = 0; i < N; i++)
		p[2 + i] = MOV64_IMM(0, 2);
	p[N + 2] = EXIT();
	CHECK_EQ_U64(harness_run("gotol far", p, N + 3, 0, 0, NULL), 1);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_case(&cases[i], 0, 0);
		run_case(&cases[i], 0, 1);
		run_case(&cases[i], 1, 0);
		run_case(&cases[i], 1, 1);
	}
	test_ja();
	test_gotol_far();
	return check_summary("interp_jmp");
}
