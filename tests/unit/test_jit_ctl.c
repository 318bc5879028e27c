/* JIT control flow and runtime contract: conditional jumps (64/32-bit, register/immediate,
 * signed/unsigned edges), rel8/rel32 jump selection around the boundary, ja32, helper calls
 * (arguments, r6-r9 preserved, 16-byte stack alignment, near and absolute calls), bpf-to-bpf
 * calls (frames, recursion to exactly EBPF_MAX_FRAMES, defined fault beyond), inlined ARRAY
 * lookups against the helper, W^X code pages, statistics and engine selection. */
#include <stdint.h>

#include "jit_util.h"
#include "ebpf/helpers.h"
#include "ebpf/maps.h"

/* --- Conditional jumps ------------------------------------------------------------------------ */

static int ref_jcc(uint8_t op, int w64, uint64_t a, uint64_t b)
{
	if (!w64) {
		uint32_t x = (uint32_t)a, y = (uint32_t)b;

		switch (op) {
		case EBPF_JEQ:
			return x == y;
		case EBPF_JNE:
			return x != y;
		case EBPF_JGT:
			return x > y;
		case EBPF_JGE:
			return x >= y;
		case EBPF_JLT:
			return x < y;
		case EBPF_JLE:
			return x <= y;
		case EBPF_JSET:
			return (x & y) != 0;
		case EBPF_JSGT:
			return (int32_t)x > (int32_t)y;
		case EBPF_JSGE:
			return (int32_t)x >= (int32_t)y;
		case EBPF_JSLT:
			return (int32_t)x < (int32_t)y;
		case EBPF_JSLE:
			return (int32_t)x <= (int32_t)y;
		}
		return -1;
	}
	switch (op) {
	case EBPF_JEQ:
		return a == b;
	case EBPF_JNE:
		return a != b;
	case EBPF_JGT:
		return a > b;
	case EBPF_JGE:
		return a >= b;
	case EBPF_JLT:
		return a < b;
	case EBPF_JLE:
		return a <= b;
	case EBPF_JSET:
		return (a & b) != 0;
	case EBPF_JSGT:
		return (int64_t)a > (int64_t)b;
	case EBPF_JSGE:
		return (int64_t)a >= (int64_t)b;
	case EBPF_JSLT:
		return (int64_t)a < (int64_t)b;
	case EBPF_JSLE:
		return (int64_t)a <= (int64_t)b;
	}
	return -1;
}

static void test_jcc(void)
{
	static const uint8_t jops[] = {EBPF_JEQ,  EBPF_JNE,  EBPF_JGT,	EBPF_JGE,
				       EBPF_JLT,  EBPF_JLE,  EBPF_JSET, EBPF_JSGT,
				       EBPF_JSGE, EBPF_JSLT, EBPF_JSLE};
	static const uint64_t vals[][2] = {
	    {0, 0},
	    {1, 2},
	    {2, 1},
	    {~0ull, 1},
	    {1, ~0ull},
	    {0x8000000000000000ull, 0x7fffffffffffffffull},
	    {0x100000000ull, 1},
	    {0xffffffffull, 0x7fffffffull},
	    {0x80000000ull, 0},
	    {0x1234567800000000ull, 0x1234567800000000ull},
	};
	static const int regs[][2] = {{0, 1}, {1, 0}, {3, 4}, {4, 3}, {6, 9}, {9, 5}, {7, 8}};

	for (size_t o = 0; o < sizeof(jops); o++)
		for (int w64 = 0; w64 < 2; w64++)
			for (int x = 0; x < 2; x++)
				for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++)
					for (size_t rr = 0; rr < sizeof(regs) / sizeof(regs[0]);
					     rr++) {
						int d = regs[rr][0], s = regs[rr][1];
						uint64_t a = vals[v][0], b = vals[v][1];
						int32_t imm = (int32_t)b;
						uint8_t cls = w64 ? EBPF_JMP : EBPF_JMP32;
						struct ebpf_insn p[] = {
						    LD_IMM64(d, a),
						    LD_IMM64(s, b),
						    INSN(cls | jops[o] | (x ? EBPF_X : EBPF_K), d,
							 x ? s : 0, 2, x ? 0 : imm),
						    MOV64_IMM(0, 0),
						    EXIT(),
						    MOV64_IMM(0, 1),
						    EXIT(),
						};
						uint64_t bb = x ? b
								: (w64 ? (uint64_t)(int64_t)imm
								       : (uint32_t)imm);

						CHECK_EQ_U64(
						    jit_eval(p, INSN_CNT(p), 0, 0),
						    (uint64_t)ref_jcc(jops[o], w64, a, bb));
						/* the same over a ja / ja32 (the JIT folds the pair
						 * into one negated jump) */
						for (int j32 = 0; j32 < 2; j32++) {
							struct ebpf_insn q[] = {
							    LD_IMM64(d, a),
							    LD_IMM64(s, b),
							    INSN(cls | jops[o] |
								     (x ? EBPF_X : EBPF_K),
								 d, x ? s : 0, 1, x ? 0 : imm),
							    j32 ? JA32(2) : JA(2),
							    MOV64_IMM(0, 1),
							    EXIT(),
							    MOV64_IMM(0, 0),
							    EXIT(),
							};

							CHECK_EQ_U64(
							    jit_eval(q, INSN_CNT(q), 0, 0),
							    (uint64_t)ref_jcc(jops[o], w64, a, bb));
						}
					}
}

