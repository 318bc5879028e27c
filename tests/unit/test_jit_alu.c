/* JIT ALU/ALU64: every operation with every pair of registers r0-r9 as destination and source
 * (x86 division, shifts and byte ops borrow rax, rdx and rcx, which hold r0, r3 and r4, so each
 * pair is a separate code path), immediates, and the kernel's corner cases: x/0 = 0, x%0 = x,
 * INT_MIN/-1, shift masking, 32-bit results zero-extended. Expected values come from a small
 * reference model written from RFC 9669 below; after the operation the program folds all ten
 * registers into r0, so a clobbered bystander register is caught too. */
#include "jit_util.h"

/* Reference semantics (RFC 9669 with the kernel's division rules). */
static uint64_t ref_alu(uint8_t op, int is64, int16_t off, uint64_t d, uint64_t s)
{
	if (!is64) {
		uint32_t a = (uint32_t)d, b = (uint32_t)s;
		int32_t sa = (int32_t)a, sb = (int32_t)b;

		switch (op) {
		case EBPF_ADD:
			return (uint32_t)(a + b);
		case EBPF_SUB:
			return (uint32_t)(a - b);
		case EBPF_MUL:
			return (uint32_t)(a * b);
		case EBPF_DIV:
			if (!b)
				return 0;
			if (off)
				return sb == -1 ? (uint32_t)(0u - a) : (uint32_t)(sa / sb);
			return a / b;
		case EBPF_MOD:
			if (!b)
				return a;
			if (off)
				return sb == -1 ? 0 : (uint32_t)(sa % sb);
			return a % b;
		case EBPF_OR:
			return a | b;
		case EBPF_AND:
			return a & b;
		case EBPF_XOR:
			return a ^ b;
		case EBPF_LSH:
			return (uint32_t)(a << (b & 31));
		case EBPF_RSH:
			return a >> (b & 31);
		case EBPF_ARSH:
			return (uint32_t)(sa >> (b & 31));
		case EBPF_MOV:
			if (off == 8)
				return (uint32_t)(int32_t)(int8_t)b;
			if (off == 16)
				return (uint32_t)(int32_t)(int16_t)b;
			return b;
		case EBPF_NEG:
			return (uint32_t)(0u - a);
		}
		return 0;
	}
	switch (op) {
	case EBPF_ADD:
		return d + s;
	case EBPF_SUB:
		return d - s;
	case EBPF_MUL:
		return d * s;
	case EBPF_DIV:
		if (!s)
			return 0;
		if (off)
			return (int64_t)s == -1 ? 0 - d : (uint64_t)((int64_t)d / (int64_t)s);
		return d / s;
	case EBPF_MOD:
		if (!s)
			return d;
		if (off)
			return (int64_t)s == -1 ? 0 : (uint64_t)((int64_t)d % (int64_t)s);
		return d % s;
	case EBPF_OR:
		return d | s;
	case EBPF_AND:
		return d & s;
	case EBPF_XOR:
		return d ^ s;
	case EBPF_LSH:
		return d << (s & 63);
	case EBPF_RSH:
		return d >> (s & 63);
	case EBPF_ARSH:
		return (uint64_t)((int64_t)d >> (s & 63));
	case EBPF_MOV:
		if (off == 8)
			return (uint64_t)(int64_t)(int8_t)s;
		if (off == 16)
			return (uint64_t)(int64_t)(int16_t)s;
		if (off == 32)
			return (uint64_t)(int64_t)(int32_t)s;
		return s;
	case EBPF_NEG:
		return 0 - d;
	}
	return 0;
}

struct op_case {
	uint8_t op;
	int16_t off;
	const char *name;
};

static const struct op_case ops[] = {
    {EBPF_ADD, 0, "add"},      {EBPF_SUB, 0, "sub"},	  {EBPF_MUL, 0, "mul"},
    {EBPF_DIV, 0, "div"},      {EBPF_DIV, 1, "sdiv"},	  {EBPF_MOD, 0, "mod"},
    {EBPF_MOD, 1, "smod"},     {EBPF_OR, 0, "or"},	  {EBPF_AND, 0, "and"},
    {EBPF_XOR, 0, "xor"},      {EBPF_LSH, 0, "lsh"},	  {EBPF_RSH, 0, "rsh"},
    {EBPF_ARSH, 0, "arsh"},    {EBPF_MOV, 0, "mov"},	  {EBPF_MOV, 8, "movsx8"},
    {EBPF_MOV, 16, "movsx16"}, {EBPF_MOV, 32, "movsx32"},
};

