/* Converted context reads (ebpf_ctx_from_f32): the verifier's per-load context offsets
 * (ebpf_verify_opts.ctx_off), the executable's rewrite of listed loads and what it refuses, and
 * the conversion itself - interpreter, JIT (plain and register-keeping call) and the C rule
 * (ebpf_ctx_from_f32_value, and the NCCL platform's tuner cells against NCCL's own validity
 * rule) - on special values, both bounds' neighbours and a sweep over the float bit patterns. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "insn_macros.h"
#include "keeping_call.h"
#include "ebpf/exec.h"
#include "ebpf/helpers.h"
#include "ebpf/jit.h"
#include "ebpf/verifier.h"
#include "ncclbpf/nccl_platform.h"

#define T_COST	48 /* offsetof(struct ncclbpf_tuner_ctx, cost_ns) */
#define N_CELLS (NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS)
#define RET0	MOV64_IMM(0, 0), EXIT()

/* The tuner context as the runtime hands it over: the table's address after the context. */
struct run_ctx {
	struct ncclbpf_tuner_ctx x;
	const float *cells;
};
_Static_assert(offsetof(struct run_ctx, cells) == NCCLBPF_TUNER_CELLS_SRC_OFF, "cells follow");

static int32_t offs[64];

static int verify(const struct ebpf_insn *insns, uint32_t n)
{
	struct ebpf_verify_opts o = {.sz = sizeof(o),
				     .type = ncclbpf_prog_type("tuner"),
				     .helpers = ebpf_helpers_default(),
				     .ctx_off = offs};
	char err[256];
	for (uint32_t i = 0; i < 64; i++)
		offs[i] = 12345; /* every entry must be written */
	int rc = ebpf_verify(insns, n, &o, NULL, err, sizeof(err));
	CHECKF(rc == 0, "%s", err);
	return rc;
}

/* The verifier's offsets: a load straight from the context, through a moved pointer, with the
 * same offset on two paths, different offsets on two paths, the context on one path and the
 * stack on the other; stores and other instructions are NONE. */
static void check_offsets(void)
{
	const struct ebpf_insn direct[] = {LDX_MEM(EBPF_DW, 2, 1, T_COST + 8), /* 0 */
					   MOV64_REG(3, 1),		       /* 1 */
					   ALU64_IMM(EBPF_ADD, 3, T_COST),     /* 2 */
					   LDX_MEM(EBPF_DW, 4, 3, 16),	       /* 3: cost cell 2 */
					   STX_MEM(EBPF_DW, 10, 4, -8),	       /* 4 */
					   LDX_MEM(EBPF_DW, 5, 10, -8),	       /* 5: the stack */
					   LDX_MEM(EBPF_W, 5, 1, 24),	       /* 6: coll_type */
					   RET0};
	if (verify(direct, INSN_CNT(direct)) == 0) {
		CHECK(offs[0] == T_COST + 8);
		CHECK(offs[1] == EBPF_CTX_OFF_NONE && offs[2] == EBPF_CTX_OFF_NONE);
		CHECK(offs[3] == T_COST + 16);
		CHECK(offs[4] == EBPF_CTX_OFF_NONE && offs[5] == EBPF_CTX_OFF_NONE);
		CHECK(offs[6] == 24);
	}
	/* r3 = ctx + 48 or ctx + 56 by n_bytes; one load through it: MIXED. Then the same
	 * offset either way: a constant offset. */
	const struct ebpf_insn paths[] = {
	    LDX_MEM(EBPF_DW, 2, 1, 8),	    /* 0: n_bytes */
	    MOV64_REG(3, 1),		    /* 1 */
	    ALU64_IMM(EBPF_ADD, 3, T_COST), /* 2 */
	    JMP_IMM(EBPF_JGT, 2, 100, 1),   /* 3 */
	    ALU64_IMM(EBPF_ADD, 3, 8),	    /* 4 */
	    LDX_MEM(EBPF_DW, 4, 3, 0),	    /* 5: two offsets */
	    JMP_IMM(EBPF_JGT, 2, 100, 1),   /* 6 */
	    JA(0),			    /* 7 */
	    LDX_MEM(EBPF_DW, 4, 1, T_COST), /* 8: one offset, one path */
	    RET0};
	if (verify(paths, INSN_CNT(paths)) == 0) {
		CHECK(offs[5] == EBPF_CTX_OFF_MIXED);
		CHECK(offs[8] == T_COST);
	}
	const struct ebpf_insn ctx_or_stack[] = {
	    ST_MEM(EBPF_DW, 10, -8, 7),		 /* 0 */
	    LDX_MEM(EBPF_DW, 2, 1, 8),		 /* 1 */
	    MOV64_REG(3, 1),			 /* 2 */
	    JMP_IMM(EBPF_JGT, 2, 100, 2),	 /* 3 */
	    MOV64_REG(3, 10),			 /* 4 */
	    ALU64_IMM(EBPF_ADD, 3, -8 - T_COST), /* 5 */
	    LDX_MEM(EBPF_DW, 4, 3, T_COST),	 /* 6: the context or the stack */
	    RET0};
	if (verify(ctx_or_stack, INSN_CNT(ctx_or_stack)) == 0) {
		CHECK(offs[6] == EBPF_CTX_OFF_MIXED);
		CHECK(offs[7] == EBPF_CTX_OFF_NONE);
	}
}

