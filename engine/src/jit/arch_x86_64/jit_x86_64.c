/* x86-64 backend: one template per eBPF instruction, System V calling convention.
 *
 * Register mapping. eBPF r1-r5 are the SysV argument registers, so a helper call needs no moves
 * and the entry point is simply uint64_t fn(r1, r2); r0 is rax, the return register; r6-r9 are
 * callee-saved registers, so they survive helper calls for free.
 *   r0 rax  r1 rdi  r2 rsi  r3 rdx  r4 rcx  r5 r8  r6 rbx  r7 r13  r8 r14  r9 r15  r10 rbp
 * Scratch: r9, r10, r11 (never live across eBPF instructions). r12 anchors the entry frame when
 * the program has bpf-to-bpf calls (call-depth check and abort).
 *
 * Frames. The entry function saves only the callee-saved registers it uses and reserves its
 * 512-byte stack only when it references r10 (a program like "r0 = 0; exit" compiles to
 * "xor eax, eax; ret"). An entry that calls nothing (no helper, no bpf-to-bpf call) also saves
 * r9, r10 and r11 when its code names them: its caller may keep values there across the call
 * (keeps_regs, jit.h). Every other function has one uniform 560-byte
 * frame (return address, five saved registers, 512 bytes of stack), so the call depth is (r12 -
 * rsp) / 560 + 1 without any memory access; a call that would make it exceed EBPF_MAX_FRAMES jumps
 * to the abort stub, which resets rsp to the entry frame, counts the fault and returns
 * EBPF_JIT_FAULT_R0.
 *
 * Passes. (1) size everything with long jumps and absolute helper calls: an upper bound used to
 * map the buffer; (2) choose rel8 jumps where the pass-1 distance fits (distances only shrink
 * afterwards) and rel32 helper calls where the mapping is in range, and record final offsets;
 * (3) emit with those offsets. Passes 2 and 3 make identical choices, so their sizes agree. */
#include <cpuid.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../jit_backend.h"
#include "emit.h"

#define SUBPROG_FRAME (8 + 5 * 8 + EBPF_STACK_SIZE) /* ret + rbp rbx r13 r14 r15 + stack */

static const uint8_t reg_map[EBPF_NREGS] = {RAX, RDI, RSI, RDX, RCX, R8, RBX, R13, R14, R15, RBP};

struct x86 {
	struct emitter e;
	const struct jit_analysis *an;
	const struct ebpf_insn *insns;
	int pass;
	uint32_t *addr1;  /* pass 1: offset of each instruction's code (n + 1) */
	uint32_t *jpos1;  /* pass 1: offset of the jump opcode of jump instruction i */
	uint32_t *addr;	  /* pass 2 (read by pass 3): offset of each instruction's code */
	uint32_t *fentry; /* pass 2 (read by pass 3): offset of each function's prologue */
	uint32_t abort_off;
	uint64_t base; /* address of the mapping (passes 2, 3) */
	uint32_t cap;
	/* Entry function frame. */
	uint8_t saved[12];
	uint8_t n_saved;
	int keeps; /* the entry calls nothing: it keeps the caller-saved registers too (jit.h) */
	uint32_t frame; /* bytes subtracted from rsp after the pushes */
	int bmi2;	/* shlx/shrx/sarx for shifts by a register */
	/* Peepholes within a basic block: the register whose value ZF reflects after the previous
	 * instruction (-1: none) and its width; whether the next instruction was fused. */
	int zf_reg, zf_w, prev_zf_reg, prev_zf_w;
	int fused;
	int err;
	char msg[96];
};

/* CPUID once per process (it can trap to the hypervisor): 1 + BMI2 bit, 0 = not asked yet. */
static int cpu_has_bmi2(void)
{
	static int cached;
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (!v) {
		unsigned a = 0, b = 0, c = 0, d = 0;

		v = 1;
		if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 8)))
			v = 2;
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v == 2;
}

#define R(r) (reg_map[(r)])

/* --- Program-level jumps and calls ----------------------------------------------------------- */

/* rel8 when the pass-1 distance fits: code only shrinks in later passes, so it still fits. */
static int jump_is_short(struct x86 *j, uint32_t i, uint32_t t)
{
	int64_t s1, t1;

	if (j->pass == 1)
		return 0;
	s1 = j->jpos1[i];
	t1 = j->addr1[t];
	if (t1 > s1)
		return t1 - s1 - 2 <= 127;
	return s1 - t1 + 2 <= 128;
}

static void emit_jump(struct x86 *j, int cc, uint32_t i, uint32_t t)
{
	struct emitter *e = &j->e;
	int64_t target = j->pass == 3 ? j->addr[t] : 0;

	if (j->pass == 1)
		j->jpos1[i] = e->len;
	if (jump_is_short(j, i, t)) {
		e1(e, cc == CC_JMP ? 0xeb : (uint8_t)(0x70 | cc));
		e1(e, (uint8_t)(target - (int64_t)(e->len + 1)));
		return;
	}
	if (cc == CC_JMP) {
		e1(e, 0xe9);
	} else {
		e1(e, 0x0f);
		e1(e, (uint8_t)(0x80 | cc));
	}
	e4(e, (uint32_t)(target - (int64_t)(e->len + 4)));
}

/* Jcc rel32 / call rel32 to an offset known from pass 2 (always long: rare paths). */
static void emit_rel32_to(struct x86 *j, uint8_t op0, int op1, uint32_t off)
{
	struct emitter *e = &j->e;

	e1(e, op0);
	if (op1 >= 0)
		e1(e, (uint8_t)op1);
	e4(e, (uint32_t)(j->pass == 3 ? (int64_t)off - (int64_t)(e->len + 4) : 0));
}

