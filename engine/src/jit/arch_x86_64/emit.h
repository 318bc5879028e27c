/* x86-64 instruction encoding for the JIT: a byte emitter that can also only count (sizing
 * passes), and one small function per instruction form. Nothing here knows eBPF. */
#ifndef EBPF_JIT_X86_EMIT_H
#define EBPF_JIT_X86_EMIT_H

#include <stdint.h>
#include <string.h>

enum {
	RAX = 0,
	RCX,
	RDX,
	RBX,
	RSP,
	RBP,
	RSI,
	RDI,
	R8,
	R9,
	R10,
	R11,
	R12,
	R13,
	R14,
	R15,
};

/* Condition codes (low nibble of Jcc). */
enum {
	CC_B = 0x2,
	CC_AE = 0x3,
	CC_E = 0x4,
	CC_NE = 0x5,
	CC_BE = 0x6,
	CC_A = 0x7,
	CC_L = 0xc,
	CC_GE = 0xd,
	CC_LE = 0xe,
	CC_G = 0xf,
	CC_JMP = -1, /* unconditional */
};

struct emitter {
	uint8_t *buf; /* NULL: only count bytes */
	uint32_t len;
	uint32_t cap;
	int overflow; /* a write past cap or a local jump out of rel8 range was attempted */
	/* Bit r: register r is an operand of an emitted instruction (rex(), shiftx()); push and
	 * pop, which only the prologues and epilogues use to save registers, do not count. */
	uint16_t named;
};

static inline void e1(struct emitter *e, uint8_t b)
{
	if (e->buf) {
		if (e->len >= e->cap) {
			e->overflow = 1;
			return;
		}
		e->buf[e->len] = b;
	}
	e->len++;
}

static inline void e4(struct emitter *e, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		e1(e, (uint8_t)(v >> (8 * i)));
}

static inline void e8(struct emitter *e, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		e1(e, (uint8_t)(v >> (8 * i)));
}

static inline int fits8(int64_t v)
{
	return v >= -128 && v <= 127;
}

static inline int fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* REX prefix; force emits one even when empty (byte access to spl/bpl/sil/dil). */
static inline void rex(struct emitter *e, int w, int reg, int rm, int force)
{
	e->named |= (uint16_t)(1u << (reg & 15) | 1u << (rm & 15));
	uint8_t r = 0x40 | (w ? 8 : 0) | ((reg & 8) ? 4 : 0) | ((rm & 8) ? 1 : 0);

	if (r != 0x40 || force)
		e1(e, r);
}

static inline void modrm_rr(struct emitter *e, int reg, int rm)
{
	e1(e, (uint8_t)(0xc0 | ((reg & 7) << 3) | (rm & 7)));
}

/* ModRM (+SIB, +displacement) for [base + disp]. */
static inline void modrm_mem(struct emitter *e, int reg, int base, int32_t disp)
{
	int mod;

	if (disp == 0 && (base & 7) != RBP)
		mod = 0; /* rbp/r13 with mod 0 would mean rip-relative */
	else if (fits8(disp))
		mod = 1;
	else
		mod = 2;
	e1(e, (uint8_t)((mod << 6) | ((reg & 7) << 3) | (base & 7)));
	if ((base & 7) == RSP)
		e1(e, 0x24); /* SIB: base only */
	if (mod == 1)
		e1(e, (uint8_t)disp);
	else if (mod == 2)
		e4(e, (uint32_t)disp);
}

/* op r/m, reg with the "MR" opcodes (add 01, or 09, and 21, sub 29, xor 31, cmp 39, test 85,
 * mov 89). */
static inline void op_rr(struct emitter *e, uint8_t opc, int w, int src, int dst)
{
	rex(e, w, src, dst, 0);
	e1(e, opc);
	modrm_rr(e, src, dst);
}

static inline void mov_rr(struct emitter *e, int w, int src, int dst)
{
	op_rr(e, 0x89, w, src, dst);
}

/* Group-1 ALU with an immediate: ext 0 add, 1 or, 4 and, 5 sub, 6 xor, 7 cmp. */
static inline void op_ri(struct emitter *e, int ext, int w, int dst, int32_t imm)
{
	rex(e, w, 0, dst, 0);
	if (fits8(imm)) {
		e1(e, 0x83);
		modrm_rr(e, ext, dst);
		e1(e, (uint8_t)imm);
	} else {
		e1(e, 0x81);
		modrm_rr(e, ext, dst);
		e4(e, (uint32_t)imm);
	}
}

