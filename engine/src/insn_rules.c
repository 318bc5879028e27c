/* The instruction-validity table (insn_rules.h): one row per opcode byte the RFC defines, saying
 * what each field may hold. A row without a name is an opcode that does not exist. */
#include "insn_rules.h"

#include <errno.h>

#include "err.h"

/* What a field may hold. */
enum rule {
	ZERO,	   /* reserved: must be 0 (also the rule of rows that do not exist) */
	ANY,	   /* any value: an offset or an immediate operand */
	REG,	   /* a register the instruction reads (or uses as a base) */
	REG_W,	   /* a register the instruction writes: r0-r9, the frame pointer is read only */
	SIGNED,	   /* div/mod offset: 0 unsigned, 1 signed */
	SEXT32,	   /* mov32 offset: 0, or sign-extend from 8 or 16 bits */
	SEXT64,	   /* mov offset: 0, or sign-extend from 8, 16 or 32 bits */
	WIDTH,	   /* byte swap width: 16, 32 or 64 */
	ATOMIC_OP, /* the atomic operation; the fetching ones (except cmpxchg) write src_reg */
	CALL_KIND, /* call: a helper or a local function */
	LDDW_KIND, /* 64-bit immediate: a number, a map handle or a map value address */
};

struct form {
	const char *name;
	uint8_t dst, src, off, imm; /* enum rule of each field */
	const char *unsupported;    /* defined by the RFC, refused here: why */
};

#define LEGACY "legacy packet access (LD_ABS/LD_IND) is not supported"

/* clang-format off */
/* An ALU operation in both widths and both source kinds. */
#define ALU(op, nm, off_rule)                                                                      \
	[EBPF_ALU | (op) | EBPF_K] = {nm "32", REG_W, ZERO, off_rule, ANY, 0},                     \
	[EBPF_ALU | (op) | EBPF_X] = {nm "32", REG_W, REG, off_rule, ZERO, 0},                     \
	[EBPF_ALU64 | (op) | EBPF_K] = {nm, REG_W, ZERO, off_rule, ANY, 0},                        \
	[EBPF_ALU64 | (op) | EBPF_X] = {nm, REG_W, REG, off_rule, ZERO, 0}
/* A conditional jump in both widths and both source kinds. */
#define JCC(op, nm)                                                                                \
	[EBPF_JMP | (op) | EBPF_K] = {nm, REG, ZERO, ANY, ANY, 0},                                 \
	[EBPF_JMP | (op) | EBPF_X] = {nm, REG, REG, ANY, ZERO, 0},                                 \
	[EBPF_JMP32 | (op) | EBPF_K] = {nm "32", REG, ZERO, ANY, ANY, 0},                          \
	[EBPF_JMP32 | (op) | EBPF_X] = {nm "32", REG, REG, ANY, ZERO, 0}
/* Memory access of one size: loads, stores, and the refused legacy packet loads. */
#define MEM(size, sz)                                                                              \
	[EBPF_LDX | EBPF_MEM | (size)] = {"ldx" sz, REG_W, REG, ANY, ZERO, 0},                     \
	[EBPF_ST | EBPF_MEM | (size)] = {"st" sz, REG, ZERO, ANY, ANY, 0},                         \
	[EBPF_STX | EBPF_MEM | (size)] = {"stx" sz, REG, REG, ANY, ZERO, 0},                       \
	[EBPF_LD | EBPF_ABS | (size)] = {"ldabs" sz, 0, 0, 0, 0, LEGACY},                          \
	[EBPF_LD | EBPF_IND | (size)] = {"ldind" sz, 0, 0, 0, 0, LEGACY}
/* clang-format on */