/* Jumps around the rel8/rel32 boundary in both directions: a loop whose body grows by one
 * 4-byte instruction per step, and a forward skip over the same padding. */
static void test_jump_sizes(void)
{
	for (int pad = 0; pad < 80; pad++) {
		struct ebpf_insn p[300];
		uint32_t n = 0;

		p[n++] = MOV64_IMM(0, 0);
		p[n++] = MOV64_IMM(1, 10);
		p[n++] = MOV64_IMM(2, 0);
		/* loop: */
		for (int k = 0; k < pad; k++)
			p[n++] = ALU64_IMM(EBPF_ADD, 2, 1);
		p[n++] = ALU64_REG(EBPF_ADD, 0, 1);
		p[n++] = ALU64_IMM(EBPF_SUB, 1, 1);
		p[n++] = JMP_IMM(EBPF_JNE, 1, 0, -(pad + 3));
		/* skip forward over pad instructions with ja and with ja32 */
		p[n++] = JA(pad + 1);
		p[n++] = MOV64_IMM(0, 0xbad);
		for (int k = 0; k < pad; k++)
			p[n++] = ALU64_IMM(EBPF_ADD, 0, 1000);
		p[n++] = JA32(pad);
		for (int k = 0; k < pad; k++)
			p[n++] = ALU64_IMM(EBPF_ADD, 0, 1000);
		p[n++] = ALU64_REG(EBPF_ADD, 0, 2);
		p[n++] = EXIT();
		CHECK_EQ_U64(jit_eval(p, n, 0, 0), 55 + 10 * (uint64_t)pad);
	}
}

/* --- Helper calls ----------------------------------------------------------------------------- */

static int misaligned_calls;

static uint64_t helper_mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	/* With a frame pointer, rbp = entry rsp - 8, which is 16-aligned iff the caller's rsp was
	 * 16-aligned at the call, as the SysV ABI demands. */
	if ((uintptr_t)__builtin_frame_address(0) & 15)
		misaligned_calls++;
	return a * 1 + b * 3 + c * 5 + d * 7 + e * 11;
}

static const struct ebpf_helper_proto mix_proto = {
    .id = 100,
    .name = "mix",
    .fn = helper_mix,
    .ret = EBPF_RET_INTEGER,
    .args = {EBPF_ARG_ANYTHING, EBPF_ARG_ANYTHING, EBPF_ARG_ANYTHING, EBPF_ARG_ANYTHING,
	     EBPF_ARG_ANYTHING},
};