/* Call of a C function: rel32 when the whole mapping is within reach, else through r11. */
static void emit_call_abs(struct x86 *j, uint64_t fn)
{
	struct emitter *e = &j->e;
	int near = 0;

	if (j->pass > 1 && !(j->an->flags & EBPF_JIT_F_FAR_CALLS)) {
		int64_t lo = (int64_t)(fn - j->base), hi = lo - (int64_t)j->cap;

		near = lo < INT32_MAX - 16 && hi > INT32_MIN + 16;
	}
	if (near) {
		e1(e, 0xe8);
		e4(e, (uint32_t)(int64_t)(fn - (j->base + e->len + 4)));
	} else {
		movabs(e, R11, fn);
		e1(e, 0x41);
		e1(e, 0xff);
		e1(e, 0xd3); /* call r11 */
	}
}

/* --- Prologues and epilogues ----------------------------------------------------------------- */

/* The caller-saved registers a register-keeping entry saves when its code may change them: the
 * backend's scratch registers, which few templates use. rax (the result), rdi, rsi, rdx, rcx and
 * r8 (eBPF r1-r5, which most programs use) are the caller's to lose (jit.h). */
static const uint8_t kept[3] = {R9, R10, R11};

/* keep: the registers among kept[] to save (bit per x86 register), for a keeping entry. */
static void entry_setup(struct x86 *j, uint16_t keep)
{
	const struct jit_func *f = &j->an->funcs[0];
	static const uint8_t callee[4] = {RBX, R13, R14, R15};
	uint32_t below;

	/* With bpf-to-bpf calls an abort skips the callees' epilogues, so the entry saves every
	 * callee-saved register the callees may have changed. */
	int all = j->an->has_bpf_calls;

	j->n_saved = 0;
	for (int r = 0; r < 4; r++)
		if (all || (f->regs_used & (1u << (EBPF_REG_6 + r))))
			j->saved[j->n_saved++] = callee[r];
	if (all || f->uses_stack)
		j->saved[j->n_saved++] = RBP;
	if (j->an->has_bpf_calls)
		j->saved[j->n_saved++] = R12;
	if (j->keeps)
		for (int r = 0; r < 3; r++)
			if (keep & (1u << kept[r]))
				j->saved[j->n_saved++] = kept[r];
	j->frame = f->uses_stack ? EBPF_STACK_SIZE : 0;
	below = 8 + 8u * j->n_saved + j->frame; /* bytes from the caller's aligned rsp */
	if (f->calls && (below & 15))
		j->frame += 8; /* calls need rsp % 16 == 0 */
}

static void emit_entry_prologue(struct x86 *j)
{
	struct emitter *e = &j->e;

	for (int k = 0; k < j->n_saved; k++)
		push(e, j->saved[k]);
	if (j->frame)
		op_ri(e, 5, 1, RSP, (int32_t)j->frame); /* sub rsp, frame */
	if (j->an->funcs[0].uses_stack)
		lea(e, RBP, RSP, (int32_t)j->frame);
	if (j->an->has_bpf_calls)
		mov_rr(e, 1, RSP, R12);
	for (int r = 0; r <= EBPF_REG_9; r++)
		if (j->an->entry_zero & (1u << r))
			op_rr(e, 0x31, 0, R(r),
			      R(r)); /* registers read before written start at 0 */
}

static void emit_entry_epilogue(struct x86 *j)
{
	struct emitter *e = &j->e;

	if (j->frame)
		op_ri(e, 0, 1, RSP, (int32_t)j->frame); /* add rsp, frame */
	for (int k = j->n_saved - 1; k >= 0; k--)
		pop(e, j->saved[k]);
	e1(e, 0xc3);
}

static void emit_sub_prologue(struct x86 *j)
{
	struct emitter *e = &j->e;

	push(e, RBP);
	push(e, RBX);
	push(e, R13);
	push(e, R14);
	push(e, R15);
	op_ri(e, 5, 1, RSP, EBPF_STACK_SIZE);
	lea(e, RBP, RSP, EBPF_STACK_SIZE);
}

static void emit_sub_epilogue(struct x86 *j)
{
	struct emitter *e = &j->e;

	op_ri(e, 0, 1, RSP, EBPF_STACK_SIZE);
	pop(e, R15);
	pop(e, R14);
	pop(e, R13);
	pop(e, RBX);
	pop(e, RBP);
	e1(e, 0xc3);
}

static void emit_abort_stub(struct x86 *j)
{
	struct emitter *e = &j->e;

	j->abort_off = e->len;
	mov_rr(e, 1, R12, RSP);
	movabs(e, R11, (uint64_t)(uintptr_t)j->an->fault_counter);
	e1(e, 0xf0);
	e1(e, 0x49);
	e1(e, 0xff);
	e1(e, 0x03); /* lock inc qword [r11] */
	mov_ri64(e, RAX, EBPF_JIT_FAULT_R0);
	emit_entry_epilogue(j);
}

/* --- ALU ------------------------------------------------------------------------------------- */

