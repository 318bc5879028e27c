/* Random eBPF program generator (see gen.h for the contract).
 *
 * Programs are built from structured blocks (straight-line instructions, if / if-else, counted
 * loops, calls), so every jump target is known to be inside the same function and every loop
 * is bounded. The generator tracks which registers are initialised (the kernel refuses reads of
 * uninitialised registers, and r1-r5 die at every call) and which are locked as loop counters.
 * All values the programs compute are scalars; the only pointers are r10 and r9 (buffer). */
#include "gen_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "ebpf/disasm.h"

#define BUF_REG GEN_BUF_REG
#define RESERVE 128 /* instructions kept free for each function's epilogue and pending calls */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* --- values --------------------------------------------------------------------------------- */

int32_t gen__interesting_imm(struct gen *g)
{
	static const int32_t table[] = {
	    0,	     1,		 -1,	    2,		-2,	7,	    31,	    32,
	    63,	     64,	 0x7f,	    0x80,	0xff,	0x7fff,	    0x8000, 0xffff,
	    0x10000, 0x7fffffff, INT32_MIN, 0x55555555, -0x100, 0x12345678, -65536, 1000000007};
	switch (gen_below(g, 4)) {
	case 0:
		return table[gen_below(g, sizeof(table) / sizeof(table[0]))];
	case 1:
		return (int32_t)gen_below(g, 33) - 16;
	case 2:
		return (int32_t)((1u << gen_below(g, 32)) - gen_below(g, 2));
	default:
		return (int32_t)gen_next64(&g->rng);
	}
}

uint64_t gen__interesting_u64(struct gen *g)
{
	static const uint64_t table[] = {0,
					 1,
					 ~0ull,
					 0x8000000000000000ull,
					 0x7fffffffffffffffull,
					 0x80000000ull,
					 0xffffffffull,
					 0x100000000ull,
					 0xffffffff80000000ull,
					 0x00000000ffff8000ull,
					 0x0123456789abcdefull};
	switch (gen_below(g, 3)) {
	case 0:
		return table[gen_below(g, sizeof(table) / sizeof(table[0]))];
	case 1:
		return (uint64_t)(int64_t)gen__interesting_imm(g);
	default:
		return gen_next64(&g->rng);
	}
}

/* --- registers ------------------------------------------------------------------------------ */

int gen__is_scalar_reg(const struct gen *g, int r)
{
	return r >= 0 && r <= 9 && !(g->has_buf && r == BUF_REG) && r != g->ptr_tmp &&
	       !(g->ptrs & (1u << r));
}

/* A random readable scalar register (r0 is always readable after the prologue). */
int gen__pick_read(struct gen *g)
{
	int cand[10], n = 0;
	for (int r = 0; r <= 9; r++)
		if (gen__is_scalar_reg(g, r) && (g->init & (1u << r)))
			cand[n++] = r;
	return cand[gen_below(g, (uint32_t)n)];
}

/* A random writable scalar register; callee-saved registers only when callee_saved. */
int gen__pick_write_from(struct gen *g, int lo)
{
	int cand[10], n = 0;
	for (int r = lo; r <= 9; r++)
		if (gen__is_scalar_reg(g, r) && !(g->locked & (1u << r)))
			cand[n++] = r;
	if (!n)
		return -1;
	return cand[gen_below(g, (uint32_t)n)];
}

static int pick_write(struct gen *g)
{
	return gen__pick_write_from(g, 0);
}

/* dst = a random value, in one of the ways a compiler would set a register. */
void gen__set_reg(struct gen *g, int dst)
{
	uint32_t how = gen_below(g, 10);
	if (how < 2 && gen_has(g, GEN_LDIMM64)) {
		uint64_t v = gen__interesting_u64(g);
		gen_emit(g, EBPF_LD | EBPF_DW | EBPF_IMM, dst, 0, 0, (int32_t)(uint32_t)v);
		gen_emit(g, 0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32));
	} else if (how < 4) {
		gen_emit(g, EBPF_ALU | EBPF_MOV | EBPF_K, dst, 0, 0, gen__interesting_imm(g));
	} else {
		gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_K, dst, 0, 0, gen__interesting_imm(g));
	}
	gen_mark_init(g, dst);
}

/* --- ALU ------------------------------------------------------------------------------------ */