static const struct ebpf_ctx_from_f32 *cells(void)
{
	return ncclbpf_tuner_cells();
}

/* A program that returns cell k read by an 8-byte load into register dst (through a pointer
 * moved by 16 when moved), converted. */
static struct ebpf_exec *converted(int k, int dst, int moved)
{
	struct ebpf_insn insns[5];
	uint32_t n = 0, load;
	if (moved) {
		insns[n++] = MOV64_REG(dst == 1 ? 2 : dst, 1);
		insns[n++] = ALU64_IMM(EBPF_ADD, dst == 1 ? 2 : dst, 16);
		load = n;
		insns[n++] = LDX_MEM(EBPF_DW, dst, dst == 1 ? 2 : dst, T_COST + 8 * k - 16);
	} else {
		load = n;
		insns[n++] = LDX_MEM(EBPF_DW, dst, 1, T_COST + 8 * k);
	}
	insns[n++] = MOV64_REG(0, dst);
	insns[n++] = EXIT();
	struct ebpf_exec_ctx_load l = {.insn = load, .ctx_off = T_COST + 8 * k};
	struct ebpf_exec_opts o = {
	    .sz = sizeof(o), .from_f32 = cells(), .f32_loads = &l, .n_f32_loads = 1};
	char err[160];
	struct ebpf_exec *p = ebpf_exec__new(insns, n, &o, err, sizeof(err));
	CHECKF(p != NULL, "%s", err);
	return p;
}

/* The reference, computed apart from the rule under test: NCCL's validity test, then v * 1000
 * rounded half up, exactly, from the float's bits in integers. */
static uint64_t expected(float v)
{
	if (!(v >= 0.0f && v < 3.6e9f))
		return NCCLBPF_COST_NA;
	uint32_t u;
	memcpy(&u, &v, sizeof(u));
	uint32_t ex = (u >> 23) & 0xff, man = u & 0x7fffff;
	unsigned __int128 p = (unsigned __int128)(ex ? (man | 0x800000u) : man) * 1000u;
	int e = ex ? (int)ex - 150 : -149; /* v * 1000 = p * 2^e */
	if (e >= 0)
		return (uint64_t)(p << e);
	int s = -e;
	if (s > 64) /* p < 2^34: below one half */
		return 0;
	return (uint64_t)(((p << 1) + ((unsigned __int128)1 << s)) >> (s + 1));
}

struct engines {
	struct ebpf_exec *p;
	int jit, keeping;
	float table[N_CELLS];
	struct run_ctx ctx;
	uint64_t mismatches;
};

/* v in cell k through every engine: interpreter, JIT, keeping call. */
static void one(struct engines *e, int k, float v)
{
	e->table[k] = v;
	uint64_t want = expected(v), c = ebpf_ctx_from_f32_value(cells(), v), ri = 0, rj = want,
		 rk = want;
	CHECK(ebpf_exec__run(e->p, EBPF_ENGINE_INTERP, (uint64_t)(uintptr_t)&e->ctx, 0, NULL,
			     &ri) == 0);
	if (e->jit)
		CHECK(ebpf_exec__run(e->p, EBPF_ENGINE_JIT, (uint64_t)(uintptr_t)&e->ctx, 0, NULL,
				     &rj) == 0);
#ifdef EBPF_JIT_HAVE_KEEPING_CALL
	int lost = -1;
	if (e->keeping)
		rk = call_keeping_checked(ebpf_exec__jit_fn(e->p), (uint64_t)(uintptr_t)&e->ctx, 0,
					  &lost);
	CHECKF(lost < 0, "keeping entry changed %s", lost >= 0 ? KEPT_NAMES[lost] : "");
#endif
	if (c != want || ri != want || rj != want || rk != want) {
		if (e->mismatches++ < 5)
			CHECKF(
			    0,
			    "v=%a (0x%08x): want %llu, C %llu, interp %llu, JIT %llu, keeping %llu",
			    (double)v,
			    (unsigned)((union {
				    float f;
				    uint32_t u;
			    }){v})
				.u,
			    (unsigned long long)want, (unsigned long long)c, (unsigned long long)ri,
			    (unsigned long long)rj, (unsigned long long)rk);
	}
}