static void emit_divmod(struct x86 *j, const struct ebpf_insn *in, int w)
{
	struct emitter *e = &j->e;
	int is_mod = EBPF_OP(in->code) == EBPF_MOD, sgn = in->off == 1;
	int dst = R(in->dst_reg);
	uint32_t p_done1 = 0, p_done2 = 0, p_nz = 0, p_norm = 0;

	if (EBPF_SRC(in->code) == EBPF_K) {
		int32_t imm = in->imm;

		if (imm == 0 || (sgn && imm == -1)) {
			if (imm == -1 && !is_mod)
				op_unary(e, 3, w, dst); /* x / -1 = -x (INT_MIN stays) */
			else if (imm == -1 || !is_mod)
				op_rr(e, 0x31, 0, dst, dst); /* x % -1 = 0, x / 0 = 0 */
			else if (!w)
				mov_rr(e, 0, dst, dst); /* x % 0 = x, upper half cleared */
			return;
		}
		mov_ri(e, w, R11, imm);
	} else {
		mov_rr(e, w, R(in->src_reg), R11);
		op_rr(e, 0x85, w, R11, R11); /* test */
		p_nz = jcc8_fwd(e, CC_NE);
		if (!is_mod)
			op_rr(e, 0x31, 0, dst, dst);
		else if (!w)
			mov_rr(e, 0, dst, dst);
		p_done1 = jcc8_fwd(e, CC_JMP);
		patch8(e, p_nz);
		if (sgn) {
			op_ri(e, 7, w, R11, -1);
			p_norm = jcc8_fwd(e, CC_NE);
			if (!is_mod)
				op_unary(e, 3, w, dst);
			else
				op_rr(e, 0x31, 0, dst, dst);
			p_done2 = jcc8_fwd(e, CC_JMP);
			patch8(e, p_norm);
		}
	}
	if (dst != RAX)
		mov_rr(e, 1, RAX, R10);
	if (dst != RDX)
		mov_rr(e, 1, RDX, R9);
	if (dst != RAX)
		mov_rr(e, 1, dst, RAX);
	if (sgn) {
		rex(e, w, 0, 0, 0);
		e1(e, 0x99); /* cdq / cqo */
	} else {
		op_rr(e, 0x31, 0, RDX, RDX);
	}
	op_unary(e, sgn ? 7 : 6, w, R11);
	if (is_mod) {
		if (dst != RDX)
			mov_rr(e, w, RDX, dst);
	} else if (dst != RAX) {
		mov_rr(e, w, RAX, dst);
	}
	if (dst != RDX)
		mov_rr(e, 1, R9, RDX);
	if (dst != RAX)
		mov_rr(e, 1, R10, RAX);
	if (p_done1)
		patch8(e, p_done1);
	if (p_done2)
		patch8(e, p_done2);
}

static void emit_shift_reg(struct x86 *j, int ext, int w, int dst, int src)
{
	struct emitter *e = &j->e;

	if (j->bmi2) {
		shiftx(e, ext == 4 ? 1 : ext == 5 ? 3 : 2, w, dst, dst, src);
		return;
	}
	if (src == RCX) {
		shift_cl(e, ext, w, dst);
	} else if (dst == RCX) {
		mov_rr(e, 1, RCX, R11);
		mov_rr(e, 1, src, RCX);
		shift_cl(e, ext, w, R11);
		mov_rr(e, 1, R11, RCX);
	} else {
		mov_rr(e, 1, RCX, R11);
		mov_rr(e, 1, src, RCX);
		shift_cl(e, ext, w, dst);
		mov_rr(e, 1, R11, RCX);
	}
	if (!w)
		mov_rr(e, 0, dst, dst); /* a count of 0 may leave the upper half: clear it */
}

static void emit_end(struct x86 *j, const struct ebpf_insn *in)
{
	struct emitter *e = &j->e;
	int dst = R(in->dst_reg);
	int swap = EBPF_CLASS(in->code) == EBPF_ALU64 || EBPF_SRC(in->code) == EBPF_TO_BE;

	switch (in->imm) {
	case 16:
		if (swap) {
			e1(e, 0x66);
			rex(e, 0, 0, dst, 0);
			e1(e, 0xc1);
			modrm_rr(e, 0, dst);
			e1(e, 8); /* rol r16, 8 */
		}
		rex(e, 0, dst, dst, 0);
		e1(e, 0x0f);
		e1(e, 0xb7);
		modrm_rr(e, dst, dst); /* movzx r32, r16 */
		break;
	case 32:
		if (swap) {
			rex(e, 0, 0, dst, 0);
			e1(e, 0x0f);
			e1(e, (uint8_t)(0xc8 + (dst & 7))); /* bswap r32 (zero-extends) */
		} else {
			mov_rr(e, 0, dst, dst);
		}
		break;
	default:
		if (swap) {
			rex(e, 1, 0, dst, 0);
			e1(e, 0x0f);
			e1(e, (uint8_t)(0xc8 + (dst & 7)));
		}
		break;
	}
}

static void emit_mov_reg(struct x86 *j, const struct ebpf_insn *in, int w)
{
	struct emitter *e = &j->e;
	int dst = R(in->dst_reg), src = R(in->src_reg);

	switch (in->off) {
	case 0:
		if (!w || dst != src)
			mov_rr(e, w, src, dst);
		break;
	case 8:
		rex(e, w, dst, src, src >= RSP && src <= RDI);
		e1(e, 0x0f);
		e1(e, 0xbe);
		modrm_rr(e, dst, src);
		break;
	case 16:
		rex(e, w, dst, src, 0);
		e1(e, 0x0f);
		e1(e, 0xbf);
		modrm_rr(e, dst, src);
		break;
	default: /* 32, ALU64 only */
		rex(e, 1, dst, src, 0);
		e1(e, 0x63);
		modrm_rr(e, dst, src);
		break;
	}
}

/* Can the 64-bit move at in be fused with an "add dst, imm" right after it? */
static int fuse_add(struct x86 *j, const struct ebpf_insn *in)
{
	uint32_t i = (uint32_t)(in - j->insns);
	const struct jit_analysis *an = j->an;

	return i + 1 < an->funcs[an->insn_func[i]].end &&
	       !(an->insn_flags[i + 1] & (JIT_INSN_TARGET | JIT_INSN_FUNC_START)) &&
	       in[1].code == (EBPF_ALU64 | EBPF_ADD | EBPF_K) && in[1].dst_reg == in->dst_reg;
}