static const struct form forms[256] = {
    ALU(EBPF_ADD, "add", ZERO),
    ALU(EBPF_SUB, "sub", ZERO),
    ALU(EBPF_MUL, "mul", ZERO),
    ALU(EBPF_DIV, "div", SIGNED),
    ALU(EBPF_OR, "or", ZERO),
    ALU(EBPF_AND, "and", ZERO),
    ALU(EBPF_LSH, "lsh", ZERO),
    ALU(EBPF_RSH, "rsh", ZERO),
    ALU(EBPF_MOD, "mod", SIGNED),
    ALU(EBPF_XOR, "xor", ZERO),
    ALU(EBPF_ARSH, "arsh", ZERO),
    [EBPF_ALU | EBPF_MOV | EBPF_K] = {"mov32", REG_W, ZERO, ZERO, ANY, 0},
    [EBPF_ALU | EBPF_MOV | EBPF_X] = {"mov32", REG_W, REG, SEXT32, ZERO, 0},
    [EBPF_ALU64 | EBPF_MOV | EBPF_K] = {"mov", REG_W, ZERO, ZERO, ANY, 0},
    [EBPF_ALU64 | EBPF_MOV | EBPF_X] = {"mov", REG_W, REG, SEXT64, ZERO, 0},
    [EBPF_ALU | EBPF_NEG | EBPF_K] = {"neg32", REG_W, ZERO, ZERO, ZERO, 0},
    [EBPF_ALU64 | EBPF_NEG | EBPF_K] = {"neg", REG_W, ZERO, ZERO, ZERO, 0},
    [EBPF_ALU | EBPF_END | EBPF_TO_LE] = {"le", REG_W, ZERO, ZERO, WIDTH, 0},
    [EBPF_ALU | EBPF_END | EBPF_TO_BE] = {"be", REG_W, ZERO, ZERO, WIDTH, 0},
    [EBPF_ALU64 | EBPF_END | EBPF_K] = {"bswap", REG_W, ZERO, ZERO, WIDTH, 0},

    [EBPF_JMP | EBPF_JA | EBPF_K] = {"ja", ZERO, ZERO, ANY, ZERO, 0},
    [EBPF_JMP32 | EBPF_JA | EBPF_K] = {"gotol", ZERO, ZERO, ZERO, ANY, 0},
    [EBPF_JMP | EBPF_CALL | EBPF_K] = {"call", ZERO, CALL_KIND, ZERO, ANY, 0},
    [EBPF_JMP | EBPF_EXIT | EBPF_K] = {"exit", ZERO, ZERO, ZERO, ZERO, 0},
    JCC(EBPF_JEQ, "jeq"),
    JCC(EBPF_JGT, "jgt"),
    JCC(EBPF_JGE, "jge"),
    JCC(EBPF_JSET, "jset"),
    JCC(EBPF_JNE, "jne"),
    JCC(EBPF_JSGT, "jsgt"),
    JCC(EBPF_JSGE, "jsge"),
    JCC(EBPF_JLT, "jlt"),
    JCC(EBPF_JLE, "jle"),
    JCC(EBPF_JSLT, "jslt"),
    JCC(EBPF_JSLE, "jsle"),

    MEM(EBPF_W, "w"),
    MEM(EBPF_H, "h"),
    MEM(EBPF_B, "b"),
    MEM(EBPF_DW, "dw"),
    [EBPF_LDX | EBPF_MEMSX | EBPF_W] = {"ldxsw", REG_W, REG, ANY, ZERO, 0},
    [EBPF_LDX | EBPF_MEMSX | EBPF_H] = {"ldxsh", REG_W, REG, ANY, ZERO, 0},
    [EBPF_LDX | EBPF_MEMSX | EBPF_B] = {"ldxsb", REG_W, REG, ANY, ZERO, 0},
    [EBPF_STX | EBPF_ATOMIC | EBPF_W] = {"atomic32", REG, REG, ANY, ATOMIC_OP, 0},
    [EBPF_STX | EBPF_ATOMIC | EBPF_DW] = {"atomic64", REG, REG, ANY, ATOMIC_OP, 0},
    [EBPF_LD | EBPF_IMM | EBPF_DW] = {"lddw", REG_W, LDDW_KIND, ZERO, ANY, 0},
};

#define BAD(...)                                                                                   \
	do {                                                                                       \
		ebpf_errf(msg, len, __VA_ARGS__);                                                  \
		return -EINVAL;                                                                    \
	} while (0)

static int is_atomic_op(int32_t op)
{
	switch (op) {
	case EBPF_ATOMIC_ADD:
	case EBPF_ATOMIC_OR:
	case EBPF_ATOMIC_AND:
	case EBPF_ATOMIC_XOR:
	case EBPF_ATOMIC_ADD | EBPF_FETCH:
	case EBPF_ATOMIC_OR | EBPF_FETCH:
	case EBPF_ATOMIC_AND | EBPF_FETCH:
	case EBPF_ATOMIC_XOR | EBPF_FETCH:
	case EBPF_XCHG:
	case EBPF_CMPXCHG:
		return 1;
	}
	return 0;
}