void gen__alu(struct gen *g)
{
	int wide;
	if (gen_has(g, GEN_ALU64) && gen_has(g, GEN_ALU32))
		wide = gen_chance(g, 60);
	else
		wide = gen_has(g, GEN_ALU64) ? 1 : gen_has(g, GEN_ALU32) ? 0 : 1;
	uint8_t cls = wide ? EBPF_ALU64 : EBPF_ALU;
	int dst = pick_write(g);
	if (dst < 0)
		return;
	/* A written register must be readable first for ops that read dst. */
	if (!(g->init & (1u << dst)))
		gen__set_reg(g, dst);

	uint8_t ops[24]; /* 17 kinds today */
	int n = 0;
	if (gen_has(g, GEN_ALU64 | GEN_ALU32)) {
		static const uint8_t basic[] = {EBPF_ADD, EBPF_SUB, EBPF_MUL, EBPF_OR,
						EBPF_AND, EBPF_XOR, EBPF_MOV, EBPF_NEG};
		for (unsigned k = 0; k < sizeof(basic); k++)
			ops[n++] = basic[k];
	}
	if (gen_has(g, GEN_DIVMOD)) {
		ops[n++] = EBPF_DIV;
		ops[n++] = EBPF_MOD;
	}
	if (gen_has(g, GEN_SDIVMOD)) {
		ops[n++] = 0xf0; /* marker: signed div */
		ops[n++] = 0xf1; /* marker: signed mod */
	}
	if (gen_has(g, GEN_SHIFT)) {
		ops[n++] = EBPF_LSH;
		ops[n++] = EBPF_RSH;
		ops[n++] = EBPF_ARSH;
	}
	if (gen_has(g, GEN_MOVSX))
		ops[n++] = 0xf2;
	if (gen_has(g, GEN_BSWAP))
		ops[n++] = EBPF_END;
	if (!n)
		return;
	uint8_t op = ops[gen_below(g, (uint32_t)n)];
	int use_reg = gen_chance(g, 50);
	int bits = wide ? 64 : 32;

	switch (op) {
	case EBPF_NEG:
		gen_emit(g, cls | EBPF_NEG | EBPF_K, dst, 0, 0, 0);
		break;
	case EBPF_END: {
		static const int32_t widths[] = {16, 32, 64};
		int32_t w = widths[gen_below(g, 3)];
		if (gen_has(g, GEN_V4_BSWAP) && gen_chance(g, 33))
			gen_emit(g, EBPF_ALU64 | EBPF_END | EBPF_TO_LE, dst, 0, 0,
				 w); /* v4 bswap */
		else
			gen_emit(
			    g, EBPF_ALU | EBPF_END | (gen_chance(g, 50) ? EBPF_TO_BE : EBPF_TO_LE),
			    dst, 0, 0, w);
		break;
	}
	case 0xf2: { /* movsx: ALU64 8/16/32, ALU32 8/16; register source only */
		int16_t off =
		    wide ? (int16_t)(8 << gen_below(g, 3)) : (int16_t)(8 << gen_below(g, 2));
		gen_emit(g, cls | EBPF_MOV | EBPF_X, dst, gen__pick_read(g), off, 0);
		break;
	}
	case EBPF_LSH:
	case EBPF_RSH:
	case EBPF_ARSH:
		if (use_reg)
			gen_emit(g, cls | op | EBPF_X, dst, gen__pick_read(g), 0, 0);
		else /* the kernel rejects immediate counts >= width */
			gen_emit(g, cls | op | EBPF_K, dst, 0, 0,
				 (int32_t)gen_below(g, (uint32_t)bits));
		break;
	case EBPF_DIV:
	case EBPF_MOD:
	case 0xf0:
	case 0xf1: {
		int16_t off = op >= 0xf0 ? 1 : 0;
		uint8_t real = (op == EBPF_DIV || op == 0xf0) ? EBPF_DIV : EBPF_MOD;
		/* Steer towards the corner cases: INT_MIN / -1 and division by zero. */
		if (off && gen_chance(g, 20)) {
			if (wide) {
				gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_K, dst, 0, 0, 1);
				gen_emit(g, EBPF_ALU64 | EBPF_LSH | EBPF_K, dst, 0, 0, 63);
			} else {
				gen_emit(g, EBPF_ALU | EBPF_MOV | EBPF_K, dst, 0, 0, INT32_MIN);
			}
			if (!use_reg) {
				gen_emit(g, cls | real | EBPF_K, dst, 0, off, -1);
				break;
			}
			int s = pick_write(g);
			if (s >= 0 && s != dst) {
				gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_K, s, 0, 0, -1);
				gen_mark_init(g, s);
				gen_emit(g, cls | real | EBPF_X, dst, s, off, 0);
				break;
			}
		}
		if (use_reg) {
			int s = gen__pick_read(g);
			if (gen_chance(g, 15) && s != dst && !(g->locked & (1u << s)) &&
			    gen__is_scalar_reg(g, s))
				gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_K, s, 0, 0, 0);
			gen_emit(g, cls | real | EBPF_X, dst, s, off, 0);
		} else {
			int32_t imm = gen__interesting_imm(g);
			if (imm == 0) /* the kernel rejects a constant zero divisor */
				imm = gen_chance(g, 50) ? -1 : 3;
			gen_emit(g, cls | real | EBPF_K, dst, 0, off, imm);
		}
		break;
	}
	default: /* add sub mul or and xor mov */
		if (use_reg)
			gen_emit(g, cls | op | EBPF_X, dst, gen__pick_read(g), 0, 0);
		else
			gen_emit(g, cls | op | EBPF_K, dst, 0, 0, gen__interesting_imm(g));
		break;
	}
	gen_mark_init(g, dst);
}

