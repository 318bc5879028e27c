/* Every ALU and ALU64 instruction of RFC 9669 (v1-v4), in register and immediate form, with
 * the kernel's corner cases: division by zero, INT_MIN / -1, masked shifts, 32-bit results
 * zero-extended, sign-extending moves, byte swaps. Each case runs in all interpreter variants. */
#include <stdint.h>

#include "interp_harness.h"

struct alu_case {
	const char *name;
	int is64;
	uint8_t op;
	int16_t off;  /* 1: signed div/mod; 8/16/32: movsx */
	uint64_t dst; /* initial r0 */
	uint64_t src; /* r1, or the immediate when it fits */
	uint64_t expect;
};

#define I64    INT64_MIN
#define U64MAX UINT64_MAX

static const struct alu_case cases[] = {
    /* 64-bit */
    {"add64", 1, EBPF_ADD, 0, 5, (uint64_t)-3, 2},
    {"add64 wrap", 1, EBPF_ADD, 0, U64MAX, 2, 1},
    {"sub64", 1, EBPF_SUB, 0, 3, 5, (uint64_t)-2},
    {"mul64", 1, EBPF_MUL, 0, 7, (uint64_t)-3, (uint64_t)-21},
    {"mul64 wrap", 1, EBPF_MUL, 0, 1ull << 32, 1ull << 32, 0},
    {"div64", 1, EBPF_DIV, 0, 100, 7, 14},
    {"div64 unsigned", 1, EBPF_DIV, 0, (uint64_t)-2, 2, 0x7fffffffffffffffull},
    {"div64 by -1 unsigned", 1, EBPF_DIV, 0, 10, (uint64_t)-1, 0},
    {"div64 by 0", 1, EBPF_DIV, 0, 1234, 0, 0},
    {"mod64", 1, EBPF_MOD, 0, 100, 7, 2},
    {"mod64 by 0", 1, EBPF_MOD, 0, 0xdeadbeefcafeull, 0, 0xdeadbeefcafeull},
    {"or64", 1, EBPF_OR, 0, 0xf0f0000000000000ull, 0x0f, 0xf0f000000000000full},
    {"and64", 1, EBPF_AND, 0, 0xff0000ff0000ffffull, 0xff00ff, 0xffull},
    {"and64 imm sign-extends", 1, EBPF_AND, 0, 0xffff0000ffff0000ull, (uint64_t)-1,
     0xffff0000ffff0000ull},
    {"xor64", 1, EBPF_XOR, 0, 0xff00ff00ff00ff00ull, 0xffff, 0xff00ff00ff0000ffull},
    {"lsh64", 1, EBPF_LSH, 0, 1, 63, 0x8000000000000000ull},
    {"lsh64 masked", 1, EBPF_LSH, 0, 1, 65, 2},
    {"rsh64", 1, EBPF_RSH, 0, 0x8000000000000000ull, 63, 1},
    {"rsh64 masked", 1, EBPF_RSH, 0, 0x8000000000000000ull, 64 + 4, 0x0800000000000000ull},
    {"arsh64", 1, EBPF_ARSH, 0, 0x8000000000000000ull, 4, 0xf800000000000000ull},
    {"arsh64 positive", 1, EBPF_ARSH, 0, 0x4000000000000000ull, 62, 1},
    {"arsh64 masked", 1, EBPF_ARSH, 0, (uint64_t)-16, 64 + 2, (uint64_t)-4},
    {"mov64", 1, EBPF_MOV, 0, 99, (uint64_t)-1, U64MAX},
    {"sdiv64", 1, EBPF_DIV, 1, (uint64_t)-7, 2, (uint64_t)-3},
    {"sdiv64 neg divisor", 1, EBPF_DIV, 1, 7, (uint64_t)-2, (uint64_t)-3},
    {"sdiv64 INT_MIN/-1", 1, EBPF_DIV, 1, (uint64_t)I64, (uint64_t)-1, (uint64_t)I64},
    {"sdiv64 by 0", 1, EBPF_DIV, 1, (uint64_t)-7, 0, 0},
    {"smod64", 1, EBPF_MOD, 1, (uint64_t)-7, 2, (uint64_t)-1},
    {"smod64 neg divisor", 1, EBPF_MOD, 1, 7, (uint64_t)-2, 1},
    {"smod64 INT_MIN%-1", 1, EBPF_MOD, 1, (uint64_t)I64, (uint64_t)-1, 0},
    {"smod64 by 0", 1, EBPF_MOD, 1, (uint64_t)-7, 0, (uint64_t)-7},
    /* 32-bit: dst carries junk in its upper half, which must be zeroed */
    {"add32", 0, EBPF_ADD, 0, 0xabcdef0000000001ull, 1, 2},
    {"add32 wrap", 0, EBPF_ADD, 0, 0xffffffffull, 1, 0},
    {"sub32", 0, EBPF_SUB, 0, 0x1100000000ull, 1, 0xffffffffull},
    {"mul32", 0, EBPF_MUL, 0, 0x1200010000ull, 0x10000, 0},
    {"mul32 signed imm", 0, EBPF_MUL, 0, 0x1200000003ull, (uint64_t)-1, 0xfffffffdull},
    {"div32", 0, EBPF_DIV, 0, 0x10000000064ull, 7, 14},
    {"div32 unsigned", 0, EBPF_DIV, 0, 0xfffffffeull, 2, 0x7fffffffull},
    {"div32 by 0", 0, EBPF_DIV, 0, 0x1200000064ull, 0, 0},
    {"div32 src upper ignored", 0, EBPF_DIV, 0, 100, 0x100000000ull, 0},
    {"mod32", 0, EBPF_MOD, 0, 0x10000000064ull, 7, 2},
    {"mod32 by 0 zeroes upper", 0, EBPF_MOD, 0, 0xabcd00000064ull, 0, 0x64},
    {"or32", 0, EBPF_OR, 0, 0xff000000f0ull, 0x0f, 0xff},
    {"and32", 0, EBPF_AND, 0, 0xff000000f0ull, 0x3c, 0x30},
    {"xor32", 0, EBPF_XOR, 0, 0xff000000f0ull, 0xff, 0x0f},
    {"lsh32", 0, EBPF_LSH, 0, 0x100000001ull, 31, 0x80000000ull},
    {"lsh32 masked", 0, EBPF_LSH, 0, 1, 33, 2},
    {"rsh32", 0, EBPF_RSH, 0, 0xff80000000ull, 31, 1},
    {"rsh32 masked", 0, EBPF_RSH, 0, 0x80000000ull, 32 + 4, 0x08000000ull},
    {"arsh32", 0, EBPF_ARSH, 0, 0x1280000000ull, 4, 0xf8000000ull},
    {"arsh32 masked", 0, EBPF_ARSH, 0, 0xfffffff0ull, 32 + 2, 0xfffffffcull},
    {"mov32", 0, EBPF_MOV, 0, 99, (uint64_t)-1, 0xffffffffull},
    {"mov32 reg zero-extends", 0, EBPF_MOV, 0, 99, 0x1234567887654321ull, 0x87654321ull},
    {"sdiv32", 0, EBPF_DIV, 1, 0xfffffff9ull, 2, 0xfffffffdull},
    {"sdiv32 INT_MIN/-1", 0, EBPF_DIV, 1, 0x80000000ull, (uint64_t)-1, 0x80000000ull},
    {"sdiv32 by 0", 0, EBPF_DIV, 1, 0x1280000000ull, 0, 0},
    {"smod32", 0, EBPF_MOD, 1, 0xfffffff9ull, 2, 0xffffffffull},
    {"smod32 INT_MIN%-1", 0, EBPF_MOD, 1, 0x80000000ull, (uint64_t)-1, 0},
    {"smod32 by 0", 0, EBPF_MOD, 1, 0x55fffffff9ull, 0, 0xfffffff9ull},
    /* sign-extending moves (register form only) */
    {"movsx64 8", 1, EBPF_MOV, 8, 0, 0x1234567890abcd80ull, 0xffffffffffffff80ull},
    {"movsx64 8 positive", 1, EBPF_MOV, 8, 0, 0xff7f, 0x7f},
    {"movsx64 16", 1, EBPF_MOV, 16, 0, 0x12348000ull, 0xffffffffffff8000ull},
    {"movsx64 32", 1, EBPF_MOV, 32, 0, 0x1180000000ull, 0xffffffff80000000ull},
    {"movsx32 8", 0, EBPF_MOV, 8, 0xffull << 40, 0x80, 0xffffff80ull},
    {"movsx32 16", 0, EBPF_MOV, 16, 0, 0x98765, 0xffff8765ull},
    {"movsx32 16 positive", 0, EBPF_MOV, 16, 0, 0x7fff, 0x7fff},
};