static void emit_alu(struct x86 *j, const struct ebpf_insn *in)
{
	struct emitter *e = &j->e;
	int w = EBPF_CLASS(in->code) == EBPF_ALU64, x = EBPF_SRC(in->code) == EBPF_X;
	int dst = R(in->dst_reg), src = R(in->src_reg);
	uint8_t opc = 0;
	int ext = 0;

	switch (EBPF_OP(in->code)) {
	case EBPF_ADD:
		opc = 0x01, ext = 0;
		goto binop;
	case EBPF_SUB:
		opc = 0x29, ext = 5;
		goto binop;
	case EBPF_AND:
		opc = 0x21, ext = 4;
		goto binop;
	case EBPF_OR:
		opc = 0x09, ext = 1;
		goto binop;
	case EBPF_XOR:
		opc = 0x31, ext = 6;
	binop:
		if (x)
			op_rr(e, opc, w, src, dst);
		else
			op_ri(e, ext, w, dst, in->imm);
		j->zf_reg = dst; /* add/sub/and/or/xor set ZF from the result */
		j->zf_w = w;
		break;
	case EBPF_MOV:
		if (x && w && !in->off && fuse_add(j, in)) {
			/* r = s; r += imm (pointer arithmetic, e.g. r2 = r10 - 4) as one lea */
			lea(e, dst, src, in[1].imm);
			j->fused = 1;
		} else if (x) {
			emit_mov_reg(j, in, w);
		} else {
			mov_ri(e, w, dst, in->imm);
		}
		break;
	case EBPF_MUL:
		if (x) {
			rex(e, w, dst, src, 0);
			e1(e, 0x0f);
			e1(e, 0xaf);
			modrm_rr(e, dst, src);
		} else {
			rex(e, w, dst, dst, 0);
			if (fits8(in->imm)) {
				e1(e, 0x6b);
				modrm_rr(e, dst, dst);
				e1(e, (uint8_t)in->imm);
			} else {
				e1(e, 0x69);
				modrm_rr(e, dst, dst);
				e4(e, (uint32_t)in->imm);
			}
		}
		break;
	case EBPF_DIV:
	case EBPF_MOD:
		emit_divmod(j, in, w);
		break;
	case EBPF_LSH:
		ext = 4;
		goto shift;
	case EBPF_RSH:
		ext = 5;
		goto shift;
	case EBPF_ARSH:
		ext = 7;
	shift:
		if (x) {
			emit_shift_reg(j, ext, w, dst, src);
		} else {
			uint8_t n = (uint8_t)(in->imm & (w ? 63 : 31));

			if (n)
				shift_ri(e, ext, w, dst, n);
			else if (!w)
				mov_rr(e, 0, dst, dst);
		}
		break;
	case EBPF_NEG:
		op_unary(e, 3, w, dst);
		break;
	case EBPF_END:
		emit_end(j, in);
		break;
	default:
		j->err = -EINVAL;
		snprintf(j->msg, sizeof(j->msg), "unknown ALU opcode 0x%02x", in->code);
	}
}

/* --- Memory ---------------------------------------------------------------------------------- */

static int size_bytes(uint8_t code)
{
	switch (EBPF_SIZE(code)) {
	case EBPF_B:
		return 1;
	case EBPF_H:
		return 2;
	case EBPF_W:
		return 4;
	default:
		return 8;
	}
}

static void emit_atomic(struct x86 *j, const struct ebpf_insn *in)
{
	struct emitter *e = &j->e;
	int w = EBPF_SIZE(in->code) == EBPF_DW;
	int base = R(in->dst_reg), src = R(in->src_reg);
	int32_t off = in->off;
	uint8_t opc;

	switch (in->imm) {
	case EBPF_ATOMIC_ADD:
		opc = 0x01;
		goto locked;
	case EBPF_ATOMIC_OR:
		opc = 0x09;
		goto locked;
	case EBPF_ATOMIC_AND:
		opc = 0x21;
		goto locked;
	case EBPF_ATOMIC_XOR:
		opc = 0x31;
	locked:
		e1(e, 0xf0);
		rex(e, w, src, base, 0);
		e1(e, opc);
		modrm_mem(e, src, base, off);
		return;
	case EBPF_ATOMIC_ADD | EBPF_FETCH:
		e1(e, 0xf0);
		rex(e, w, src, base, 0);
		e1(e, 0x0f);
		e1(e, 0xc1); /* xadd: src receives the old value */
		modrm_mem(e, src, base, off);
		return;
	case EBPF_XCHG:
		rex(e, w, src, base, 0);
		e1(e, 0x87); /* implicitly locked */
		modrm_mem(e, src, base, off);
		return;
	case EBPF_CMPXCHG:
		e1(e, 0xf0);
		rex(e, w, src, base, 0);
		e1(e, 0x0f);
		e1(e, 0xb1);
		modrm_mem(e, src, base, off);
		if (!w)
			mov_rr(e, 0, RAX, RAX); /* r0 = zero-extended old value */
		return;
	case EBPF_ATOMIC_OR | EBPF_FETCH:
		opc = 0x09;
		break;
	case EBPF_ATOMIC_AND | EBPF_FETCH:
		opc = 0x21;
		break;
	case EBPF_ATOMIC_XOR | EBPF_FETCH:
		opc = 0x31;
		break;
	default:
		j->err = -EINVAL;
		snprintf(j->msg, sizeof(j->msg), "unknown atomic operation 0x%x", in->imm);
		return;
	}
	/* Fetching or/and/xor: a cmpxchg loop; rax (r0) is borrowed and restored. */
	{
		int val = src == RAX ? R10 : src;
		uint32_t loop;

		lea(e, R9, base, off);
		mov_rr(e, 1, RAX, R10);
		load(e, w ? 8 : 4, 0, RAX, R9, 0);
		loop = e->len;
		mov_rr(e, w, RAX, R11);
		op_rr(e, opc, w, val, R11);
		e1(e, 0xf0);
		rex(e, w, R11, R9, 0);
		e1(e, 0x0f);
		e1(e, 0xb1);
		modrm_mem(e, R11, R9, 0);
		jcc8_back(e, CC_NE, loop);
		mov_rr(e, w, RAX, src);
		if (src != RAX)
			mov_rr(e, 1, R10, RAX);
	}
}