/* --- memory --------------------------------------------------------------------------------- */

static const uint8_t size_code[4] = {EBPF_B, EBPF_H, EBPF_W, EBPF_DW};

/* Buffer access through a computed pointer: t = (index & mask) + r9, then base t. The mask
 * bounds the variable part so that off + mask + size stays inside the buffer (what a verifier
 * must prove from the AND); unsafe makes the mask too wide. */
static int varoff_addr(struct gen *g, int sz, int must_align, int unsafe, int *base, int16_t *off)
{
	uint32_t room = g->p->buf_len - (uint32_t)sz; /* largest safe offset */
	int t = gen__pick_write_from(g, 1);	      /* not r0: cmpxchg compares it */
	if (t < 0)
		return -1;
	uint32_t mask = gen_floor_pow2(room + 1) - 1;
	mask >>= gen_below(g, 4);
	if (unsafe)
		mask = gen_floor_pow2(room + 1) * 2 - 1;
	if (must_align)
		mask &= ~(uint32_t)(sz - 1);
	int idx = gen__pick_read(g);
	if (idx != t)
		gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, t, idx, 0, 0);
	gen_emit(g, (gen_chance(g, 50) ? EBPF_ALU64 : EBPF_ALU) | EBPF_AND | EBPF_K, t, 0, 0,
		 (int32_t)mask);
	gen_emit(g, EBPF_ALU64 | EBPF_ADD | EBPF_X, t, BUF_REG, 0, 0);
	g->ptr_tmp = t; /* a pointer now: no scalar operation may use it */
	uint32_t slack = room >= mask ? room - mask : 0;
	uint32_t o = gen_below(g, slack + 1);
	if (must_align)
		o &= ~(uint32_t)(sz - 1);
	*base = t;
	*off = (int16_t)o;
	return 0;
}

/* Ends the life of a computed pointer: the register becomes a scalar again. */
static void release_tmp(struct gen *g)
{
	if (g->ptr_tmp < 0)
		return;
	int t = g->ptr_tmp;
	g->ptr_tmp = -1;
	gen__set_reg(g, t);
}

/* Picks base register and offset for an access of 1 << lg bytes on the stack window or the
 * buffer; aligned when must_align. With unsafe_pct, some accesses deliberately leave the safe
 * area (for verifier testing). */
static int pick_addr(struct gen *g, void *unused, int lg, int must_align, int *base, int16_t *off)
{
	int sz = 1 << lg;
	int stack = gen_has(g, GEN_STACK), buf = gen_has(g, GEN_BUF) && g->has_buf;
	int unsafe = g->unsafe_pct && gen_chance(g, g->unsafe_pct);
	if (!stack && !buf)
		return -1;
	if (stack && buf)
		stack = gen_chance(g, 50), buf = !stack;
	if (unsafe)
		g->p->n_unsafe++;
	if (stack) {
		/* The kernel insists on aligned stack accesses. */
		uint32_t slots = g->win / (uint32_t)sz;
		*base = EBPF_REG_10;
		*off = (int16_t)(-(int32_t)((gen_below(g, slots) + 1) * (uint32_t)sz));
		if (unsafe) /* below the initialised window, or above the frame */
			*off = gen_chance(g, 70)
				   ? (int16_t)(-(int32_t)(g->win +
							  (uint32_t)sz * (1 + gen_below(g, 4))))
				   : (int16_t)(sz * (int)gen_below(g, 2));
		return 0;
	}
	uint32_t len = g->p->buf_len;
	if (gen_has(g, GEN_VAROFF) && gen_chance(g, 30))
		return varoff_addr(g, sz, must_align, unsafe, base, off);
	*base = BUF_REG;
	if (unsafe)
		*off = gen_chance(g, 70) ? (int16_t)(len - (uint32_t)sz + 1 + gen_below(g, 16))
					 : (int16_t)(-1 - (int)gen_below(g, 16));
	else if (must_align || gen_chance(g, 70))
		*off = (int16_t)(gen_below(g, len / (uint32_t)sz) * (uint32_t)sz);
	else
		*off = (int16_t)gen_below(g, len - (uint32_t)sz + 1);
	if (unsafe && must_align)
		*off = (int16_t)(*off & ~(sz - 1));
	return 0;
}

