/* Disassembler: one instruction to one line of llvm-objdump syntax (see disasm.h). Kept
 * lenient about reserved fields that llvm-objdump ignores too (the structural checks live in
 * ebpf_exec__new); only fields that select the operation make an instruction invalid here. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "ebpf/disasm.h"
#include "ebpf/exec.h"
#include "exec_internal.h"

struct out {
	char *buf;
	size_t len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->buf || !o->len)
		return;
	va_start(ap, fmt);
	vsnprintf(o->buf, o->len, fmt, ap);
	va_end(ap);
}

static int invalid(struct out *o, const struct ebpf_insn *i, const char *why)
{
	put(o, "invalid insn 0x%02x (%s)", i->code, why);
	return 0;
}

static const char *size_name(uint8_t code, int sign)
{
	switch (EBPF_SIZE(code)) {
	case EBPF_B:
		return sign ? "s8" : "u8";
	case EBPF_H:
		return sign ? "s16" : "u16";
	case EBPF_W:
		return sign ? "s32" : "u32";
	default:
		return sign ? "s64" : "u64";
	}
}

/* "r1 + 4" / "r10 - 8" / "r1 + 0": the address operand as llvm prints it. */
static const char *addr_sign(int16_t off)
{
	return off < 0 ? "-" : "+";
}

static int addr_abs(int16_t off)
{
	return off < 0 ? -(int)off : off;
}

static const char *alu_op(uint8_t op, int16_t off)
{
	switch (op) {
	case EBPF_ADD:
		return "+=";
	case EBPF_SUB:
		return "-=";
	case EBPF_MUL:
		return "*=";
	case EBPF_DIV:
		return off == 0 ? "/=" : off == 1 ? "s/=" : NULL;
	case EBPF_OR:
		return "|=";
	case EBPF_AND:
		return "&=";
	case EBPF_LSH:
		return "<<=";
	case EBPF_RSH:
		return ">>=";
	case EBPF_MOD:
		return off == 0 ? "%=" : off == 1 ? "s%=" : NULL;
	case EBPF_XOR:
		return "^=";
	case EBPF_ARSH:
		return "s>>=";
	default:
		return NULL;
	}
}

static int disasm_alu(struct out *o, const struct ebpf_insn *i)
{
	int is64 = EBPF_CLASS(i->code) == EBPF_ALU64;
	char r = is64 ? 'r' : 'w';
	uint8_t op = EBPF_OP(i->code);
	int x = EBPF_SRC(i->code) == EBPF_X;
	const char *s;

	switch (op) {
	case EBPF_NEG:
		put(o, "%c%u = -%c%u", r, i->dst_reg, r, i->dst_reg);
		return 1;
	case EBPF_END:
		if (i->imm != 16 && i->imm != 32 && i->imm != 64)
			return invalid(o, i, "byte swap width");
		if (is64) {
			if (x)
				return invalid(o, i, "bswap with X source");
			put(o, "r%u = bswap%d r%u", i->dst_reg, i->imm, i->dst_reg);
		} else {
			put(o, "r%u = %s%d r%u", i->dst_reg, x ? "be" : "le", i->imm, i->dst_reg);
		}
		return 1;
	case EBPF_MOV:
		if (!x) {
			if (i->off)
				return invalid(o, i, "mov immediate with offset");
			put(o, "%c%u = %d", r, i->dst_reg, i->imm);
			return 1;
		}
		if (i->off == 0) {
			put(o, "%c%u = %c%u", r, i->dst_reg, r, i->src_reg);
			return 1;
		}
		if (i->off == 8 || i->off == 16 || (is64 && i->off == 32)) {
			put(o, "%c%u = (s%d)%c%u", r, i->dst_reg, i->off, r, i->src_reg);
			return 1;
		}
		return invalid(o, i, "movsx width");
	}
	s = alu_op(op, i->off);
	if (!s)
		return invalid(o, i, "alu operation");
	if (x)
		put(o, "%c%u %s %c%u", r, i->dst_reg, s, r, i->src_reg);
	else
		put(o, "%c%u %s %d", r, i->dst_reg, s, i->imm);
	return 1;
}

static const char *jmp_op(uint8_t op)
{
	switch (op) {
	case EBPF_JEQ:
		return "==";
	case EBPF_JGT:
		return ">";
	case EBPF_JGE:
		return ">=";
	case EBPF_JSET:
		return "&";
	case EBPF_JNE:
		return "!=";
	case EBPF_JSGT:
		return "s>";
	case EBPF_JSGE:
		return "s>=";
	case EBPF_JLT:
		return "<";
	case EBPF_JLE:
		return "<=";
	case EBPF_JSLT:
		return "s<";
	case EBPF_JSLE:
		return "s<=";
	default:
		return NULL;
	}
}