static void test_helpers(void)
{
	static struct ebpf_helper_table tab;
	struct ebpf_exec_opts po = {.sz = sizeof(po), .helpers = &tab};

	tab.by_id[100] = &mix_proto;
	/* every combination of callee-saved registers and stack use changes the frame padding */
	for (int mask = 0; mask < 32; mask++)
		for (int far = 0; far < 2; far++) {
			struct ebpf_insn p[64];
			uint32_t n = 0;
			uint64_t want = 0;

			for (int r = 6; r < 10; r++)
				if (mask & (1 << (r - 6)))
					p[n++] = MOV64_IMM(r, r * 1000);
			if (mask & 16)
				p[n++] = ST_MEM(EBPF_DW, 10, -8, 77);
			for (int r = 1; r <= 5; r++)
				p[n++] = MOV64_IMM(r, r);
			p[n++] = CALL_HELPER(100);
			want = 1 + 6 + 15 + 28 + 55;
			for (int r = 6; r < 10; r++)
				if (mask & (1 << (r - 6))) {
					p[n++] = ALU64_REG(EBPF_ADD, 0, r);
					want += (uint64_t)r * 1000;
				}
			if (mask & 16) {
				p[n++] = LDX_MEM(EBPF_DW, 1, 10, -8);
				p[n++] = ALU64_REG(EBPF_ADD, 0, 1);
				want += 77;
			}
			/* a second call whose arguments come from the first result */
			p[n++] = MOV64_REG(1, 0);
			p[n++] = MOV64_IMM(2, 0);
			p[n++] = MOV64_IMM(3, 0);
			p[n++] = MOV64_IMM(4, 0);
			p[n++] = MOV64_IMM(5, 1);
			p[n++] = CALL_HELPER(100);
			want += 11;
			p[n++] = EXIT();
			CHECK_EQ_U64(jit_eval_opts(p, n, &po, far ? EBPF_JIT_F_FAR_CALLS : 0, 0, 0),
				     want);
		}
	CHECK(misaligned_calls == 0);
}

/* --- bpf-to-bpf calls ------------------------------------------------------------------------- */

static void test_local_calls(void)
{
	static struct ebpf_helper_table tab;
	struct ebpf_exec_opts po = {.sz = sizeof(po), .helpers = &tab};

	tab.by_id[100] = &mix_proto;
	/* main keeps r6-r9 and its stack across a call to a function that clobbers its own r6-r9
	 * and stack, reads the caller's stack through a pointer, and calls a helper */
	{
		struct ebpf_insn p[] = {
		    MOV64_IMM(6, 6),
		    MOV64_IMM(7, 7),
		    MOV64_IMM(8, 8),
		    MOV64_IMM(9, 9),
		    ST_MEM(EBPF_DW, 10, -8, 1000),
		    MOV64_REG(1, 10),
		    ALU64_IMM(EBPF_ADD, 1, -8),
		    CALL_LOCAL(8),
		    /* r0 = f(&x) + r6 + r7 + r8 + r9 + x */
		    ALU64_REG(EBPF_ADD, 0, 6),
		    ALU64_REG(EBPF_ADD, 0, 7),
		    ALU64_REG(EBPF_ADD, 0, 8),
		    ALU64_REG(EBPF_ADD, 0, 9),
		    LDX_MEM(EBPF_DW, 1, 10, -8),
		    ALU64_REG(EBPF_ADD, 0, 1),
		    EXIT(),
		    EXIT(), /* padding: never reached */
		    /* f(p): clobbers r6-r9 and its own stack, returns *p * 2 + mix(1,0,0,0,0) */
		    MOV64_IMM(6, -1),
		    MOV64_IMM(7, -1),
		    MOV64_IMM(8, -1),
		    MOV64_IMM(9, -1),
		    ST_MEM(EBPF_DW, 10, -8, -1),
		    LDX_MEM(EBPF_DW, 6, 1, 0),
		    ALU64_IMM(EBPF_LSH, 6, 1),
		    MOV64_IMM(1, 1),
		    MOV64_IMM(2, 0),
		    MOV64_IMM(3, 0),
		    MOV64_IMM(4, 0),
		    MOV64_IMM(5, 0),
		    CALL_HELPER(100),
		    ALU64_REG(EBPF_ADD, 0, 6),
		    EXIT(),
		};
		/* CALL_LOCAL(8) at index 7 targets 7 + 1 + 8 = 16 */
		CHECK_EQ_U64(jit_eval_opts(p, INSN_CNT(p), &po, 0, 0, 0),
			     2000 + 1 + 6 + 7 + 8 + 9 + 1000);
	}
	/* recursion: f(n) = n ? f(n - 1) + 1 : 0, called as f(k) from main: k + 2 frames */
	for (int k = 0; k <= 8; k++) {
		struct ebpf_insn p[] = {
		    MOV64_IMM(1, k),
		    CALL_LOCAL(1),
		    EXIT(),
		    /* f: */
		    JMP_IMM(EBPF_JNE, 1, 0, 2),
		    MOV64_IMM(0, 0),
		    EXIT(),
		    ALU64_IMM(EBPF_SUB, 1, 1),
		    CALL_LOCAL(-5),
		    ALU64_IMM(EBPF_ADD, 0, 1),
		    EXIT(),
		};
		struct jit_run jr = {0};
		struct ebpf_exec *prog = jit_build(p, INSN_CNT(p), NULL, 0, &jr);
		int ret;
		uint64_t r0;

		if (!prog)
			continue;
		CHECK(jr.compile_ret == 0);
		r0 = jit_run_prog(prog, 0, 0, &ret);
		if (k + 2 <= EBPF_MAX_FRAMES) {
			CHECK(ret == 0);
			CHECK_EQ_U64(r0, (uint64_t)k);
			CHECK(ebpf_exec__jit_faults(prog) == 0);
		} else {
			CHECK(ret == -EFAULT);
			CHECK_EQ_U64(r0, EBPF_JIT_FAULT_R0);
			CHECK(ebpf_exec__jit_faults(prog) == 1);
			/* the direct entry point returns the same defined value, and the process
			 * (callee-saved registers, stack) is intact afterwards */
			CHECK_EQ_U64(ebpf_exec__jit_fn(prog)(0, 0), EBPF_JIT_FAULT_R0);
			CHECK(ebpf_exec__jit_faults(prog) == 2);
		}
		if (!jit_util_interp_missing) {
			uint64_t ri = 0;
			struct ebpf_fault f;
			struct ebpf_run_opts ro = {.sz = sizeof(ro), .fault = &f};
			int iret = ebpf_interp__run(prog, 0, 0, &ro, &ri);

			if (iret != -ENOSYS) {
				CHECK(iret == ret);
				if (!iret)
					CHECK_EQ_U64(ri, r0);
				else
					CHECK(f.kind == EBPF_FAULT_CALL_DEPTH);
			}
		}
		ebpf_exec__free(prog);
	}
}