void gen__mem_access(struct gen *g, gen_addr_fn pick, void *ctx)
{
	int base, kind = (int)gen_below(g, 10);
	int16_t off;
	if (kind >= 8 && gen_has(g, GEN_ATOMIC)) {
		static const int32_t aops[] = {EBPF_ATOMIC_ADD, EBPF_ATOMIC_OR, EBPF_ATOMIC_AND,
					       EBPF_ATOMIC_XOR, EBPF_XCHG,	EBPF_CMPXCHG};
		int lg = gen_chance(g, 50) ? 3 : 2;
		int32_t aop = aops[gen_below(g, 6)];
		if (aop <= EBPF_ATOMIC_XOR && gen_chance(g, 50))
			aop |= EBPF_FETCH;
		if (pick(g, ctx, lg, 1, &base, &off))
			return;
		/* Fetching forms write the source register (cmpxchg writes r0). */
		int src =
		    (aop & EBPF_FETCH) && aop != EBPF_CMPXCHG ? pick_write(g) : gen__pick_read(g);
		if (src < 0)
			return;
		if (!(g->init & (1u << src)))
			gen__set_reg(g, src);
		gen_emit(g, EBPF_STX | EBPF_ATOMIC | size_code[lg], base, src, off, aop);
		if (aop == EBPF_CMPXCHG)
			gen_mark_init(g, 0);
		return;
	}
	int lg = (int)gen_below(g, 4);
	if (kind < 4) { /* load */
		int sx = gen_has(g, GEN_MEMSX) && lg < 3 && gen_chance(g, 40);
		int dst = pick_write(g);
		if (dst < 0 || pick(g, ctx, lg, 0, &base, &off))
			return;
		gen_emit(g, EBPF_LDX | (sx ? EBPF_MEMSX : EBPF_MEM) | size_code[lg], dst, base, off,
			 0);
		gen_mark_init(g, dst);
	} else if (kind < 7) { /* store a register */
		if (pick(g, ctx, lg, 0, &base, &off))
			return;
		gen_emit(g, EBPF_STX | EBPF_MEM | size_code[lg], base, gen__pick_read(g), off, 0);
	} else { /* store an immediate */
		if (pick(g, ctx, lg, 0, &base, &off))
			return;
		gen_emit(g, EBPF_ST | EBPF_MEM | size_code[lg], base, 0, off,
			 gen__interesting_imm(g));
	}
}

void gen__mem(struct gen *g)
{
	gen__mem_access(g, pick_addr, NULL);
	release_tmp(g);
}

/* --- control flow --------------------------------------------------------------------------- */

static void gen_block(struct gen *g, int depth);

static uint8_t random_cond(struct gen *g)
{
	static const uint8_t conds[] = {EBPF_JEQ, EBPF_JGT,  EBPF_JGE,	EBPF_JSET,
					EBPF_JNE, EBPF_JSGT, EBPF_JSGE, EBPF_JLT,
					EBPF_JLE, EBPF_JSLT, EBPF_JSLE};
	return conds[gen_below(g, sizeof(conds))];
}

/* Emits a conditional jump with a placeholder offset; returns its pc. */
static uint32_t emit_cond(struct gen *g)
{
	uint8_t cls = EBPF_JMP;
	if (gen_has(g, GEN_JMP32) && (!gen_has(g, GEN_JMP) || gen_chance(g, 50)))
		cls = EBPF_JMP32;
	uint32_t at = gen_pc(g);
	int dst = gen__pick_read(g);
	if (gen_chance(g, 50))
		gen_emit(g, cls | random_cond(g) | EBPF_X, dst, gen__pick_read(g), 0, 0);
	else
		gen_emit(g, cls | random_cond(g) | EBPF_K, dst, 0, 0, gen__interesting_imm(g));
	return at;
}

/* Unconditional forward jump with placeholder; gotol (32-bit offset) when enabled. */
static uint32_t emit_ja(struct gen *g, int *long_form)
{
	uint32_t at = gen_pc(g);
	*long_form = gen_has(g, GEN_GOTOL) && gen_chance(g, 40);
	gen_emit(g, *long_form ? (EBPF_JMP32 | EBPF_JA) : (EBPF_JMP | EBPF_JA), 0, 0, 0, 0);
	return at;
}