/* Operand pairs that hit the corner cases. */
static const uint64_t pairs[][2] = {
    {0x123456789abcdef0ull, 0x0fedcba987654321ull},
    {0xfffffffffffffff7ull, 7},			    /* negative / positive */
    {100, 0xfffffffffffffff9ull},		    /* positive / negative */
    {0xdeadbeefcafef00dull, 0},			    /* by zero */
    {0x8000000000000000ull, 0xffffffffffffffffull}, /* INT64_MIN / -1 */
    {0xaaaaaaaa80000000ull, 0x55555555ffffffffull}, /* INT32_MIN / -1 in the low half */
    {0xffffffff00000005ull, 0x0000000100000000ull}, /* divisor zero in the low half */
    {0x00000000ffff8081ull, 65},		    /* shift count beyond the width */
};

#define FOLD_K 0x9e3779b1

/* r0..r9 start as distinct constants; op(dst, src); fold r0 = r0*K + r_i for i = 1..9. */
static uint32_t build(struct ebpf_insn *p, uint8_t code, int dst, int src, int16_t off, int32_t imm,
		      const uint64_t *init)
{
	uint32_t n = 0;

	for (int r = 0; r < 10; r++) {
		struct ebpf_insn l[2] = {LD_IMM64(r, init[r])};

		p[n++] = l[0];
		p[n++] = l[1];
	}
	p[n++] = INSN(code, dst, src, off, imm);
	for (int r = 1; r < 10; r++) {
		p[n++] = ALU64_IMM(EBPF_MUL, 0, FOLD_K);
		p[n++] = ALU64_REG(EBPF_ADD, 0, r);
	}
	p[n++] = EXIT();
	return n;
}

static uint64_t fold(const uint64_t *r)
{
	uint64_t a = r[0];

	for (int i = 1; i < 10; i++)
		a = a * (uint64_t)(int64_t)(int32_t)FOLD_K + r[i];
	return a;
}

static int failures_reported;

static void one(uint8_t code, int dst, int src, int16_t off, int32_t imm, const uint64_t *init,
		const char *what)
{
	struct ebpf_insn p[64];
	uint64_t regs[10], got, want;
	uint32_t n = build(p, code, dst, src, off, imm, init);
	int is64 = EBPF_CLASS(code) == EBPF_ALU64;
	uint64_t s =
	    EBPF_SRC(code) == EBPF_X ? init[src] : (is64 ? (uint64_t)(int64_t)imm : (uint32_t)imm);

	memcpy(regs, init, sizeof(regs));
	regs[dst] = ref_alu(EBPF_OP(code), is64, off, init[dst], s);
	want = fold(regs);
	got = jit_eval(p, n, 0, 0);
	if (got != want && failures_reported++ < 20)
		fprintf(stderr, "%s%s dst r%d src r%d imm %d: got 0x%llx want 0x%llx\n", what,
			is64 ? "64" : "32", dst, src, imm, (unsigned long long)got,
			(unsigned long long)want);
	CHECK_EQ_U64(got, want);
}

static void test_reg_pairs(void)
{
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		for (int is64 = 0; is64 < 2; is64++) {
			if (ops[o].off == 32 && !is64)
				continue; /* movsx32 exists only in ALU64 */
			for (size_t v = 0; v < sizeof(pairs) / sizeof(pairs[0]); v++) {
				for (int dst = 0; dst < 10; dst++) {
					for (int src = 0; src < 10; src++) {
						uint64_t init[10];

						for (int r = 0; r < 10; r++)
							init[r] = 0x0101010101010101ull * (r + 1) ^
								  (0x1111ull << r);
						init[dst] = pairs[v][0];
						if (src != dst)
							init[src] = pairs[v][1];
						one((is64 ? EBPF_ALU64 : EBPF_ALU) | ops[o].op |
							EBPF_X,
						    dst, src, ops[o].off, 0, init, ops[o].name);
					}
				}
			}
		}
	}
}

static void test_imm(void)
{
	static const int32_t imms[] = {0,	  1,	-1,   7,	  -7,
				       31,	  32,	63,   64,	  127,
				       128,	  -128, -129, 0x7fffffff, (int32_t)0x80000000,
				       0x12345678};

	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		if (ops[o].op == EBPF_MOV && ops[o].off)
			continue; /* sign-extending moves are register-only */
		for (int is64 = 0; is64 < 2; is64++)
			for (size_t k = 0; k < sizeof(imms) / sizeof(imms[0]); k++)
				for (int dst = 0; dst < 10; dst++)
					for (size_t v = 0; v < 3; v++) {
						uint64_t init[10];

						for (int r = 0; r < 10; r++)
							init[r] = 0x0202020202020202ull * (r + 3);
						init[dst] = pairs[v == 2 ? 4 : v][0];
						one((is64 ? EBPF_ALU64 : EBPF_ALU) | ops[o].op |
							EBPF_K,
						    dst, 0, ops[o].off, imms[k], init, ops[o].name);
					}
	}
}