/* --- Inlined array lookups -------------------------------------------------------------------- */

static void test_array_inline(void)
{
	static const uint32_t vsizes[] = {1, 4, 12, 64};
	char err[128];

	for (size_t v = 0; v < sizeof(vsizes) / sizeof(vsizes[0]); v++)
		for (int type = 0; type < 2; type++) {
			struct ebpf_map_def def = {
			    .sz = sizeof(def),
			    .name = "m",
			    .type = type ? EBPF_MAP_TYPE_HASH : EBPF_MAP_TYPE_ARRAY,
			    .key_size = 4,
			    .value_size = vsizes[v],
			    .max_entries = 10,
			};
			struct ebpf_map *m = ebpf_map__create(&def, err, sizeof(err));
			struct ebpf_map *maps[1] = {m};
			struct ebpf_exec_opts po = {.sz = sizeof(po),
						    .helpers = ebpf_helpers_default(),
						    .maps = maps,
						    .n_maps = 1};

			CHECK(m != NULL);
			if (!m)
				continue;
			for (uint32_t k = 0; k < 10; k++) {
				uint8_t val[64];

				memset(val, (int)(k * 7 + 1), sizeof(val));
				CHECK(ebpf_map__update_elem(m, &k, val, EBPF_ANY) == 0);
			}
			/* r0 = lookup(key = r1) ? *(u8 *)value + 1000 (and bump it) : 5 */
			for (int noinl = 0; noinl < 2; noinl++) {
				struct ebpf_insn p[] = {
				    STX_MEM(EBPF_W, 10, 1, -4),
				    LD_MAP_FD(1, 0),
				    MOV64_REG(2, 10),
				    ALU64_IMM(EBPF_ADD, 2, -4),
				    CALL_HELPER(EBPF_FUNC_map_lookup_elem),
				    JMP_IMM(EBPF_JNE, 0, 0, 2),
				    MOV64_IMM(0, 5),
				    EXIT(),
				    LDX_MEM(EBPF_B, 1, 0, 0),
				    ALU64_IMM(EBPF_ADD, 1, 1),
				    STX_MEM(EBPF_B, 0, 1, 0),
				    MOV64_REG(0, 1),
				    ALU64_IMM(EBPF_ADD, 0, 999),
				    EXIT(),
				};
				static const uint64_t keys[] = {
				    0, 3, 9, 10, 11, 0xffffffffull, 0x100000001ull};
				struct jit_run jr = {0};
				struct ebpf_exec *prog = jit_build(
				    p, INSN_CNT(p), &po, noinl ? EBPF_JIT_F_NO_INLINE : 0, &jr);

				if (!prog)
					continue;
				CHECK(jr.compile_ret == 0);
				CHECK(jr.stats.n_inlined == (uint32_t)(!type && !noinl));
				for (size_t ki = 0; ki < sizeof(keys) / sizeof(keys[0]); ki++) {
					uint32_t k32 = (uint32_t)keys[ki];
					uint8_t before = 0;
					uint8_t *pv = ebpf_map__lookup_elem(m, &k32);
					int ret;
					uint64_t r0;

					if (pv)
						before = *pv;
					r0 = jit_run_prog(prog, keys[ki], 0, &ret);
					CHECK(ret == 0);
					if (k32 >= 10) {
						CHECK_EQ_U64(r0, 5); /* beyond the end / absent */
					} else {
						CHECK_EQ_U64(r0,
							     (uint64_t)(uint8_t)(before + 1) + 999);
						CHECK(*pv == (uint8_t)(before + 1));
					}
				}
				ebpf_exec__free(prog);
			}
			ebpf_map__free(m);
		}
	/* r1 not provably constant at the call (two paths): not inlined, still correct */
	{
		struct ebpf_map_def def = {.sz = sizeof(def),
					   .name = "a",
					   .type = EBPF_MAP_TYPE_ARRAY,
					   .key_size = 4,
					   .value_size = 8,
					   .max_entries = 4};
		struct ebpf_map *m = ebpf_map__create(&def, err, sizeof(err));
		struct ebpf_map *maps[2] = {m, m};
		struct ebpf_exec_opts po = {
		    .sz = sizeof(po), .helpers = ebpf_helpers_default(), .maps = maps, .n_maps = 2};
		struct ebpf_insn p[] = {
		    ST_MEM(EBPF_W, 10, -4, 2),
		    LD_MAP_FD(1, 0),
		    JMP_IMM(EBPF_JEQ, 2, 0, 2),
		    LD_MAP_FD(1, 1),
		    MOV64_REG(2, 10),
		    ALU64_IMM(EBPF_ADD, 2, -4),
		    CALL_HELPER(EBPF_FUNC_map_lookup_elem),
		    JMP_IMM(EBPF_JNE, 0, 0, 1),
		    EXIT(),
		    MOV64_IMM(0, 42),
		    EXIT(),
		};
		struct jit_run jr = {0};
		struct ebpf_exec *prog = jit_build(p, INSN_CNT(p), &po, 0, &jr);
		int ret;

		if (prog) {
			CHECK(jr.compile_ret == 0);
			CHECK(jr.stats.n_inlined == 0);
			CHECK_EQ_U64(jit_run_prog(prog, 0, 0, &ret), 42);
			CHECK_EQ_U64(jit_run_prog(prog, 0, 1, &ret), 42);
			ebpf_exec__free(prog);
		}
		ebpf_map__free(m);
	}
}