static void gen_if(struct gen *g, int depth)
{
	uint16_t before = g->init;
	uint32_t j = emit_cond(g);
	gen_block(g, depth + 1);
	uint16_t after_then = g->init;
	if (gen_chance(g, 40)) {
		int long_form;
		uint32_t ja = emit_ja(g, &long_form);
		gen_patch_fwd(g, j);
		g->init = before;
		gen_block(g, depth + 1);
		if (long_form)
			g->p->insns[ja].imm = (int32_t)(gen_pc(g) - ja - 1);
		else
			gen_patch_fwd(g, ja);
		g->init &= after_then;
	} else {
		gen_patch_fwd(g, j);
		g->init = before & after_then;
	}
}

static void gen_loop(struct gen *g, int depth)
{
	/* The counter lives in a callee-saved register so calls in the body keep it. */
	int c = gen__pick_write_from(g, 6);
	if (c < 0)
		return;
	uint32_t iters = 1 + gen_below(g, g->max_loop_iters);
	int up = gen_chance(g, 40);
	int w32 = gen_has(g, GEN_JMP32) && gen_chance(g, 50);
	gen_emit(g, (w32 ? EBPF_ALU : EBPF_ALU64) | EBPF_MOV | EBPF_K, c, 0, 0,
		 up ? 0 : (int32_t)iters);
	gen_mark_init(g, c);
	uint16_t saved_keep = g->keep, saved_locked = g->locked;
	/* Everything readable at the top must still be readable at the back edge. */
	g->keep |= g->init;
	g->locked |= (uint16_t)(1u << c);
	g->loop_depth++;
	uint32_t top = gen_pc(g);
	gen_block(g, depth + 1);
	g->loop_depth--;
	uint8_t jcls = w32 ? EBPF_JMP32 : EBPF_JMP;
	if (up) {
		gen_emit(g, (w32 ? EBPF_ALU : EBPF_ALU64) | EBPF_ADD | EBPF_K, c, 0, 0, 1);
		gen_emit(g, jcls | (gen_chance(g, 50) ? EBPF_JLT : EBPF_JSLT) | EBPF_K, c, 0,
			 (int16_t)(top - gen_pc(g) - 1), (int32_t)iters);
	} else {
		if (gen_chance(g, 50))
			gen_emit(g, (w32 ? EBPF_ALU : EBPF_ALU64) | EBPF_ADD | EBPF_K, c, 0, 0, -1);
		else
			gen_emit(g, (w32 ? EBPF_ALU : EBPF_ALU64) | EBPF_SUB | EBPF_K, c, 0, 0, 1);
		static const uint8_t downs[] = {EBPF_JNE, EBPF_JGT, EBPF_JSGT};
		gen_emit(g, jcls | downs[gen_below(g, 3)] | EBPF_K, c, 0,
			 (int16_t)(top - gen_pc(g) - 1), 0);
	}
	g->keep = saved_keep;
	g->locked = saved_locked;
}

static void emit_call(struct gen *g, int target)
{
	/* Arguments: scalars in r2-r5, then the buffer in r1 (when there is one; last, so that
	 * no scalar argument is copied from the pointer). */
	for (int r = 2; r <= 5; r++) {
		if (gen_chance(g, 50))
			gen__set_reg(g, r);
		else
			gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, r, gen__pick_read(g), 0, 0);
		gen_mark_init(g, r);
	}
	if (g->has_buf)
		gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, 1, BUF_REG, 0, 0);
	else if (gen_chance(g, 50))
		gen__set_reg(g, 1);
	else
		gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, 1, gen__pick_read(g), 0, 0);
	g->fix_pc[g->n_fix] = gen_pc(g);
	g->fix_target[g->n_fix++] = (uint8_t)target;
	g->called[target] = 1;
	gen_emit(g, EBPF_JMP | EBPF_CALL, 0, EBPF_PSEUDO_CALL, 0, 0);
	g->init &= (uint16_t)~0x3e; /* r1-r5 are dead after a call */
	gen_mark_init(g, 0);
	/* Restore what an enclosing loop reads again, and some more. */
	for (int r = 1; r <= 5; r++)
		if ((g->keep & (1u << r)) || gen_chance(g, 30))
			gen__set_reg(g, r);
}

/* Room an item may need beyond g->limit's check: the longest map pattern (gen_maps.c). */
#define ITEM_MAX_INSNS 64