/* dst = imm, sign-extended to 64 bits when w, else zero-extended 32-bit. Clobbers flags when
 * imm is 0 (xor). */
static inline void mov_ri(struct emitter *e, int w, int dst, int32_t imm)
{
	if (imm == 0) {
		op_rr(e, 0x31, 0, dst, dst);
	} else if (!w || imm > 0) {
		rex(e, 0, 0, dst, 0);
		e1(e, (uint8_t)(0xb8 + (dst & 7)));
		e4(e, (uint32_t)imm);
	} else {
		rex(e, 1, 0, dst, 0);
		e1(e, 0xc7);
		modrm_rr(e, 0, dst);
		e4(e, (uint32_t)imm);
	}
}

static inline void mov_ri64(struct emitter *e, int dst, uint64_t v)
{
	if (v <= UINT32_MAX) {
		mov_ri(e, 0, dst, (int32_t)(uint32_t)v);
	} else if (fits32((int64_t)v)) {
		mov_ri(e, 1, dst, (int32_t)(int64_t)v);
	} else {
		rex(e, 1, 0, dst, 0);
		e1(e, (uint8_t)(0xb8 + (dst & 7)));
		e8(e, v);
	}
}

/* mov r64, imm64 in its fixed 10-byte form (value patched or known late). */
static inline void movabs(struct emitter *e, int dst, uint64_t v)
{
	rex(e, 1, 0, dst, 0);
	e1(e, (uint8_t)(0xb8 + (dst & 7)));
	e8(e, v);
}

/* Group-2 shifts: ext 4 shl, 5 shr, 7 sar; by an immediate or by cl. */
static inline void shift_ri(struct emitter *e, int ext, int w, int dst, uint8_t n)
{
	rex(e, w, 0, dst, 0);
	if (n == 1) {
		e1(e, 0xd1);
		modrm_rr(e, ext, dst);
	} else {
		e1(e, 0xc1);
		modrm_rr(e, ext, dst);
		e1(e, n);
	}
}

static inline void shift_cl(struct emitter *e, int ext, int w, int dst)
{
	rex(e, w, 0, dst, 0);
	e1(e, 0xd3);
	modrm_rr(e, ext, dst);
}

/* BMI2 shifts (dst = src << / >> count, any count register, flags untouched; the 32-bit forms
 * always write and zero-extend dst): pp 1 shlx, 3 shrx, 2 sarx. */
static inline void shiftx(struct emitter *e, int pp, int w, int dst, int src, int count)
{
	e->named |= (uint16_t)(1u << (dst & 15) | 1u << (src & 15) | 1u << (count & 15));
	e1(e, 0xc4);
	e1(e, (uint8_t)(((dst & 8) ? 0 : 0x80) | 0x40 | ((src & 8) ? 0 : 0x20) | 0x02));
	e1(e, (uint8_t)((w ? 0x80 : 0) | ((~count & 15) << 3) | pp));
	e1(e, 0xf7);
	modrm_rr(e, dst, src);
}

/* Group-3 unary: ext 3 neg, 6 div, 7 idiv. */
static inline void op_unary(struct emitter *e, int ext, int w, int rm)
{
	rex(e, w, 0, rm, 0);
	e1(e, 0xf7);
	modrm_rr(e, ext, rm);
}

/* Loads and stores: [base + disp]. */
static inline void load(struct emitter *e, int size_bytes, int sign, int dst, int base,
			int32_t disp)
{
	switch (size_bytes) {
	case 1:
		rex(e, sign, dst, base, 0);
		e1(e, 0x0f);
		e1(e, sign ? 0xbe : 0xb6);
		break;
	case 2:
		rex(e, sign, dst, base, 0);
		e1(e, 0x0f);
		e1(e, sign ? 0xbf : 0xb7);
		break;
	case 4:
		rex(e, sign, dst, base, 0);
		e1(e, sign ? 0x63 : 0x8b);
		break;
	default:
		rex(e, 1, dst, base, 0);
		e1(e, 0x8b);
		break;
	}
	modrm_mem(e, dst, base, disp);
}