static float bits(uint32_t u)
{
	union {
		uint32_t u;
		float f;
	} x = {u};
	return x.f;
}

static void check_values(void)
{
	static const float special[] = {0.0f,	 -0.0f,	  1e-45f,     -1e-45f,	 1e-3f,
					0.0005f, 0.0015f, 1.0f,	      12.345f,	 1e6f,
					3.6e9f,	 -1.0f,	  INFINITY,   -INFINITY, NAN,
					FLT_MAX, FLT_MIN, 2147483.5f, 1e9f,	 3.5999e9f};
	/* dst r0..r9 (every x86 register the JIT maps them to), direct and through a moved
	 * pointer, cells 0, 7 and 20 */
	for (int dst = 0; dst <= 9; dst++)
		for (int moved = 0; moved < 2; moved++) {
			int k = (dst * 7 + moved) % N_CELLS;
			struct engines e = {.p = converted(k, dst, moved)};
			if (!e.p)
				continue;
			e.ctx.cells = e.table;
			struct ebpf_jit_stats st;
			char err[160];
			e.jit = ebpf_exec__jit(e.p, &st, err, sizeof(err)) == 0;
			e.keeping = e.jit && st.keeps_regs;
			CHECKF(e.jit, "JIT: %s", err);
			CHECK(e.keeping); /* it calls nothing */
			for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
				one(&e, k, special[i]);
			for (int d = -4; d <= 4; d++) { /* both bounds' neighbours */
				one(&e, k, bits((uint32_t)(0x4f569c05 + d))); /* near 3.6e9f */
				one(&e, k, bits((uint32_t)(4 + d)));	      /* near +0 */
				one(&e, k, bits(0x80000000u + (uint32_t)(4 + d)));
			}
			/* a sweep over the bit patterns (every 2^32 / 65521th, shifted per
			 * register) */
			for (uint64_t u = (uint64_t)dst * 977 + (uint64_t)moved; u < (1ull << 32);
			     u += 65521)
				one(&e, k, bits((uint32_t)u));
			CHECKF(e.mismatches == 0, "dst r%d moved %d: %llu mismatches", dst, moved,
			       (unsigned long long)e.mismatches);
			ebpf_exec__free(e.p);
		}
}

/* The shapes of a converted read followed by a jump on it (the JIT's range test for "dst ==
 * none" / "dst != none" when dst is read nowhere else): r0 is 1 on the fall-through, 2 where the
 * jump lands (3 + the value when the target reads it). */
enum f32_jump_shape {
	F32J_DEAD,     /* dst dead after the jump: tested, not converted */
	F32J_LIVE,     /* the target reads dst: converted */
	F32J_TARGET,   /* the jump is also reached around the load: converted */
	F32J_IN_RANGE, /* `none` is a value in range (1 us): converted */
	F32J_JMP32,    /* a 32-bit compare: converted */
	/* ALU instructions between the load and the jump (o: another register, 2 where the jump
	 * lands, read there) */
	F32J_GAP1,     /* o = 2: tested, o set before the test */
	F32J_GAP2,     /* o = r1; o += 2 (one lea), the target r0 = o - r1: tested */
	F32J_GAP_READ, /* o = dst; the target reads o (+ 3): converted */
	F32J_GAP_SRC,  /* r1 += 8 (the load's base) then o = 2: converted, the first cell read */
	F32J_GAP3,     /* o = 0; o += 1; o += 1: more than JIT_F32_GAP_MAX, converted */
	F32J_N,
};

/* The register a gap shape sets: neither the context (r1) nor dst. */
static int gap_reg(int d)
{
	return d == 2 ? 3 : 2;
}