static void gen_item(struct gen *g, int depth)
{
	/* Map and helper patterns draw their own chance first, and only when enabled, so that
	 * programs without them are the same as before they existed (seeds stay reproducible). */
	if ((g->fam & (GEN_MAP_FAMILIES | GEN_NONDET)) && gen_chance(g, 15) &&
	    gen_pc(g) + ITEM_MAX_INSNS < g->limit) {
		gen__map_item(g);
		return;
	}
	uint32_t w = gen_below(g, 100);
	int can_nest = depth < (int)g->max_depth;
	if (w < 8 && can_nest && gen_has(g, GEN_JMP | GEN_JMP32)) {
		gen_if(g, depth);
	} else if (w < 11 && can_nest && gen_has(g, GEN_LOOP) && g->loop_depth < 2) {
		gen_loop(g, depth);
	} else if (w < 13 && gen_has(g, GEN_CALL) && g->func + 1 < (int)g->n_funcs &&
		   (g->loop_depth == 0 || gen_chance(g, 30))) {
		emit_call(g, g->func + 1 + (int)gen_below(g, g->n_funcs - (uint32_t)g->func - 1));
	} else if (w < 17 && gen_has(g, GEN_LDIMM64)) {
		int d = pick_write(g);
		if (d >= 0) {
			uint64_t v = gen__interesting_u64(g);
			gen_emit(g, EBPF_LD | EBPF_DW | EBPF_IMM, d, 0, 0, (int32_t)(uint32_t)v);
			gen_emit(g, 0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32));
			gen_mark_init(g, d);
		}
	} else if (w < 45 && gen_has(g, GEN_STACK | GEN_BUF | GEN_ATOMIC)) {
		gen__mem(g);
	} else {
		gen__alu(g);
	}
}

static void gen_block(struct gen *g, int depth)
{
	/* Blocks get a share of the remaining items; the top level takes what is left. */
	uint32_t n = depth == 0 ? g->items : 1 + gen_below(g, 6);
	for (uint32_t k = 0; k < n && g->items > 0 && gen_pc(g) < g->limit; k++) {
		g->items--;
		gen_item(g, depth);
	}
}

/* --- functions ------------------------------------------------------------------------------ */

static void gen_function(struct gen *g, int f, const int *caller_of)
{
	g->func = f;
	g->init = 0;
	g->locked = 0;
	g->keep = 0;
	g->ptrs = 0;
	g->ptr_tmp = -1;
	g->loop_depth = 0;
	g->p->func_start[f] = gen_pc(g);
	/* Stack windows: multiples of 32 so the kernel's combined-stack rounding stays < 512. */
	g->win = f == 0 ? 32u * (1 + gen_below(g, 4)) : 32u * (1 + gen_below(g, 2));

	/* Prologue: take the buffer, initialise every scalar register and the stack window. */
	if (g->has_buf)
		gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, BUF_REG, 1, 0, 0);
	if (f == 0)
		gen_mark_init(g, 2); /* r2 = buffer length */
	else
		g->init |=
		    g->has_buf ? 0x3c : 0x3e; /* arguments (r1 is the buffer when there is one) */
	for (int r = 0; r <= 9; r++)
		if (gen__is_scalar_reg(g, r) && !(g->init & (1u << r)))
			gen__set_reg(g, r);
	for (uint32_t o = 8; o <= g->win; o += 8) {
		if (gen_chance(g, 50))
			gen_emit(g, EBPF_ST | EBPF_MEM | EBPF_DW, EBPF_REG_10, 0,
				 (int16_t) - (int32_t)o, gen__interesting_imm(g));
		else
			gen_emit(g, EBPF_STX | EBPF_MEM | EBPF_DW, EBPF_REG_10, gen__pick_read(g),
				 (int16_t) - (int32_t)o, 0);
	}
	/* Calls that make every callee reachable come first, outside any branch. */
	for (int t = f + 1; t < (int)g->n_funcs; t++)
		if (caller_of[t] == f)
			emit_call(g, t);

	uint32_t funcs_left = g->n_funcs - (uint32_t)f;
	uint32_t room = GEN_MAX_INSNS - gen_pc(g);
	g->limit = gen_pc(g) + (room > funcs_left * RESERVE ? room / funcs_left - RESERVE : 0);
	g->items = g->max_len / 4 + gen_below(g, g->max_len - g->max_len / 4 + 1);
	/* The kernel verifies a callee once per call site and path, so callees stay small: that
	 * keeps verification cheap (and the kernel's complexity limit far away). */
	if (f > 0)
		g->items = 1 + g->items / 4;
	gen_block(g, 0);

	/* Epilogue: fold every readable scalar register and the stack window into r0. */
	int tmp = -1;
	for (int r = 1; r <= 9; r++) {
		if (!gen__is_scalar_reg(g, r) || !(g->init & (1u << r)))
			continue;
		gen_emit(g, EBPF_ALU64 | EBPF_MUL | EBPF_K, 0, 0, 0, 0x2f0b3c8d | 1);
		gen_emit(g, EBPF_ALU64 | EBPF_XOR | EBPF_X, 0, r, 0, 0);
		tmp = r;
	}
	if (tmp < 0)
		tmp = 1;
	for (uint32_t o = 8; o <= g->win; o += 8) {
		gen_emit(g, EBPF_LDX | EBPF_MEM | EBPF_DW, tmp, EBPF_REG_10, (int16_t) - (int32_t)o,
			 0);
		gen_emit(g, EBPF_ALU64 | EBPF_MUL | EBPF_K, 0, 0, 0, 0x1000193);
		gen_emit(g, EBPF_ALU64 | EBPF_ADD | EBPF_X, 0, tmp, 0, 0);
	}
	gen_emit(g, EBPF_JMP | EBPF_EXIT, 0, 0, 0, 0);
}