/* Can v be written as the instruction's imm (sign-extended to 64, or truncated to 32)? */
static int fits_imm(const struct alu_case *c, int32_t *imm)
{
	int64_t v = (int64_t)c->src;

	*imm = (int32_t)c->src;
	if (c->is64)
		return v >= INT32_MIN && v <= INT32_MAX;
	return (c->src >> 32) == 0 || (v >= INT32_MIN && v <= INT32_MAX);
}

static void run_case(const struct alu_case *c)
{
	uint8_t cls = c->is64 ? EBPF_ALU64 : EBPF_ALU;
	char name[96];
	int32_t imm;

	/* register form */
	{
		struct ebpf_insn p[] = {
		    LD_IMM64(0, c->dst),
		    LD_IMM64(1, c->src),
		    INSN(cls | c->op | EBPF_X, 0, 1, c->off, 0),
		    EXIT(),
		};
		snprintf(name, sizeof(name), "%s (reg)", c->name);
		uint64_t r = harness_run(name, p, INSN_CNT(p), 0, 0, NULL);
		if (r != c->expect)
			fprintf(stderr, "%s: got 0x%llx want 0x%llx\n", name, (unsigned long long)r,
				(unsigned long long)c->expect);
		CHECK_EQ_U64(r, c->expect);
	}
	/* immediate form (movsx has none) */
	if (!(c->op == EBPF_MOV && c->off) && fits_imm(c, &imm)) {
		struct ebpf_insn p[] = {
		    LD_IMM64(0, c->dst),
		    INSN(cls | c->op | EBPF_K, 0, 0, c->off, imm),
		    EXIT(),
		};
		snprintf(name, sizeof(name), "%s (imm)", c->name);
		uint64_t r = harness_run(name, p, INSN_CNT(p), 0, 0, NULL);
		if (r != c->expect)
			fprintf(stderr, "%s: got 0x%llx want 0x%llx\n", name, (unsigned long long)r,
				(unsigned long long)c->expect);
		CHECK_EQ_U64(r, c->expect);
	}
}