static void test_neg_end(void)
{
	struct ebpf_insn p[8];
	uint64_t x = 0x0102030405060708ull;

	for (int dst = 0; dst < 10; dst++) {
		struct ebpf_insn prog[] = {
		    LD_IMM64(dst, x),
		    INSN(EBPF_ALU64 | EBPF_NEG, dst, 0, 0, 0),
		    MOV64_REG(0, dst),
		    EXIT(),
		};
		CHECK_EQ_U64(jit_eval(prog, INSN_CNT(prog), 0, 0), 0 - x);
		prog[2] = INSN(EBPF_ALU | EBPF_NEG, dst, 0, 0, 0);
		prog[3] = MOV64_REG(0, dst);
		{
			struct ebpf_insn q[] = {LD_IMM64(dst, x), NEG32(dst), MOV64_REG(0, dst),
						EXIT()};

			CHECK_EQ_U64(jit_eval(q, INSN_CNT(q), 0, 0), (uint32_t)(0u - (uint32_t)x));
		}
	}
	/* Byte order, for every register (the 16-bit forms use a legacy-prefixed rotate). */
	for (int dst = 0; dst < 10; dst++) {
		static const struct {
			uint8_t code;
			int32_t bits;
			uint64_t want;
		} t[] = {
		    {EBPF_ALU | EBPF_END | EBPF_TO_LE, 16, 0x0708},
		    {EBPF_ALU | EBPF_END | EBPF_TO_LE, 32, 0x05060708},
		    {EBPF_ALU | EBPF_END | EBPF_TO_LE, 64, 0x0102030405060708ull},
		    {EBPF_ALU | EBPF_END | EBPF_TO_BE, 16, 0x0807},
		    {EBPF_ALU | EBPF_END | EBPF_TO_BE, 32, 0x08070605},
		    {EBPF_ALU | EBPF_END | EBPF_TO_BE, 64, 0x0807060504030201ull},
		    {EBPF_ALU64 | EBPF_END | EBPF_TO_LE, 16, 0x0807},
		    {EBPF_ALU64 | EBPF_END | EBPF_TO_LE, 32, 0x08070605},
		    {EBPF_ALU64 | EBPF_END | EBPF_TO_LE, 64, 0x0807060504030201ull},
		};
		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
			struct ebpf_insn q[] = {LD_IMM64(dst, x),
						INSN(t[k].code, dst, 0, 0, t[k].bits),
						MOV64_REG(0, dst), EXIT()};

			CHECK_EQ_U64(jit_eval(q, INSN_CNT(q), 0, 0), t[k].want);
		}
	}
	(void)p;
}

static void test_ld_imm64(void)
{
	static const uint64_t v[] = {0,
				     1,
				     0xffffffffull,
				     0x80000000ull,
				     0xffffffff80000000ull,
				     0x7fffffffull,
				     0x123456789abcdef0ull,
				     ~0ull};

	for (int dst = 0; dst < 10; dst++)
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			struct ebpf_insn q[] = {LD_IMM64(dst, v[k]), MOV64_REG(0, dst), EXIT()};

			CHECK_EQ_U64(jit_eval(q, INSN_CNT(q), 0, 0), v[k]);
		}
	/* mov imm: 64-bit sign-extends, 32-bit zero-extends and clears the upper half */
	{
		struct ebpf_insn q[] = {LD_IMM64(3, ~0ull), MOV32_IMM(3, -2), MOV64_REG(0, 3),
					EXIT()};

		CHECK_EQ_U64(jit_eval(q, INSN_CNT(q), 0, 0), 0xfffffffeull);
		q[2] = MOV64_IMM(3, -2);
		CHECK_EQ_U64(jit_eval(q, INSN_CNT(q), 0, 0), 0xfffffffffffffffeull);
	}
	/* the arguments arrive in r1 and r2 */
	{
		struct ebpf_insn q[] = {MOV64_REG(0, 1), ALU64_REG(EBPF_SUB, 0, 2), EXIT()};

		CHECK_EQ_U64(jit_eval(q, INSN_CNT(q), 1000, 1), 999);
	}
}