static struct ebpf_exec *jump_program(int shape, int op, int d, int k,
				      const struct ebpf_ctx_from_f32 *conv)
{
	struct ebpf_insn insns[20];
	uint32_t n = 0, load;
	int32_t none = shape == F32J_IN_RANGE ? 1000 : -1;
	if (shape == F32J_TARGET) {
		insns[n++] = MOV64_IMM(d, none);
		insns[n++] = LDX_MEM(EBPF_DW, 6, 1, 8);	   /* n_bytes */
		insns[n++] = JMP_IMM(EBPF_JGT, 6, 100, 1); /* around the load */
	}
	load = n;
	insns[n++] = LDX_MEM(EBPF_DW, d, 1, T_COST + 8 * k);
	int o = gap_reg(d);
	switch (shape) {
	case F32J_GAP1:
		insns[n++] = MOV64_IMM(o, 2);
		break;
	case F32J_GAP2:
		insns[n++] = MOV64_REG(o, 1);
		insns[n++] = ALU64_IMM(EBPF_ADD, o, 2);
		break;
	case F32J_GAP_READ:
		insns[n++] = MOV64_REG(o, d);
		break;
	case F32J_GAP_SRC:
		insns[n++] = ALU64_IMM(EBPF_ADD, 1, 8);
		insns[n++] = MOV64_IMM(o, 2);
		break;
	case F32J_GAP3:
		insns[n++] = MOV64_IMM(o, 0);
		insns[n++] = ALU64_IMM(EBPF_ADD, o, 1);
		insns[n++] = ALU64_IMM(EBPF_ADD, o, 1);
		break;
	}
	if (shape == F32J_JMP32)
		insns[n++] = INSN(EBPF_JMP32 | op | EBPF_K, d, 0, 2, none);
	else
		insns[n++] = JMP_IMM(op, d, none, 2);
	insns[n++] = MOV64_IMM(0, 1);
	insns[n++] = EXIT();
	if (shape == F32J_LIVE) {
		insns[n++] = MOV64_REG(0, d);
		insns[n++] = ALU64_IMM(EBPF_ADD, 0, 3);
	} else if (shape == F32J_GAP_READ) {
		insns[n++] = MOV64_REG(0, o);
		insns[n++] = ALU64_IMM(EBPF_ADD, 0, 3);
	} else if (shape == F32J_GAP2) {
		insns[n++] = MOV64_REG(0, o);
		insns[n++] = ALU64_REG(EBPF_SUB, 0, 1);
	} else if (shape >= F32J_GAP1) {
		insns[n++] = MOV64_REG(0, o);
	} else {
		insns[n++] = MOV64_IMM(0, 2);
	}
	insns[n++] = EXIT();
	struct ebpf_exec_ctx_load l = {.insn = load, .ctx_off = T_COST + 8 * k};
	struct ebpf_exec_opts opts = {
	    .sz = sizeof(opts), .from_f32 = conv, .f32_loads = &l, .n_f32_loads = 1};
	char err[160];
	struct ebpf_exec *p = ebpf_exec__new(insns, n, &opts, err, sizeof(err));
	CHECKF(p != NULL, "%s", err);
	return p;
}

/* What the program must return for v (the C rule decides the jump). */
static uint64_t jump_expected(int shape, int op, const struct ebpf_ctx_from_f32 *conv, float v,
			      uint64_t n_bytes)
{
	uint64_t x = ebpf_ctx_from_f32_value(conv, v), none = conv->none;
	if (shape == F32J_TARGET && n_bytes > 100)
		x = none;
	int taken = shape == F32J_JMP32 ? (uint32_t)x == (uint32_t)none : x == none;
	if (op == EBPF_JNE)
		taken = !taken;
	return !taken ? 1 : shape == F32J_LIVE || shape == F32J_GAP_READ ? x + 3 : 2;
}

/* A jump on a converted read: the JIT's range test (F32J_DEAD) and every shape it must not
 * take for one (it would jump wrongly there) decide as the interpreter and the C rule, for
 * every dst register, both jumps, the special values and a sweep; the test is what makes the
 * dead shape's code smaller. */