/* NEG and the byte-order instructions take only dst. */
static uint64_t run_unary(struct ebpf_insn insn, uint64_t dst)
{
	struct ebpf_insn p[] = {LD_IMM64(0, dst), insn, EXIT()};
	return harness_run("unary", p, INSN_CNT(p), 0, 0, NULL);
}

/* The same register as both operands, and dst != r0 with r1/r2 inputs. */
static void test_reg_aliasing(void)
{
	struct ebpf_insn p[] = {
	    MOV64_REG(3, 1),
	    ALU64_REG(EBPF_ADD, 3, 3),
	    ALU64_REG(EBPF_SUB, 3, 2),
	    ALU32_REG(EBPF_MUL, 2, 2),
	    MOV64_REG(0, 3),
	    ALU64_REG(EBPF_ADD, 0, 2),
	    EXIT(),
	};
	CHECK_EQ_U64(harness_run("aliasing", p, INSN_CNT(p), 10, 3, NULL), 10 + 10 - 3 + 9);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);

	CHECK_EQ_U64(run_unary(NEG64(0), 5), (uint64_t)-5);
	CHECK_EQ_U64(run_unary(NEG64(0), (uint64_t)INT64_MIN), (uint64_t)INT64_MIN);
	CHECK_EQ_U64(run_unary(NEG32(0), 0xab00000001ull), 0xffffffffull);
	CHECK_EQ_U64(run_unary(NEG32(0), 0x80000000ull), 0x80000000ull);

	CHECK_EQ_U64(run_unary(ENDIAN_LE(0, 16), 0x1122334455667788ull), 0x7788);
	CHECK_EQ_U64(run_unary(ENDIAN_LE(0, 32), 0x1122334455667788ull), 0x55667788);
	CHECK_EQ_U64(run_unary(ENDIAN_LE(0, 64), 0x1122334455667788ull), 0x1122334455667788ull);
	CHECK_EQ_U64(run_unary(ENDIAN_BE(0, 16), 0x1122334455667788ull), 0x8877);
	CHECK_EQ_U64(run_unary(ENDIAN_BE(0, 32), 0x1122334455667788ull), 0x88776655);
	CHECK_EQ_U64(run_unary(ENDIAN_BE(0, 64), 0x1122334455667788ull), 0x8877665544332211ull);
	CHECK_EQ_U64(run_unary(BSWAP(0, 16), 0x1122334455667788ull), 0x8877);
	CHECK_EQ_U64(run_unary(BSWAP(0, 32), 0x1122334455667788ull), 0x88776655);
	CHECK_EQ_U64(run_unary(BSWAP(0, 64), 0x1122334455667788ull), 0x8877665544332211ull);

	/* MOV64 imm sign-extends, MOV32 imm zero-extends */
	CHECK_EQ_U64(run_unary(MOV64_IMM(0, -2), 0), (uint64_t)-2);
	CHECK_EQ_U64(run_unary(MOV32_IMM(0, -2), 0), 0xfffffffeull);
	test_reg_aliasing();
	return check_summary("interp_alu");
}