/* --- Contract: W^X, statistics, engines, rejected layouts ------------------------------------ */

static void mapping_perms(uintptr_t addr, char perms[5])
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	strcpy(perms, "????");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char pr[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, pr) == 3 && addr >= lo && addr < hi) {
			memcpy(perms, pr, 5);
			break;
		}
	}
	fclose(f);
}

static void test_contract(void)
{
	struct ebpf_insn noop[] = {MOV64_IMM(0, 0), EXIT()};
	struct jit_run jr = {0};
	struct ebpf_exec *p = jit_build(noop, INSN_CNT(noop), NULL, 0, &jr);
	char perms[5];
	uint64_t r0 = 1;
	struct ebpf_run_opts checked = {.sz = sizeof(checked), .checked = 1};

	if (!p)
		return;
	CHECK(jr.compile_ret == 0);
	CHECK(jr.stats.code_size == 3); /* xor eax, eax; ret: no prologue at all */
	CHECK(jr.stats.compile_ns > 0);
	CHECK(ebpf_exec__jit_fn(p) != NULL);
	CHECK_EQ_U64(ebpf_exec__jit_fn(p)(1, 2), 0);
	mapping_perms((uintptr_t)ebpf_exec__jit_fn(p), perms);
	CHECK(strcmp(perms, "r-xp") == 0);
	CHECK(ebpf_exec__run(p, EBPF_ENGINE_JIT, 0, 0, &checked, &r0) == -EOPNOTSUPP);
	CHECK(ebpf_exec__run(p, EBPF_ENGINE_DEFAULT, 0, 0, NULL, &r0) == 0 && r0 == 0);
	/* compiling again is a no-op that reports the same statistics */
	{
		struct ebpf_jit_stats s2;

		CHECK(ebpf_exec__jit(p, &s2, NULL, 0) == 0);
		CHECK(s2.code_size == jr.stats.code_size);
	}
	ebpf_exec__free(p);

	/* not compiled: the JIT engine refuses, the default engine would interpret */
	p = ebpf_exec__new(noop, INSN_CNT(noop), NULL, NULL, 0);
	CHECK(p != NULL);
	if (p) {
		CHECK(ebpf_exec__jit_fn(p) == NULL);
		CHECK(ebpf_exec__run(p, EBPF_ENGINE_JIT, 0, 0, NULL, &r0) == -ENOEXEC);
		ebpf_exec__free(p);
	}

	/* registers read before any write start at 0, as in the interpreter (only unverified code
	 * can do this); a program that writes first pays nothing */
	for (int r = 0; r < 10; r++) {
		if (r == 1 || r == 2)
			continue;
		struct ebpf_insn q[] = {
		    JMP_IMM(EBPF_JEQ, 1, 7, 1),
		    MOV64_IMM(r, 5),
		    ALU64_IMM(EBPF_ADD, r, 1),
		    MOV64_REG(0, r),
		    EXIT(),
		};

		CHECK_EQ_U64(jit_eval(q, INSN_CNT(q), 7, 0), 1);
		CHECK_EQ_U64(jit_eval(q, INSN_CNT(q), 8, 0), 6);
	}

	/* a jump from one function into another is refused (the interpreter remains) */
	{
		struct ebpf_insn bad[] = {
		    CALL_LOCAL(2), JA(2), EXIT(), MOV64_IMM(0, 1), EXIT(),
		};
		char err[128] = "";

		p = ebpf_exec__new(bad, INSN_CNT(bad), NULL, err, sizeof(err));
		if (p) {
			CHECK(ebpf_exec__jit(p, NULL, err, sizeof(err)) == -EINVAL);
			CHECK(strstr(err, "leaves its function") != NULL);
			ebpf_exec__free(p);
		}
	}

	/* the entry calling itself is refused, not compiled into a native stack overflow; the
	 * interpreter stops it at the frame limit */
	{
		struct ebpf_insn self[] = {CALL_LOCAL(-1), EXIT()};
		char err[160] = "";
		uint64_t ret = 0;

		p = ebpf_exec__new(self, INSN_CNT(self), NULL, err, sizeof(err));
		CHECK(p != NULL);
		if (p) {
			CHECK(ebpf_exec__jit(p, NULL, err, sizeof(err)) == -EOPNOTSUPP);
			CHECK(strstr(err, "entry function") != NULL);
			CHECK(ebpf_exec__jit_fn(p) == NULL);
			CHECK(ebpf_interp__run(p, 0, 0, NULL, &ret) == -EFAULT);
			ebpf_exec__free(p);
		}
	}
}

int main(void)
{
	CHECK(ebpf_jit_available());
	test_contract();
	test_jcc();
	test_jump_sizes();
	test_helpers();
	test_local_calls();
	test_array_inline();
	return check_summary("test_jit_ctl");
}