/* --- Calls ----------------------------------------------------------------------------------- */

static void emit_inline_array_lookup(struct x86 *j, const struct jit_inline *inl)
{
	struct emitter *e = &j->e;
	uint32_t p_null, p_done;

	load(e, 4, 0, RAX, RSI, 0); /* eax = *(u32 *)r2 */
	e1(e, 0x3d);
	e4(e, inl->max_entries); /* cmp eax, max_entries */
	p_null = jcc8_fwd(e, CC_AE);
	if (inl->stride != 1) {
		/* imul rax, rax, stride: the index is below max_entries, so no overflow. */
		rex(e, 1, RAX, RAX, 0);
		e1(e, 0x69);
		modrm_rr(e, RAX, RAX);
		e4(e, inl->stride);
	}
	if (inl->base <= INT32_MAX) {
		op_ri(e, 0, 1, RAX, (int32_t)inl->base);
	} else {
		movabs(e, R11, inl->base);
		op_rr(e, 0x01, 1, R11, RAX);
	}
	p_done = jcc8_fwd(e, CC_JMP);
	patch8(e, p_null);
	op_rr(e, 0x31, 0, RAX, RAX);
	patch8(e, p_done);
}

static void emit_call(struct x86 *j, const struct ebpf_insn *in, uint32_t i)
{
	struct emitter *e = &j->e;
	const struct jit_analysis *an = j->an;

	if (in->src_reg == EBPF_PSEUDO_CALL) {
		uint32_t t = (uint32_t)((int64_t)i + 1 + in->imm);

		/* depth check: (r12 - rsp) / SUBPROG_FRAME + 1 frames are live */
		mov_rr(e, 1, R12, R11);
		op_rr(e, 0x29, 1, RSP, R11); /* sub r11, rsp */
		rex(e, 1, 0, R11, 0);
		e1(e, 0x81);
		modrm_rr(e, 7, R11);
		e4(e, (EBPF_MAX_FRAMES - 2) * SUBPROG_FRAME); /* cmp r11, imm32 */
		emit_rel32_to(j, 0x0f, 0x80 | CC_A, j->abort_off);
		emit_rel32_to(j, 0xe8, -1, j->fentry[an->insn_func[t]]);
		return;
	}
	if (an->insn_flags[i] & JIT_INSN_INLINE_ARRAY) {
		emit_inline_array_lookup(j, &an->inl[an->insn_inline[i]]);
		return;
	}
	{
		const struct ebpf_helper_proto *p = NULL;

		if (an->prog->helpers && in->imm >= 0 && in->imm < EBPF_MAX_HELPERS)
			p = an->prog->helpers->by_id[in->imm];
		if (!p || !p->fn) {
			j->err = -EINVAL;
			snprintf(j->msg, sizeof(j->msg), "insn %u: call to unknown helper %d", i,
				 in->imm);
			return;
		}
		emit_call_abs(j, (uint64_t)(uintptr_t)p->fn);
	}
}

/* --- Jumps ----------------------------------------------------------------------------------- */

static int jmp_cc(uint8_t op)
{
	switch (op) {
	case EBPF_JEQ:
		return CC_E;
	case EBPF_JNE:
	case EBPF_JSET:
		return CC_NE;
	case EBPF_JGT:
		return CC_A;
	case EBPF_JGE:
		return CC_AE;
	case EBPF_JLT:
		return CC_B;
	case EBPF_JLE:
		return CC_BE;
	case EBPF_JSGT:
		return CC_G;
	case EBPF_JSGE:
		return CC_GE;
	case EBPF_JSLT:
		return CC_L;
	case EBPF_JSLE:
		return CC_LE;
	}
	return -2;
}

/* A conditional jump over an unconditional one (clang's switch trees): returns 1 and the ja's
 * target in *t when the ja can be folded into the conditional jump (it is no jump target). */
static int jump_over_ja(struct x86 *j, uint32_t i, uint32_t *t)
{
	const struct jit_analysis *an = j->an;
	const struct ebpf_insn *ja = &j->insns[i + 1];
	uint32_t t2;

	if (i + 1 >= an->funcs[an->insn_func[i]].end ||
	    (an->insn_flags[i + 1] & (JIT_INSN_TARGET | JIT_INSN_FUNC_START)) ||
	    (ja->code != (EBPF_JMP | EBPF_JA) && ja->code != (EBPF_JMP32 | EBPF_JA)))
		return 0;
	t2 = (uint32_t)((int64_t)i + 2 + (ja->code == (EBPF_JMP | EBPF_JA) ? ja->off : ja->imm));
	if (t2 == i + 2)
		return 0;
	*t = t2;
	j->fused = 1;
	return 1;
}