static void check_jumps(void)
{
	static const float special[] = {0.0f,	  -0.0f,     1e-45f, -1e-45f,	0.0005f,
					1.0f,	  1e6f,	     3.6e9f, 3.5999e9f, -1.0f,
					INFINITY, -INFINITY, NAN,    FLT_MAX,	1.0e-3f};
	struct ebpf_ctx_from_f32 in_range = *cells();
	in_range.none = 1000;
	/* The tuner's range [0.0, 3.6e9) is tested on the float's bits (jit_x86_64.c:
	 * f32_test_bits_hi); [1e-3, 3.6e9) and [-2.0, 3.6e9) take the float compares. */
	struct ebpf_ctx_from_f32 from_1ns = *cells(), from_neg = *cells();
	from_1ns.lo = 1e-3f;
	from_neg.lo = -2.0f;
	const struct ebpf_ctx_from_f32 *ranges[] = {cells(), &from_1ns, &from_neg};
	/* the bounds' bit neighbours: of 3.6e9, +0.0, -0.0, 1e-3 and -2.0 */
	uint32_t near[5 * 9];
	for (int k = 0; k < 9; k++) {
		near[k] = 0x4f5693a4u + (uint32_t)k - 4u;
		near[9 + k] = (uint32_t)k;
		near[18 + k] = 0x80000000u + (uint32_t)k;
		near[27 + k] = 0x3a83126fu + (uint32_t)k - 4u;
		near[36 + k] = 0xc0000000u + (uint32_t)k - 4u;
	}
	const uint64_t nn = sizeof(near) / sizeof(near[0]);
	uint64_t mismatches = 0;
	for (int shape = 0; shape < F32J_N; shape++)
		for (int eq = 0; eq < 4; eq++)
			for (int d = 0; d <= 9; d++) {
				if (shape == F32J_TARGET && (d == 1 || d == 6))
					continue; /* the context and n_bytes */
				if (shape == F32J_GAP_SRC && d == 1)
					continue; /* the load replaces its own base */
				/* eq: the jump (bit 0), the range (the others) */
				int op = eq & 1 ? EBPF_JEQ : EBPF_JNE,
				    k = (d * 5 + shape) % N_CELLS;
				const struct ebpf_ctx_from_f32 *conv =
				    shape == F32J_IN_RANGE ? &in_range
							   : ranges[(eq >> 1) + (d & 1)];
				struct ebpf_exec *p = jump_program(shape, op, d, k, conv);
				struct ebpf_jit_stats st;
				char err[160];
				if (!p)
					continue;
				CHECKF(ebpf_exec__jit(p, &st, err, sizeof(err)) == 0, "JIT: %s",
				       err);
				float table[N_CELLS] = {0};
				struct run_ctx c = {.cells = table};
				size_t ns = sizeof(special) / sizeof(float);
				/* the special values and the bounds' neighbours at both n_bytes,
				 * then a sweep over the bits */
				const uint64_t nf = 2 * (ns + nn);
				for (uint64_t s = 0; s < nf + 16384; s++) {
					uint32_t u = (uint32_t)((s - nf) * 262139u + (uint64_t)d);
					uint64_t f = s % (ns + nn);
					float v = s >= nf  ? bits(u)
						  : f < ns ? special[f]
							   : bits(near[f - ns]);
					c.x.n_bytes = (s < nf ? s < ns + nn : u & 1) ? 8 : 1000;
					table[k] = v;
					uint64_t want =
					    jump_expected(shape, op, conv, v, c.x.n_bytes);
					uint64_t ri = 0, rj = 0, rk = want;
					CHECK(ebpf_exec__run(p, EBPF_ENGINE_INTERP,
							     (uint64_t)(uintptr_t)&c, 0, NULL,
							     &ri) == 0);
					CHECK(ebpf_exec__run(p, EBPF_ENGINE_JIT,
							     (uint64_t)(uintptr_t)&c, 0, NULL,
							     &rj) == 0);
#ifdef EBPF_JIT_HAVE_KEEPING_CALL
					int lost = -1;
					rk =
					    call_keeping_checked(ebpf_exec__jit_fn(p),
								 (uint64_t)(uintptr_t)&c, 0, &lost);
					CHECKF(lost < 0, "keeping entry changed %s",
					       lost >= 0 ? KEPT_NAMES[lost] : "");
#endif
					if ((ri != want || rj != want || rk != want) &&
					    mismatches++ < 5)
						CHECKF(0,
						       "shape %d op %s r%d [%a, %a) v=%a n_bytes "
						       "%llu: want "
						       "%llu, interp %llu, JIT %llu, keeping %llu",
						       shape, eq & 1 ? "==" : "!=", d,
						       (double)conv->lo, (double)conv->hi,
						       (double)v, (unsigned long long)c.x.n_bytes,
						       (unsigned long long)want,
						       (unsigned long long)ri,
						       (unsigned long long)rj,
						       (unsigned long long)rk);
				}
				ebpf_exec__free(p);
			}
	CHECK_EQ_U64(mismatches, 0);
	/* The range test is shorter than the conversion and compare it replaces (the same program
	 * with a 32-bit compare is converted). */
	struct ebpf_exec *dead = jump_program(F32J_DEAD, EBPF_JEQ, 3, 4, cells());
	struct ebpf_exec *jmp32 = jump_program(F32J_JMP32, EBPF_JEQ, 3, 4, cells());
	struct ebpf_jit_stats sd = {0}, s32 = {0};
	char err[160];
	if (dead && jmp32 && ebpf_exec__jit(dead, &sd, err, sizeof(err)) == 0 &&
	    ebpf_exec__jit(jmp32, &s32, err, sizeof(err)) == 0)
		CHECKF(sd.code_size + 30 <= s32.code_size, "range test %u bytes, conversion %u",
		       sd.code_size, s32.code_size);
	ebpf_exec__free(dead);
	ebpf_exec__free(jmp32);
	/* ... with one or two ALU instructions between (a few bytes each), not with three */
	for (int shape = F32J_GAP1; shape <= F32J_GAP3; shape++) {
		if (shape == F32J_GAP_READ || shape == F32J_GAP_SRC)
			continue;
		struct ebpf_exec *g = jump_program(shape, EBPF_JNE, 3, 4, cells());
		struct ebpf_jit_stats sg = {0};
		if (!g || ebpf_exec__jit(g, &sg, err, sizeof(err)) != 0) {
			CHECKF(0, "shape %d: JIT: %s", shape, err);
			ebpf_exec__free(g);
			continue;
		}
		int tested = sg.code_size + 20 <= s32.code_size;
		CHECKF(tested == (shape != F32J_GAP3), "shape %d: %u bytes, conversion %u", shape,
		       sg.code_size, s32.code_size);
		ebpf_exec__free(g);
	}
}