static int disasm_jmp(struct out *o, const struct ebpf_insn *i, const struct ebpf_disasm_opts *opts)
{
	int is64 = EBPF_CLASS(i->code) == EBPF_JMP;
	char r = is64 ? 'r' : 'w';
	uint8_t op = EBPF_OP(i->code);
	int x = EBPF_SRC(i->code) == EBPF_X;
	const char *s;

	switch (op) {
	case EBPF_JA:
		if (x)
			return invalid(o, i, "ja with X source");
		if (is64)
			put(o, "goto %+d", i->off);
		else
			put(o, "gotol %+d", i->imm);
		return 1;
	case EBPF_CALL:
		if (!is64 || x)
			return invalid(o, i, "call encoding");
		if (i->src_reg == EBPF_PSEUDO_HELPER && opts && opts->helpers && i->imm >= 0 &&
		    i->imm < EBPF_MAX_HELPERS && opts->helpers->by_id[i->imm] &&
		    opts->helpers->by_id[i->imm]->name) {
			put(o, "call %s#%d", opts->helpers->by_id[i->imm]->name, i->imm);
			return 1;
		}
		put(o, "call %d", i->imm);
		return 1;
	case EBPF_EXIT:
		if (!is64 || x)
			return invalid(o, i, "exit encoding");
		put(o, "exit");
		return 1;
	}
	s = jmp_op(op);
	if (!s)
		return invalid(o, i, "jump operation");
	if (x)
		put(o, "if %c%u %s %c%u goto %+d", r, i->dst_reg, s, r, i->src_reg, i->off);
	else
		put(o, "if %c%u %s %d goto %+d", r, i->dst_reg, s, i->imm, i->off);
	return 1;
}

static int disasm_lddw(struct out *o, const struct ebpf_insn *insns, size_t n, size_t pc)
{
	const struct ebpf_insn *i = &insns[pc];
	uint64_t v;

	if (pc + 1 >= n)
		return invalid(o, i, "ld_imm64 truncated");
	v = (uint64_t)(uint32_t)i->imm | (uint64_t)(uint32_t)insns[pc + 1].imm << 32;
	switch (i->src_reg) {
	case 0:
		put(o, "r%u = %lld ll", i->dst_reg, (long long)v);
		break;
	case EBPF_PSEUDO_MAP_FD:
		put(o, "r%u = map[%d] ll", i->dst_reg, i->imm);
		break;
	case EBPF_PSEUDO_MAP_VALUE:
		put(o, "r%u = map_value[%d] + %u ll", i->dst_reg, i->imm,
		    (uint32_t)insns[pc + 1].imm);
		break;
	case EBPF_PSEUDO_FUNC:
		put(o, "r%u = func[%+d] ll", i->dst_reg, i->imm);
		break;
	default:
		put(o, "r%u = pseudo%u[%d] ll", i->dst_reg, i->src_reg, i->imm);
		break;
	}
	return 2;
}

static int disasm_ld(struct out *o, const struct ebpf_insn *insns, size_t n, size_t pc)
{
	const struct ebpf_insn *i = &insns[pc];

	if (ebpf_insn_is_lddw(i))
		return disasm_lddw(o, insns, n, pc);
	if (EBPF_SIZE(i->code) == EBPF_DW)
		return invalid(o, i, "legacy packet load of 8 bytes");
	/* Legacy packet access (not executable here, but printable). */
	if (EBPF_MODE(i->code) == EBPF_ABS) {
		put(o, "r0 = *(%s *)skb[%d]", size_name(i->code, 0), i->imm);
		return 1;
	}
	if (EBPF_MODE(i->code) == EBPF_IND) {
		put(o, "r0 = *(%s *)skb[r%u]", size_name(i->code, 0), i->src_reg);
		return 1;
	}
	return invalid(o, i, "load mode");
}