static void emit_jmp(struct x86 *j, const struct ebpf_insn *in, uint32_t i)
{
	struct emitter *e = &j->e;
	uint8_t op = EBPF_OP(in->code);
	int w = EBPF_CLASS(in->code) == EBPF_JMP;
	int dst = R(in->dst_reg);
	uint32_t t;
	int cc;

	switch (op) {
	case EBPF_CALL:
		emit_call(j, in, i);
		return;
	case EBPF_EXIT:
		if (j->an->insn_func[i] == 0)
			emit_entry_epilogue(j);
		else
			emit_sub_epilogue(j);
		return;
	case EBPF_JA:
		t = (uint32_t)((int64_t)i + 1 + (w ? in->off : in->imm));
		if (t != i + 1)
			emit_jump(j, CC_JMP, i, t);
		return;
	}
	t = (uint32_t)((int64_t)i + 1 + in->off);
	cc = jmp_cc(op);
	if (cc == -2) {
		j->err = -EINVAL;
		snprintf(j->msg, sizeof(j->msg), "insn %u: unknown jump opcode 0x%02x", i,
			 in->code);
		return;
	}
	if (t == i + 1)
		return; /* both ways lead to the next instruction */
	if (t == i + 2 && jump_over_ja(j, i, &t))
		cc ^= 1; /* "if c goto +1; goto X" as "if !c goto X" (x86 cc ^ 1 negates) */
	if (EBPF_SRC(in->code) == EBPF_X) {
		op_rr(e, op == EBPF_JSET ? 0x85 : 0x39, w, R(in->src_reg), dst);
	} else if (op == EBPF_JSET) {
		rex(e, w, 0, dst, 0);
		e1(e, 0xf7);
		modrm_rr(e, 0, dst);
		e4(e, (uint32_t)in->imm); /* test dst, imm32 */
	} else if (in->imm == 0 && (op == EBPF_JEQ || op == EBPF_JNE) && j->prev_zf_reg == dst &&
		   (w || !j->prev_zf_w)) {
		/* ZF already reflects dst (a 32-bit result is the zero-extended 64-bit value) */
	} else if (in->imm == 0) {
		op_rr(e, 0x85, w, dst, dst); /* same flags as cmp dst, 0 */
	} else {
		op_ri(e, 7, w, dst, in->imm);
	}
	emit_jump(j, cc, i, t);
}

/* --- Driver ---------------------------------------------------------------------------------- */

/* xmm1 = the float f, through dst (xorps for 0.0). */
static void f32_to_xmm1(struct emitter *e, int d, float f)
{
	union {
		float f;
		uint32_t u;
	} v = {f};

	if (!v.u) {
		sse_rr(e, 0, 0, 0x57, 1, 1, 0); /* xorps xmm1, xmm1 */
		return;
	}
	mov_ri(e, 0, d, (int32_t)v.u);
	sse_rr(e, 0x66, 0, 0x6e, 1, d, SSE_RM_GPR); /* movd xmm1, d */
}

/* A converted context load (exec_internal.h): ebpf_ctx_from_f32_value in the same IEEE operations
 * as the C (float to double, multiply, add, truncate), in dst and xmm0/xmm1 only (a
 * register-keeping entry's callers are told xmm0 and xmm1 change: ebpf_jit_call_keeping). */
static void emit_ldx_f32(struct x86 *j, const struct ebpf_insn *in)
{
	struct emitter *e = &j->e;
	const struct ebpf_ctx_from_f32 *c = &j->an->prog->from_f32;
	int d = R(in->dst_reg);
	union {
		double f;
		uint64_t u;
	} scale = {c->scale}, half = {0.5};

	load(e, 8, 0, d, R(in->src_reg), in->off);   /* the host's array */
	sse_load(e, 0xf3, 0x10, 0, d, in->imm);	     /* movss xmm0, [d + imm] */
	f32_to_xmm1(e, d, c->lo);		     /* lo */
	sse_rr(e, 0, 0, 0x2e, 0, 1, 0);		     /* ucomiss xmm0, xmm1 */
	uint32_t below = jcc8_fwd(e, CC_B);	     /* v < lo, or NaN */
	f32_to_xmm1(e, d, c->hi);		     /* hi */
	sse_rr(e, 0, 0, 0x2e, 1, 0, 0);		     /* ucomiss xmm1, xmm0 */
	uint32_t above = jcc8_fwd(e, CC_BE);	     /* hi <= v */
	sse_rr(e, 0xf3, 0, 0x5a, 0, 0, 0);	     /* cvtss2sd xmm0, xmm0 */
	mov_ri64(e, d, scale.u);		     /* the bits of scale */
	sse_rr(e, 0x66, 1, 0x6e, 1, d, SSE_RM_GPR);  /* movq xmm1, d */
	sse_rr(e, 0xf2, 0, 0x59, 0, 1, 0);	     /* mulsd xmm0, xmm1 */
	mov_ri64(e, d, half.u);			     /* 0.5 */
	sse_rr(e, 0x66, 1, 0x6e, 1, d, SSE_RM_GPR);  /* movq xmm1, d */
	sse_rr(e, 0xf2, 0, 0x58, 0, 1, 0);	     /* addsd xmm0, xmm1 */
	sse_rr(e, 0xf2, 1, 0x2c, d, 0, SSE_REG_GPR); /* cvttsd2si d, xmm0 */
	uint32_t done = jcc8_fwd(e, CC_JMP);
	patch8(e, below);
	patch8(e, above);
	mov_ri64(e, d, c->none);
	patch8(e, done);
}

/* The bits of hi when a converted element's range [lo, hi) can be told from the float's bits
 * with unsigned integer compares (lo 0.0, hi positive and not NaN), else 0. Non-negative floats
 * order as their bits, and every other pattern (a negative number or NaN) lies above those of
 * +inf, so v is in [0, hi) exactly when its bits are below hi's or are those of -0.0
 * (0x80000000, which compares equal to 0.0). */