/* Peepholes: an ALU result tested against 0 right after it reuses the flags (JEQ/JNE only, and
 * a 32-bit jump may not reuse a 64-bit result's ZF); "r = s; r += imm" becomes one lea. */
static void test_peepholes(void)
{
	static const uint8_t bops[] = {EBPF_ADD, EBPF_SUB, EBPF_AND, EBPF_OR, EBPF_XOR};
	static const uint64_t v[][2] = {
	    {5, 0xfffffffffffffffbull}, /* add: 0 */
	    {0x100000000ull, 0},	/* low half 0, high half not */
	    {0x1ffffffffull, 0xffffffffull},
	    {7, 7},
	    {0, 0},
	    {0x8000000000000000ull, 0x8000000000000000ull},
	};

	for (size_t o = 0; o < sizeof(bops); o++)
		for (int aw = 0; aw < 2; aw++)
			for (int jw = 0; jw < 2; jw++)
				for (int x = 0; x < 2; x++)
					for (int jne = 0; jne < 2; jne++)
						for (size_t k = 0; k < sizeof(v) / sizeof(v[0]);
						     k++) {
							uint64_t a = v[k][0], b = v[k][1];
							int32_t imm = (int32_t)b;
							uint64_t bb =
							    x ? b
							      : (aw ? (uint64_t)(int64_t)imm
								    : (uint32_t)imm);
							uint64_t r = ref_alu(bops[o], aw, 0, a, bb);
							int zero = jw ? r == 0 : (uint32_t)r == 0;
							struct ebpf_insn p[] = {
							    LD_IMM64(2, a),
							    LD_IMM64(3, b),
							    INSN((aw ? EBPF_ALU64 : EBPF_ALU) |
								     bops[o] |
								     (x ? EBPF_X : EBPF_K),
								 2, x ? 3 : 0, 0, x ? 0 : imm),
							    INSN((jw ? EBPF_JMP : EBPF_JMP32) |
								     (jne ? EBPF_JNE : EBPF_JEQ) |
								     EBPF_K,
								 2, 0, 2, 0),
							    MOV64_IMM(0, 0),
							    EXIT(),
							    MOV64_IMM(0, 1),
							    EXIT(),
							};

							CHECK_EQ_U64(
							    jit_eval(p, INSN_CNT(p), 0, 0),
							    (uint64_t)(jne ? !zero : zero));
						}
	/* lea fusion for every pair of registers, small and large offsets, r10 as the source */
	for (int d = 0; d < 10; d++)
		for (int s = 0; s <= 10; s++) {
			static const int32_t offs[] = {0,    -4,	 100,
						       -512, 0x12345678, (int32_t)0x80000000};

			for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
				uint64_t base = 0x1000000000ull + (uint64_t)s * 0x10001;
				struct ebpf_insn p[] = {
				    LD_IMM64(s == 10 ? 9 : s, base),
				    MOV64_REG(d, s),
				    ALU64_IMM(EBPF_ADD, d, offs[k]),
				    MOV64_REG(0, d),
				    EXIT(),
				};

				if (s == 10) {
					/* r10 differs per engine: check r0 - r10 instead */
					struct ebpf_insn q[] = {
					    MOV64_REG(d, 10), ALU64_IMM(EBPF_ADD, d, offs[k]),
					    MOV64_REG(0, d),  ALU64_REG(EBPF_SUB, 0, 10),
					    EXIT(),
					};

					CHECK_EQ_U64(jit_eval(q, INSN_CNT(q), 0, 0),
						     (uint64_t)(int64_t)offs[k]);
				} else {
					CHECK_EQ_U64(jit_eval(p, INSN_CNT(p), 0, 0),
						     base + (uint64_t)(int64_t)offs[k]);
				}
			}
		}
	/* the add is a jump target: it must still run on its own */
	{
		struct ebpf_insn p[] = {
		    MOV64_IMM(1, 10),	       JA(1),		MOV64_REG(1, 1), /* skipped */
		    ALU64_IMM(EBPF_ADD, 1, 5), MOV64_REG(0, 1), EXIT(),
		};

		CHECK_EQ_U64(jit_eval(p, INSN_CNT(p), 0, 0), 15);
	}
}

int main(void)
{
	test_peepholes();
	test_ld_imm64();
	test_neg_end();
	test_imm();
	test_reg_pairs();
	/* again without BMI2 (shifts by a register go through cl) */
	jit_util_flags = EBPF_JIT_F_BASELINE;
	test_imm();
	test_reg_pairs();
	return check_summary("test_jit_alu");
}