static int disasm_atomic(struct out *o, const struct ebpf_insn *i)
{
	int is64 = EBPF_SIZE(i->code) == EBPF_DW;
	const char *sz = is64 ? "u64" : "u32";
	char r = is64 ? 'r' : 'w';
	const char *sg = addr_sign(i->off);
	int ab = addr_abs(i->off);
	const char *name;
	const char *sym;

	if (EBPF_SIZE(i->code) != EBPF_DW && EBPF_SIZE(i->code) != EBPF_W)
		return invalid(o, i, "atomic size");
	switch (i->imm) {
	case EBPF_XCHG:
		put(o, "%c%u = %s(r%u %s %d, %c%u)", r, i->src_reg, is64 ? "xchg_64" : "xchg32_32",
		    i->dst_reg, sg, ab, r, i->src_reg);
		return 1;
	case EBPF_CMPXCHG:
		put(o, "%c0 = %s(r%u %s %d, %c0, %c%u)", r, is64 ? "cmpxchg_64" : "cmpxchg32_32",
		    i->dst_reg, sg, ab, r, r, i->src_reg);
		return 1;
	}
	switch (i->imm & ~EBPF_FETCH) {
	case EBPF_ATOMIC_ADD:
		name = "add";
		sym = "+=";
		break;
	case EBPF_ATOMIC_OR:
		name = "or";
		sym = "|=";
		break;
	case EBPF_ATOMIC_AND:
		name = "and";
		sym = "&=";
		break;
	case EBPF_ATOMIC_XOR:
		name = "xor";
		sym = "^=";
		break;
	default:
		return invalid(o, i, "atomic operation");
	}
	if (i->imm & EBPF_FETCH)
		put(o, "%c%u = atomic_fetch_%s((%s *)(r%u %s %d), %c%u)", r, i->src_reg, name, sz,
		    i->dst_reg, sg, ab, r, i->src_reg);
	else
		put(o, "lock *(%s *)(r%u %s %d) %s r%u", sz, i->dst_reg, sg, ab, sym, i->src_reg);
	return 1;
}

static int disasm_mem(struct out *o, const struct ebpf_insn *i)
{
	uint8_t mode = EBPF_MODE(i->code);
	const char *sg = addr_sign(i->off);
	int ab = addr_abs(i->off);

	switch (EBPF_CLASS(i->code)) {
	case EBPF_LDX:
		if (mode == EBPF_MEM) {
			put(o, "r%u = *(%s *)(r%u %s %d)", i->dst_reg, size_name(i->code, 0),
			    i->src_reg, sg, ab);
			return 1;
		}
		if (mode == EBPF_MEMSX && EBPF_SIZE(i->code) != EBPF_DW) {
			put(o, "r%u = *(%s *)(r%u %s %d)", i->dst_reg, size_name(i->code, 1),
			    i->src_reg, sg, ab);
			return 1;
		}
		if (i->code == EBPF_INTERNAL_LDX_F32) { /* only in an executable copy */
			put(o, "r%u = f32_to_u64((*(float **)(r%u %s %d))[%d])", i->dst_reg,
			    i->src_reg, sg, ab, i->imm / 4);
			return 1;
		}
		return invalid(o, i, "load mode");
	case EBPF_ST:
		if (mode != EBPF_MEM)
			return invalid(o, i, "store mode");
		put(o, "*(%s *)(r%u %s %d) = %d", size_name(i->code, 0), i->dst_reg, sg, ab,
		    i->imm);
		return 1;
	default: /* EBPF_STX */
		if (mode == EBPF_ATOMIC)
			return disasm_atomic(o, i);
		if (mode != EBPF_MEM)
			return invalid(o, i, "store mode");
		put(o, "*(%s *)(r%u %s %d) = r%u", size_name(i->code, 0), i->dst_reg, sg, ab,
		    i->src_reg);
		return 1;
	}
}

int ebpf_disasm_insn_opts(const struct ebpf_insn *insns, size_t n, size_t pc, char *buf,
			  size_t buf_len, const struct ebpf_disasm_opts *opts)
{
	struct out o = {buf, buf_len};
	const struct ebpf_insn *i;

	if (buf && buf_len)
		buf[0] = '\0';
	if (!insns || pc >= n) {
		put(&o, "invalid insn (pc %zu beyond %zu instructions)", pc, n);
		return 0;
	}
	if (opts && opts->sz < sizeof(size_t))
		opts = NULL;
	i = &insns[pc];
	switch (EBPF_CLASS(i->code)) {
	case EBPF_LD:
		return disasm_ld(&o, insns, n, pc);
	case EBPF_LDX:
	case EBPF_ST:
	case EBPF_STX:
		return disasm_mem(&o, i);
	case EBPF_ALU:
	case EBPF_ALU64:
		return disasm_alu(&o, i);
	default: /* EBPF_JMP, EBPF_JMP32 */
		return disasm_jmp(&o, i, opts);
	}
}

int ebpf_disasm_insn(const struct ebpf_insn *insns, size_t n, size_t pc, char *buf, size_t buf_len)
{
	return ebpf_disasm_insn_opts(insns, n, pc, buf, buf_len, NULL);
}