static uint32_t f32_test_bits_hi(const struct ebpf_ctx_from_f32 *c)
{
	union {
		float f;
		uint32_t u;
	} hi = {c->hi};
	return c->lo == 0.0f && hi.u > 0 && hi.u <= 0x7f800000u ? hi.u : 0;
}

/* cmp dword [base + disp], imm */
static void cmp_m32_imm(struct emitter *e, int base, int32_t disp, uint32_t imm)
{
	rex(e, 0, 0, base, 0);
	e1(e, 0x81);
	modrm_mem(e, 7, base, disp);
	e4(e, imm);
}

/* Converted load i and the jump after it on "dst == none" or "dst != none", dst read nowhere
 * else (jit.c: JIT_INSN_F32_TEST): the element reads as none exactly when it is outside
 * [lo, hi), so only that test is made: on the float's bits where f32_test_bits_hi allows (one
 * compare of memory with an immediate for any element in range but -0.0; two float compares
 * with their constants moved into xmm1 cost a call of size_aware 0.6-0.7 ns more on an H100
 * host, 0.1-0.4 on the development machine), else with float compares. dst is left holding the
 * array's address. The ALU instructions between the two, if any (JIT_INSN_F32_GAP), come first:
 * they touch neither of the load's registers, and the test's flags must reach the jump. */
static void emit_f32_test(struct x86 *j, uint32_t i)
{
	struct emitter *e = &j->e;
	uint32_t gap = JIT_INSN_F32_GAP_OF(j->an->insn_flags[i]), at = i + 1 + gap;
	const struct ebpf_insn *in = &j->insns[i], *jmp = &j->insns[at];
	const struct ebpf_ctx_from_f32 *c = &j->an->prog->from_f32;
	uint32_t t = (uint32_t)((int64_t)at + 1 + jmp->off), hi_bits = f32_test_bits_hi(c);
	int d = R(in->dst_reg), eq = EBPF_OP(jmp->code) == EBPF_JEQ;

	for (uint32_t k = i + 1; k < at; k++) {
		j->fused = 0;
		emit_alu(j, &j->insns[k]);
		k += (uint32_t)j->fused; /* a move and an add emitted as one lea */
	}
	j->zf_reg = -1;				   /* the flags below are the test's */
	load(e, 8, 0, d, R(in->src_reg), in->off); /* the host's array */
	if (hi_bits) {
		cmp_m32_imm(e, d, in->imm, hi_bits);
		if (eq) {
			uint32_t value = jcc8_fwd(e, CC_B);
			cmp_m32_imm(e, d, in->imm, 0x80000000u); /* -0.0 */
			emit_jump(j, CC_NE, at, t);		 /* none */
			patch8(e, value);
		} else {
			emit_jump(j, CC_B, i, t); /* a value */
			cmp_m32_imm(e, d, in->imm, 0x80000000u);
			emit_jump(j, CC_E, at, t); /* -0.0: a value */
		}
		j->fused = (int)(gap + 1);
		return;
	}
	sse_load(e, 0xf3, 0x10, 0, d, in->imm); /* movss xmm0, [d + imm] */
	f32_to_xmm1(e, d, c->lo);
	sse_rr(e, 0, 0, 0x2e, 0, 1, 0); /* ucomiss xmm0, xmm1 */
	uint32_t below = 0;
	if (eq)
		emit_jump(j, CC_B, i, t); /* v < lo, or NaN: none */
	else
		below = jcc8_fwd(e, CC_B);
	f32_to_xmm1(e, d, c->hi);
	sse_rr(e, 0, 0, 0x2e, 1, 0, 0); /* ucomiss xmm1, xmm0 */
	if (eq) {
		emit_jump(j, CC_BE, at, t); /* hi <= v: none */
	} else {
		emit_jump(j, CC_A, at, t); /* v < hi: a value, not none */
		patch8(e, below);
	}
	j->fused = (int)(gap + 1);
}

static void emit_insn(struct x86 *j, uint32_t i)
{
	const struct ebpf_insn *in = &j->insns[i];
	struct emitter *e = &j->e;

	switch (EBPF_CLASS(in->code)) {
	case EBPF_ALU:
	case EBPF_ALU64:
		emit_alu(j, in);
		break;
	case EBPF_JMP:
	case EBPF_JMP32:
		emit_jmp(j, in, i);
		break;
	case EBPF_LD:
		if (!ebpf_insn_is_lddw(in))
			goto bad;
		mov_ri64(e, R(in->dst_reg),
			 (uint32_t)in[0].imm | ((uint64_t)(uint32_t)in[1].imm << 32));
		break;
	case EBPF_LDX:
		if (in->code == EBPF_INTERNAL_LDX_F32) {
			if (j->an->insn_flags[i] & JIT_INSN_F32_TEST)
				emit_f32_test(j, i);
			else
				emit_ldx_f32(j, in);
			break;
		}
		if (EBPF_MODE(in->code) != EBPF_MEM && EBPF_MODE(in->code) != EBPF_MEMSX)
			goto bad;
		load(e, size_bytes(in->code), EBPF_MODE(in->code) == EBPF_MEMSX, R(in->dst_reg),
		     R(in->src_reg), in->off);
		break;
	case EBPF_ST:
		if (EBPF_MODE(in->code) != EBPF_MEM)
			goto bad;
		store_imm(e, size_bytes(in->code), R(in->dst_reg), in->off, in->imm);
		break;
	case EBPF_STX:
		if (EBPF_MODE(in->code) == EBPF_ATOMIC)
			emit_atomic(j, in);
		else if (EBPF_MODE(in->code) == EBPF_MEM)
			store_reg(e, size_bytes(in->code), R(in->src_reg), R(in->dst_reg), in->off);
		else
			goto bad;
		break;
	default:
		goto bad;
	}
	return;
bad:
	j->err = -EINVAL;
	snprintf(j->msg, sizeof(j->msg), "insn %u: opcode 0x%02x not supported by the JIT", i,
		 in->code);
}