int gen_program(uint64_t seed, const struct gen_opts *opts, struct gen_prog *out)
{
	struct gen_opts o = {0};
	if (opts) {
		if (opts->sz < sizeof(size_t))
			return -EINVAL;
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	}
	if (!o.families)
		o.families = GEN_ALL_FAMILIES;
	if (!o.max_len)
		o.max_len = 40;
	if (!o.max_funcs)
		o.max_funcs = GEN_MAX_FUNCS;
	if (!o.max_loop_iters)
		o.max_loop_iters = 5;
	if (!o.max_depth)
		o.max_depth = 3;
	if (o.max_len > 2000 || o.max_funcs > GEN_MAX_FUNCS || o.max_loop_iters > 16 ||
	    o.max_depth > 8 || o.buf_len > GEN_MAX_BUF || o.buf_len % 8 || o.unsafe_pct > 100)
		return -EINVAL;

	struct gen gs;
	struct gen *g = &gs;
	memset(g, 0, sizeof(*g));
	uint64_t x = seed;
	for (int k = 0; k < 4; k++)
		g->rng.s[k] = splitmix64(&x);
	memset(out, 0, sizeof(*out));
	out->seed = seed;
	out->families = o.families;
	if ((o.families & (GEN_MAP_FAMILIES | GEN_NONDET)) && gen__maps_from_opts(&o, out))
		return -EINVAL;
	g->p = out;
	g->fam = o.families;
	g->max_len = o.max_len;
	g->max_loop_iters = o.max_loop_iters;
	g->max_depth = o.max_depth;
	g->unsafe_pct = o.unsafe_pct;
	g->ptr_tmp = -1;
	g->n_funcs = (o.families & GEN_CALL) ? 1 + gen_below(g, o.max_funcs) : 1;
	g->has_buf = (o.families & GEN_BUF) != 0;
	if (g->has_buf) {
		out->buf_len = o.buf_len ? o.buf_len : 8u * (1 + gen_below(g, GEN_MAX_BUF / 8));
		for (uint32_t k = 0; k < out->buf_len; k++)
			out->buf[k] = (uint8_t)gen_next64(&g->rng);
	}
	/* Every callee gets a designated caller earlier in the list, so all are reachable. */
	int caller_of[GEN_MAX_FUNCS] = {0};
	for (uint32_t f = 1; f < g->n_funcs; f++)
		caller_of[f] = (int)gen_below(g, f);
	out->n_funcs = g->n_funcs;
	for (uint32_t f = 0; f < g->n_funcs; f++)
		gen_function(g, (int)f, caller_of);
	for (uint32_t k = 0; k < g->n_fix; k++) {
		uint32_t at = g->fix_pc[k];
		out->insns[at].imm = (int32_t)(out->func_start[g->fix_target[k]] - at - 1);
	}
	return 0;
}

void gen_opts_for_seed(uint64_t seed, uint32_t families, struct gen_opts *o)
{
	uint64_t x = seed ^ 0x6a09e667f3bcc908ull;
	uint64_t h = splitmix64(&x);
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->families = families;
	/* Mostly short programs (cheap for the kernel to verify), sometimes long ones. */
	o->max_len =
	    (h & 7) == 0 ? 100 + (uint32_t)((h >> 8) % 150) : 4 + (uint32_t)((h >> 8) % 60);
	o->max_depth = 1 + (uint32_t)((h >> 20) % 4);
	o->max_loop_iters = 1 + (uint32_t)((h >> 24) % 8);
	o->max_funcs = 1 + (uint32_t)((h >> 28) % GEN_MAX_FUNCS);
}