/* Checks one field of *in against its rule. */
static int check_field(const struct ebpf_insn *in, const char *name, const char *field,
		       enum rule rule, int64_t v, char *msg, size_t len)
{
	switch (rule) {
	case ZERO:
		if (v)
			BAD("%s uses reserved field %s=%lld", name, field, (long long)v);
		return 0;
	case ANY:
		return 0;
	case REG:
	case REG_W:
		if (v > EBPF_REG_10)
			BAD("%s: invalid register r%lld", name, (long long)v);
		if (rule == REG_W && v == EBPF_REG_10)
			BAD("%s: frame pointer r10 is read only", name);
		return 0;
	case SIGNED:
		if (v != 0 && v != 1)
			BAD("%s: invalid offset %lld (0: unsigned, 1: signed)", name, (long long)v);
		return 0;
	case SEXT32:
	case SEXT64:
		if (v && v != 8 && v != 16 && (v != 32 || rule != SEXT64))
			BAD("%s: invalid sign-extension width %lld (8, 16%s)", name, (long long)v,
			    rule == SEXT64 ? " or 32" : "");
		return 0;
	case WIDTH:
		if (v != 16 && v != 32 && v != 64)
			BAD("%s: invalid byte swap width %lld (16, 32 or 64)", name, (long long)v);
		return 0;
	case ATOMIC_OP:
		if (!is_atomic_op((int32_t)v))
			BAD("%s: unknown atomic operation 0x%x", name, (unsigned)v);
		if ((v & EBPF_FETCH) && v != EBPF_CMPXCHG && in->src_reg == EBPF_REG_10)
			BAD("%s: frame pointer r10 is read only (the fetch writes it)", name);
		return 0;
	case CALL_KIND:
		if (v == EBPF_PSEUDO_KFUNC)
			BAD("%s: kfunc calls are not supported", name);
		if (v != EBPF_PSEUDO_HELPER && v != EBPF_PSEUDO_CALL)
			BAD("%s: unknown src_reg %lld", name, (long long)v);
		return 0;
	case LDDW_KIND:
		if (v == EBPF_PSEUDO_FUNC)
			BAD("%s: function pointers (src_reg 4) are not supported", name);
		if (v != 0 && v != EBPF_PSEUDO_MAP_FD && v != EBPF_PSEUDO_MAP_VALUE)
			BAD("%s: unknown src_reg %lld", name, (long long)v);
		return 0;
	}
	return 0;
}

/* The second half of a 64-bit immediate load, and the map a map reference names. */
static int check_lddw(const struct ebpf_insn *in, uint32_t n_left, uint32_t n_maps, char *msg,
		      size_t len)
{
	const struct ebpf_insn *next = in + 1;

	if (n_left < 2)
		BAD("lddw: truncated 64-bit immediate load at end of program");
	if (next->code || next->dst_reg || next->src_reg || next->off)
		BAD("lddw: second half uses reserved fields");
	if (in->src_reg == EBPF_PSEUDO_MAP_FD && next->imm)
		BAD("lddw: map reference uses reserved field imm=%d in its second half", next->imm);
	if (in->src_reg && (in->imm < 0 || (uint32_t)in->imm >= n_maps))
		BAD("lddw: map index %d out of range (program has %u maps)", in->imm, n_maps);
	return 0;
}

int ebpf_insn_check(const struct ebpf_insn *in, uint32_t n_left, uint32_t n_maps, char *msg,
		    size_t len)
{
	const struct form *f = &forms[in->code];
	int rc;

	if (!f->name)
		BAD("unknown opcode 0x%02x", in->code);
	if (f->unsupported)
		BAD("%s: %s", f->name, f->unsupported);
	if ((rc = check_field(in, f->name, "dst_reg", f->dst, in->dst_reg, msg, len)) ||
	    (rc = check_field(in, f->name, "src_reg", f->src, in->src_reg, msg, len)) ||
	    (rc = check_field(in, f->name, "off", f->off, in->off, msg, len)) ||
	    (rc = check_field(in, f->name, "imm", f->imm, in->imm, msg, len)))
		return rc;
	return ebpf_insn_is_lddw(in) ? check_lddw(in, n_left, n_maps, msg, len) : 0;
}