static void run_pass(struct x86 *j, int pass, uint8_t *buf)
{
	const struct jit_analysis *an = j->an;
	uint32_t *addr = pass == 1 ? j->addr1 : j->addr;

	j->pass = pass;
	j->e.buf = buf;
	j->e.len = 0;
	j->e.cap = j->cap;
	j->e.overflow = 0;
	j->e.named = 0;
	for (uint32_t f = 0; f < an->n_funcs && !j->err; f++) {
		const struct jit_func *fn = &an->funcs[f];

		if (pass == 2)
			j->fentry[f] = j->e.len;
		if (f == 0)
			emit_entry_prologue(j);
		else
			emit_sub_prologue(j);
		j->zf_reg = -1;
		for (uint32_t i = fn->start; i < fn->end && !j->err; i++) {
			if (pass != 3)
				addr[i] = j->e.len;
			else if (addr[i] != j->e.len)
				j->err = -EFAULT;
			if (an->insn_flags[i] & JIT_INSN_LDDW_TAIL)
				continue;
			j->prev_zf_reg = (an->insn_flags[i] & JIT_INSN_TARGET) ? -1 : j->zf_reg;
			j->prev_zf_w = j->zf_w;
			j->zf_reg = -1;
			j->fused = 0;
			emit_insn(j, i);
			/* the next j->fused instructions' code is already emitted (none of them a
			 * jump target) */
			for (int k = 0; k < j->fused; k++) {
				i++;
				if (pass != 3)
					addr[i] = j->e.len;
				else if (addr[i] != j->e.len)
					j->err = -EFAULT;
			}
		}
	}
	if (pass != 3)
		addr[an->n_insns] = j->e.len;
	if (an->has_bpf_calls) {
		uint32_t expect = j->abort_off;

		emit_abort_stub(j);
		if (pass == 3 && expect != j->abort_off)
			j->err = -EFAULT;
	}
	if (j->e.overflow && !j->err)
		j->err = -EFAULT;
	if (j->err == -EFAULT && !j->msg[0])
		snprintf(j->msg, sizeof(j->msg), "internal error: JIT passes disagree (pass %d)",
			 pass);
}

int jit_arch_compile(const struct jit_analysis *an, struct jit_image *img, char *err,
		     size_t err_len)
{
	struct x86 j;
	uint32_t n = an->n_insns;
	uint32_t *arrays;
	size_t mapped = 0;
	uint8_t *mem = NULL;

	memset(&j, 0, sizeof(j));
	j.an = an;
	j.insns = an->prog->insns;
	j.bmi2 = !(an->flags & EBPF_JIT_F_BASELINE) && cpu_has_bmi2();
	arrays = malloc(sizeof(uint32_t) * ((size_t)3 * (n + 1) + n + an->n_funcs));
	if (!arrays) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	j.addr1 = arrays;
	j.addr = arrays + (n + 1);
	j.jpos1 = arrays + 2 * (size_t)(n + 1);
	j.fentry = arrays + 3 * (size_t)(n + 1) + n;
	/* A program that calls nothing (an inlined map lookup calls nothing) keeps every register
	 * of kept[]. Pass 1 saves all of kept[], an upper bound on the size; passes 2
	 * and 3 only those its code names (its eBPF registers, the scratch registers its
	 * templates use, the registers the prologue zeroes), so every distance only shrinks. */
	j.keeps = !an->has_bpf_calls && !an->funcs[0].calls;
	entry_setup(&j, 0xffff);

	j.cap = UINT32_MAX;
	run_pass(&j, 1, NULL);
	if (!j.err && j.keeps) {
		uint16_t named = j.e.named;

		for (int r = 0; r < EBPF_NREGS; r++)
			if (an->funcs[0].regs_used & (1u << r))
				named |= (uint16_t)(1u << reg_map[r]);
		entry_setup(&j, named);
	}
	if (!j.err) {
		j.cap = j.e.len;
		mem = jit_mem_alloc(j.cap, (const void *)&jit_arch_compile, &mapped);
		if (!mem) {
			j.err = -ENOMEM;
			snprintf(j.msg, sizeof(j.msg), "cannot map %u bytes for JIT code", j.cap);
		}
	}
	if (!j.err) {
		j.base = (uint64_t)(uintptr_t)mem;
		run_pass(&j, 2, NULL);
	}
	if (!j.err) {
		uint32_t size2 = j.e.len;

		run_pass(&j, 3, mem);
		if (!j.err && j.e.len != size2) {
			j.err = -EFAULT;
			snprintf(j.msg, sizeof(j.msg), "internal error: JIT size changed");
		}
	}
	free(arrays);
	if (j.err) {
		jit_mem_free(mem, mapped);
		snprintf(err, err_len, "%s", j.msg);
		return j.err;
	}
	/* Fill the tail of the page with int3 so a stray jump traps. */
	memset(mem + j.e.len, 0xcc, mapped - j.e.len);
	img->mem = mem;
	img->mapped = mapped;
	img->code_size = j.e.len;
	img->entry = (ebpf_jit_fn)(void *)mem;
	img->keeps_regs = (uint8_t)j.keeps;
	return 0;
}