/* --- names and printing --------------------------------------------------------------------- */

static const struct {
	const char *name;
	uint32_t mask;
} family_names[] = {
    {"alu64", GEN_ALU64},
    {"alu32", GEN_ALU32},
    {"divmod", GEN_DIVMOD},
    {"sdivmod", GEN_SDIVMOD},
    {"shift", GEN_SHIFT},
    {"movsx", GEN_MOVSX},
    {"bswap", GEN_BSWAP},
    {"jmp", GEN_JMP},
    {"jmp32", GEN_JMP32},
    {"gotol", GEN_GOTOL},
    {"loop", GEN_LOOP},
    {"stack", GEN_STACK},
    {"buf", GEN_BUF},
    {"memsx", GEN_MEMSX},
    {"atomic", GEN_ATOMIC},
    {"ldimm64", GEN_LDIMM64},
    {"call", GEN_CALL},
    {"bswap64", GEN_V4_BSWAP},
    {"maplookup", GEN_MAP_LOOKUP},
    {"mapupdate", GEN_MAP_UPDATE},
    {"ringbuf", GEN_RINGBUF},
    {"nondet", GEN_NONDET},
    /* sets (not printed by gen_format_families) */
    {"all", GEN_ALL_FAMILIES},
    {"v3", GEN_V3_FAMILIES},
    {"maps", GEN_MAP_FAMILIES},
};
#define N_FAMILY_SETS 3

int gen_parse_families(const char *s, uint32_t *mask)
{
	uint32_t m = 0;
	while (*s) {
		size_t n = strcspn(s, ",");
		int neg = *s == '-';
		const char *name = s + neg;
		size_t len = n - (size_t)neg;
		size_t k;
		for (k = 0; k < sizeof(family_names) / sizeof(family_names[0]); k++)
			if (strlen(family_names[k].name) == len &&
			    !strncmp(family_names[k].name, name, len))
				break;
		if (k == sizeof(family_names) / sizeof(family_names[0]))
			return -EINVAL;
		if (neg)
			m &= ~family_names[k].mask;
		else
			m |= family_names[k].mask;
		s += n;
		if (*s == ',')
			s++;
	}
	*mask = m;
	return 0;
}

void gen_format_families(uint32_t mask, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t k = 0; k < sizeof(family_names) / sizeof(family_names[0]) - N_FAMILY_SETS;
	     k++) {
		if (!(mask & family_names[k].mask))
			continue;
		int n =
		    snprintf(buf + used, len - used, "%s%s", used ? "," : "", family_names[k].name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

void gen_print(FILE *f, const struct gen_prog *p)
{
	char fams[256];
	gen_format_families(p->families, fams, sizeof(fams));
	fprintf(f, "program seed %" PRIu64 " (0x%" PRIx64 "): %u insns, %u functions, buf_len %u\n",
		p->seed, p->seed, p->n_insns, p->n_funcs, p->buf_len);
	fprintf(f, "families: %s\n", fams);
	for (uint32_t m = 0; m < p->n_maps; m++)
		fprintf(f, "map %u: type %u, key %u, value %u, max_entries %u\n", m,
			p->maps[m].type, p->maps[m].key_size, p->maps[m].value_size,
			p->maps[m].max_entries);
	for (uint32_t pcv = 0; pcv < p->n_insns; pcv++) {
		for (uint32_t fn = 0; fn < p->n_funcs; fn++)
			if (p->func_start[fn] == pcv)
				fprintf(f, "func%u:\n", fn);
		const struct ebpf_insn *i = &p->insns[pcv];
		uint8_t b[8];
		memcpy(b, i, 8);
		fprintf(f, "%5u: %02x %02x %02x %02x %02x %02x %02x %02x", pcv, b[0], b[1], b[2],
			b[3], b[4], b[5], b[6], b[7]);
		char text[128];
		int used = ebpf_disasm_insn(p->insns, p->n_insns, pcv, text, sizeof(text));
		fprintf(f, "  %s\n", text);
		if (used == 2) {
			memcpy(b, i + 1, 8);
			pcv++;
			fprintf(f, "%5u: %02x %02x %02x %02x %02x %02x %02x %02x\n", pcv, b[0],
				b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
		}
	}
	if (p->buf_len) {
		fprintf(f, "buffer (%u bytes):", p->buf_len);
		for (uint32_t k = 0; k < p->buf_len; k++)
			fprintf(f, "%s%02x", k % 32 ? " " : "\n  ", p->buf[k]);
		fputc('\n', f);
	}
}