/* What ebpf_exec__new refuses to convert: a narrower load, a load outside the field, an
 * element's middle, an index past the program, a conversion the JIT cannot do exactly. */
static void check_refusals(void)
{
	const struct ebpf_insn narrow[] = {LDX_MEM(EBPF_W, 0, 1, T_COST), EXIT()};
	const struct ebpf_insn dw[] = {LDX_MEM(EBPF_DW, 0, 1, T_COST), EXIT()};
	struct ebpf_exec_ctx_load l = {.insn = 0, .ctx_off = T_COST};
	struct ebpf_exec_opts o = {
	    .sz = sizeof(o), .from_f32 = cells(), .f32_loads = &l, .n_f32_loads = 1};
	char err[160];
	CHECK(ebpf_exec__new(narrow, 2, &o, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "insn 0") != NULL);
	l.ctx_off = T_COST - 8; /* before the field */
	CHECK(ebpf_exec__new(dw, 2, &o, err, sizeof(err)) == NULL);
	l.ctx_off = T_COST + 8 * N_CELLS; /* after it */
	CHECK(ebpf_exec__new(dw, 2, &o, err, sizeof(err)) == NULL);
	l.ctx_off = T_COST + 4;
	CHECK(ebpf_exec__new(dw, 2, &o, err, sizeof(err)) == NULL);
	l = (struct ebpf_exec_ctx_load){.insn = 2, .ctx_off = T_COST};
	CHECK(ebpf_exec__new(dw, 2, &o, err, sizeof(err)) == NULL);
	struct ebpf_ctx_from_f32 huge = *cells();
	huge.scale = 1e10; /* 3.6e9 * 1e10 is past 2^62 */
	l.insn = 0;
	o.from_f32 = &huge;
	CHECK(ebpf_exec__new(dw, 2, &o, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "conversion") != NULL);
	/* The same load without a conversion is plain memory. */
	o.n_f32_loads = 0;
	struct ebpf_exec *p = ebpf_exec__new(dw, 2, &o, err, sizeof(err));
	CHECK(p != NULL);
	struct run_ctx c = {.x = {.cost_ns = {{77}}}};
	uint64_t r0 = 0;
	CHECK(p &&
	      ebpf_exec__run(p, EBPF_ENGINE_INTERP, (uint64_t)(uintptr_t)&c, 0, NULL, &r0) == 0);
	CHECK_EQ_U64(r0, 77);
	ebpf_exec__free(p);
}

int main(void)
{
	check_offsets();
	check_values();
	check_jumps();
	check_refusals();
	return check_summary("test_ctx_convert");
}