static inline void store_reg(struct emitter *e, int size_bytes, int src, int base, int32_t disp)
{
	switch (size_bytes) {
	case 1:
		rex(e, 0, src, base, src >= RSP && src <= RDI);
		e1(e, 0x88);
		break;
	case 2:
		e1(e, 0x66);
		rex(e, 0, src, base, 0);
		e1(e, 0x89);
		break;
	case 4:
		rex(e, 0, src, base, 0);
		e1(e, 0x89);
		break;
	default:
		rex(e, 1, src, base, 0);
		e1(e, 0x89);
		break;
	}
	modrm_mem(e, src, base, disp);
}

static inline void store_imm(struct emitter *e, int size_bytes, int base, int32_t disp, int32_t imm)
{
	if (size_bytes == 2)
		e1(e, 0x66);
	rex(e, size_bytes == 8, 0, base, 0);
	e1(e, size_bytes == 1 ? 0xc6 : 0xc7);
	modrm_mem(e, 0, base, disp);
	if (size_bytes == 1)
		e1(e, (uint8_t)imm);
	else if (size_bytes == 2) {
		e1(e, (uint8_t)imm);
		e1(e, (uint8_t)(imm >> 8));
	} else
		e4(e, (uint32_t)imm);
}

static inline void lea(struct emitter *e, int dst, int base, int32_t disp)
{
	rex(e, 1, dst, base, 0);
	e1(e, 0x8d);
	modrm_mem(e, dst, base, disp);
}

/* SSE scalar instructions, [prefix] [REX] 0F opc ModRM, on xmm0-xmm7 (no REX bit of their own).
 * gpr says which operands are general registers: those count as named and get REX.R/B. */
#define SSE_REG_GPR 1
#define SSE_RM_GPR  2
static inline void sse_rr(struct emitter *e, uint8_t prefix, int w, uint8_t opc, int reg, int rm,
			  int gpr)
{
	if (prefix)
		e1(e, prefix);
	if (gpr & SSE_REG_GPR)
		e->named |= (uint16_t)(1u << (reg & 15));
	if (gpr & SSE_RM_GPR)
		e->named |= (uint16_t)(1u << (rm & 15));
	uint8_t r = (uint8_t)(0x40 | (w ? 8 : 0) | ((gpr & SSE_REG_GPR) && (reg & 8) ? 4 : 0) |
			      ((gpr & SSE_RM_GPR) && (rm & 8) ? 1 : 0));
	if (r != 0x40)
		e1(e, r);
	e1(e, 0x0f);
	e1(e, opc);
	modrm_rr(e, reg, rm);
}

/* The same with a memory operand [base + disp] (movss xmm, m32: F3 0F 10). */
static inline void sse_load(struct emitter *e, uint8_t prefix, uint8_t opc, int xmm, int base,
			    int32_t disp)
{
	e1(e, prefix);
	e->named |= (uint16_t)(1u << (base & 15));
	if (base & 8)
		e1(e, 0x41); /* REX.B */
	e1(e, 0x0f);
	e1(e, opc);
	modrm_mem(e, xmm, base, disp);
}

static inline void push(struct emitter *e, int r)
{
	if (r & 8)
		e1(e, 0x41); /* REX.B */
	e1(e, (uint8_t)(0x50 + (r & 7)));
}

static inline void pop(struct emitter *e, int r)
{
	if (r & 8)
		e1(e, 0x41);
	e1(e, (uint8_t)(0x58 + (r & 7)));
}

/* Local forward jump with an 8-bit displacement: returns the position to patch. */
static inline uint32_t jcc8_fwd(struct emitter *e, int cc)
{
	e1(e, cc == CC_JMP ? 0xeb : (uint8_t)(0x70 | cc));
	e1(e, 0);
	return e->len;
}

static inline void patch8(struct emitter *e, uint32_t after)
{
	uint32_t d = e->len - after;

	if (d > 127)
		e->overflow = 1;
	else if (e->buf && after <= e->cap)
		e->buf[after - 1] = (uint8_t)d;
}

/* Local backward jump to position to (already emitted). */
static inline void jcc8_back(struct emitter *e, int cc, uint32_t to)
{
	int64_t d = (int64_t)to - (int64_t)(e->len + 2);

	if (!fits8(d))
		e->overflow = 1;
	e1(e, cc == CC_JMP ? 0xeb : (uint8_t)(0x70 | cc));
	e1(e, (uint8_t)d);
}

#endif
