/* The bounds-checking interpreter: accesses that must trap (stack out of bounds, uninitialised
 * stack, just outside a region, read-only region, helper memory past its size or after it was
 * handed back, dangling callee stack) and the legitimate ones next to them that must not. */
#include <stdint.h>

#include "interp_harness.h"

/* Regions with gaps between them, so "just outside" is outside every region. */
static uint8_t arena[96];
#define ctx	    (arena + 16) /* read-write region, 16 bytes */
#define rodata	    (arena + 48) /* read-only region, 16 bytes */
#define REGION_SIZE 16
static uint8_t helper_mem[64]; /* what the "reserve" helper hands out */

static struct ebpf_region regions[2];
static struct ebpf_helper_table table;

static uint64_t h_reserve(uint64_t map, uint64_t size, uint64_t c, uint64_t d, uint64_t e)
{
	return size <= sizeof(helper_mem) ? (uint64_t)(uintptr_t)helper_mem : 0;
}
static uint64_t h_submit(uint64_t rec, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return 0;
}
static uint64_t h_sum(uint64_t ptr, uint64_t size, uint64_t c, uint64_t d, uint64_t e)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)ptr;
	uint64_t s = 0;
	while (size--)
		s += *p++;
	return s;
}

static const struct ebpf_helper_proto p_reserve = {.id = 131,
						   .name = "reserve",
						   .fn = h_reserve,
						   .ret = EBPF_RET_ALLOC_MEM_OR_NULL,
						   .args = {EBPF_ARG_ANYTHING, EBPF_ARG_ANYTHING}};
static const struct ebpf_helper_proto p_submit = {
    .id = 132,
    .name = "submit",
    .fn = h_submit,
    .ret = EBPF_RET_VOID,
    .args = {EBPF_ARG_PTR_TO_ALLOC_MEM, EBPF_ARG_ANYTHING}};
static const struct ebpf_helper_proto p_sum = {.id = 150,
					       .name = "sum",
					       .fn = h_sum,
					       .ret = EBPF_RET_INTEGER,
					       .args = {EBPF_ARG_PTR_TO_MEM, EBPF_ARG_CONST_SIZE}};

static struct harness_env env(void)
{
	return (struct harness_env){.helpers = &table, .regions = regions, .n_regions = 2};
}

#define CTX ((uint64_t)(uintptr_t)ctx)
#define RO  ((uint64_t)(uintptr_t)rodata)

#define TRAP(what, kind, r1, ...)                                                                  \
	do {                                                                                       \
		struct ebpf_insn _p[] = {__VA_ARGS__};                                             \
		struct harness_env _e = env();                                                     \
		harness_expect_fault(what, _p, INSN_CNT(_p), r1, RO, &_e, 1, kind);                \
	} while (0)
#define OK(what, want, r1, ...)                                                                    \
	do {                                                                                       \
		struct ebpf_insn _p[] = {__VA_ARGS__};                                             \
		struct harness_env _e = env();                                                     \
		CHECK_EQ_U64(harness_run(what, _p, INSN_CNT(_p), r1, RO, &_e), want);              \
	} while (0)

static void test_stack(void)
{
	OK("stack bottom and top", 3, 0, ST_MEM(EBPF_DW, 10, -512, 1), ST_MEM(EBPF_B, 10, -1, 2),
	   LDX_MEM(EBPF_DW, 0, 10, -512), LDX_MEM(EBPF_B, 1, 10, -1), ALU64_REG(EBPF_ADD, 0, 1),
	   EXIT());
	TRAP("write below frame", EBPF_FAULT_OUT_OF_BOUNDS, 0, ST_MEM(EBPF_DW, 10, -520, 1),
	     MOV64_IMM(0, 0), EXIT());
	TRAP("write straddles frame bottom", EBPF_FAULT_OUT_OF_BOUNDS, 0,
	     ST_MEM(EBPF_DW, 10, -516, 1), MOV64_IMM(0, 0), EXIT());
	TRAP("read above fp", EBPF_FAULT_OUT_OF_BOUNDS, 0, LDX_MEM(EBPF_DW, 0, 10, 0), EXIT());
	TRAP("write straddles fp", EBPF_FAULT_OUT_OF_BOUNDS, 0, ST_MEM(EBPF_DW, 10, -4, 1),
	     MOV64_IMM(0, 0), EXIT());
	TRAP("uninitialised read", EBPF_FAULT_UNINIT_STACK, 0, LDX_MEM(EBPF_DW, 0, 10, -8), EXIT());
	TRAP("partly initialised read", EBPF_FAULT_UNINIT_STACK, 0, ST_MEM(EBPF_W, 10, -8, 1),
	     LDX_MEM(EBPF_DW, 0, 10, -8), EXIT());
	TRAP("atomic on uninitialised", EBPF_FAULT_UNINIT_STACK, 0, MOV64_IMM(1, 1),
	     ATOMIC_OP(EBPF_DW, EBPF_ATOMIC_ADD, 10, 1, -8), MOV64_IMM(0, 0), EXIT());
	OK("atomic on initialised", 5, 0, ST_MEM(EBPF_DW, 10, -8, 4), MOV64_IMM(1, 1),
	   ATOMIC_OP(EBPF_DW, EBPF_ATOMIC_ADD, 10, 1, -8), LDX_MEM(EBPF_DW, 0, 10, -8), EXIT());
	/* A fresh frame starts uninitialised even where an earlier call wrote. */
	TRAP("stale callee frame", EBPF_FAULT_UNINIT_STACK, 0, MOV64_IMM(1, 1), CALL_LOCAL(3),
	     MOV64_IMM(1, 0), CALL_LOCAL(1), EXIT(),
	     /* f: r1 != 0 -> write fp-8; always read fp-8 */
	     JMP_IMM(EBPF_JEQ, 1, 0, 1), ST_MEM(EBPF_DW, 10, -8, 9), LDX_MEM(EBPF_DW, 0, 10, -8),
	     EXIT());
	/* Callee may use the caller's initialised stack, not its uninitialised bytes. */
	OK("callee reads caller stack", 9, 0, ST_MEM(EBPF_DW, 10, -8, 9), MOV64_REG(1, 10),
	   CALL_LOCAL(1), EXIT(), LDX_MEM(EBPF_DW, 0, 1, -8), EXIT());
	TRAP("callee reads caller uninit", EBPF_FAULT_UNINIT_STACK, 0, MOV64_REG(1, 10),
	     CALL_LOCAL(1), EXIT(), LDX_MEM(EBPF_DW, 0, 1, -16), EXIT());
	/* After return, the callee's frame is gone. */
	TRAP("dangling callee stack", EBPF_FAULT_OUT_OF_BOUNDS, 0, CALL_LOCAL(2),
	     LDX_MEM(EBPF_DW, 0, 0, 0), EXIT(), ST_MEM(EBPF_DW, 10, -8, 1), MOV64_REG(0, 10),
	     ALU64_IMM(EBPF_ADD, 0, -8), EXIT());
}

/* Registers: entry has r1, r2, r10; helper calls clobber r1-r5; a callee starts without r0
 * and r6-r9 and its caller gets r6-r9 back afterwards. */
static void test_registers(void)
{
	TRAP("r0 at exit", EBPF_FAULT_UNINIT_REG, 0, EXIT());
	TRAP("r3 at entry", EBPF_FAULT_UNINIT_REG, 0, MOV64_REG(0, 3), EXIT());
	TRAP("alu dst", EBPF_FAULT_UNINIT_REG, 0, ALU64_IMM(EBPF_ADD, 0, 1), EXIT());
	TRAP("alu32 src", EBPF_FAULT_UNINIT_REG, 0, MOV64_IMM(0, 0), ALU32_REG(EBPF_ADD, 0, 4),
	     EXIT());
	TRAP("jmp src", EBPF_FAULT_UNINIT_REG, 0, MOV64_IMM(0, 0), JMP_REG(EBPF_JEQ, 0, 5, 0),
	     EXIT());
	TRAP("store src", EBPF_FAULT_UNINIT_REG, 0, STX_MEM(EBPF_DW, 10, 6, -8), MOV64_IMM(0, 0),
	     EXIT());
	TRAP("load base", EBPF_FAULT_UNINIT_REG, 0, LDX_MEM(EBPF_DW, 0, 7, 0), EXIT());
	TRAP("cmpxchg r0", EBPF_FAULT_UNINIT_REG, 0, ST_MEM(EBPF_DW, 10, -8, 0), MOV64_IMM(1, 1),
	     ATOMIC_OP(EBPF_DW, EBPF_CMPXCHG, 10, 1, -8), EXIT());
	TRAP("helper arg", EBPF_FAULT_UNINIT_REG, 0, MOV64_IMM(1, 0), MOV64_IMM(2, 16),
	     CALL_HELPER(131), MOV64_IMM(1, 0), CALL_HELPER(131), EXIT());
	TRAP("r1 after helper", EBPF_FAULT_UNINIT_REG, 0, MOV64_REG(1, 10), MOV64_IMM(2, 0),
	     CALL_HELPER(150), MOV64_REG(0, 1), EXIT());
	TRAP("void helper r0", EBPF_FAULT_UNINIT_REG, 0, MOV64_IMM(1, 0), MOV64_IMM(2, 16),
	     CALL_HELPER(131), JMP_IMM(EBPF_JNE, 0, 0, 1), EXIT(), MOV64_REG(1, 0), MOV64_IMM(2, 0),
	     CALL_HELPER(132), EXIT());
	TRAP("callee r6", EBPF_FAULT_UNINIT_REG, 0, MOV64_IMM(6, 1), CALL_LOCAL(1), EXIT(),
	     MOV64_REG(0, 6), EXIT());
	TRAP("callee r0", EBPF_FAULT_UNINIT_REG, 0, MOV64_IMM(0, 1), CALL_LOCAL(1), EXIT(), EXIT());
	TRAP("r2 after local call", EBPF_FAULT_UNINIT_REG, 0, MOV64_IMM(2, 1), CALL_LOCAL(2),
	     MOV64_REG(0, 2), EXIT(), MOV64_IMM(0, 0), EXIT());
	OK("r6 survives call", 7, 0, MOV64_IMM(6, 7), CALL_LOCAL(2), MOV64_REG(0, 6), EXIT(),
	   MOV64_IMM(6, 1), MOV64_IMM(0, 0), EXIT());
	OK("callee args", 5, 0, MOV64_IMM(3, 5), CALL_LOCAL(1), EXIT(), MOV64_REG(0, 3), EXIT());
	OK("entry r1 r2", CTX + RO, CTX, MOV64_REG(0, 1), ALU64_REG(EBPF_ADD, 0, 2), EXIT());
	/* Without EBPF_RUN_F_UNINIT_REGS registers start at 0 and are never "uninitialised". */
	{
		struct ebpf_insn p[] = {ALU64_IMM(EBPF_ADD, 3, 5), MOV64_REG(0, 3), EXIT()};
		struct ebpf_exec *prog = ebpf_exec__new(p, INSN_CNT(p), NULL, NULL, 0);
		struct ebpf_run_opts o = {.sz = sizeof(o), .checked = 1};
		uint64_t r0 = 0;

		CHECK(prog != NULL);
		CHECK_EQ_U64(ebpf_interp__run(prog, 0, 0, &o, &r0), 0);
		CHECK_EQ_U64(r0, 5);
		CHECK_EQ_U64(ebpf_interp__run(prog, 0, 0, NULL, &r0), 0);
		CHECK_EQ_U64(r0, 5);
		ebpf_exec__free(prog);
	}
}

static void test_regions(void)
{
	OK("ctx all sizes", 0, CTX, LDX_MEM(EBPF_DW, 0, 1, 8), LDX_MEM(EBPF_W, 0, 1, 12),
	   LDX_MEM(EBPF_H, 0, 1, 14), LDX_MEM(EBPF_B, 0, 1, 15), LDX_MEM(EBPF_B, 0, 1, 0),
	   ST_MEM(EBPF_DW, 1, 8, 0), LDX_MEM(EBPF_DW, 0, 1, 8), EXIT());
	TRAP("read just past ctx", EBPF_FAULT_OUT_OF_BOUNDS, CTX, LDX_MEM(EBPF_DW, 0, 1, 9),
	     EXIT());
	TRAP("byte just past ctx", EBPF_FAULT_OUT_OF_BOUNDS, CTX, LDX_MEM(EBPF_B, 0, 1, 16),
	     EXIT());
	TRAP("byte just before ctx", EBPF_FAULT_OUT_OF_BOUNDS, CTX, LDX_MEM(EBPF_B, 0, 1, -1),
	     EXIT());
	TRAP("write just past ctx", EBPF_FAULT_OUT_OF_BOUNDS, CTX, ST_MEM(EBPF_H, 1, 15, 0),
	     MOV64_IMM(0, 0), EXIT());
	OK("read rodata", 0x0807060504030201ull, CTX, LDX_MEM(EBPF_DW, 0, 2, 0), EXIT());
	TRAP("write rodata", EBPF_FAULT_OUT_OF_BOUNDS, CTX, ST_MEM(EBPF_B, 2, 3, 0),
	     MOV64_IMM(0, 0), EXIT());
	TRAP("atomic on rodata", EBPF_FAULT_OUT_OF_BOUNDS, CTX, MOV64_IMM(3, 1),
	     ATOMIC_OP(EBPF_W, EBPF_ATOMIC_ADD, 2, 3, 0), MOV64_IMM(0, 0), EXIT());
	TRAP("null", EBPF_FAULT_OUT_OF_BOUNDS, 0, LDX_MEM(EBPF_B, 0, 1, 0), EXIT());
	TRAP("wrap around", EBPF_FAULT_OUT_OF_BOUNDS, 0, MOV64_IMM(1, -1),
	     LDX_MEM(EBPF_DW, 0, 1, 0), EXIT());
	TRAP("huge offset", EBPF_FAULT_OUT_OF_BOUNDS, CTX, LD_IMM64(3, 1ull << 40),
	     ALU64_REG(EBPF_ADD, 1, 3), LDX_MEM(EBPF_B, 0, 1, 0), EXIT());
}

static void test_helper_memory(void)
{
	/* reserve(_, 16) -> 16 bytes usable, byte 16 is not; after submit nothing is */
	OK("reserved in bounds", 0, 0, MOV64_IMM(1, 0), MOV64_IMM(2, 16), CALL_HELPER(131),
	   JMP_IMM(EBPF_JEQ, 0, 0, 6), ST_MEM(EBPF_DW, 0, 8, 0), LDX_MEM(EBPF_DW, 6, 0, 8),
	   MOV64_REG(1, 0), MOV64_IMM(2, 0), CALL_HELPER(132), MOV64_REG(0, 6), EXIT());
	TRAP("reserved past size", EBPF_FAULT_OUT_OF_BOUNDS, 0, MOV64_IMM(1, 0), MOV64_IMM(2, 16),
	     CALL_HELPER(131), JMP_IMM(EBPF_JEQ, 0, 0, 1), ST_MEM(EBPF_B, 0, 16, 0),
	     MOV64_IMM(0, 0), EXIT());
	TRAP("reserved after submit", EBPF_FAULT_OUT_OF_BOUNDS, 0, MOV64_IMM(1, 0),
	     MOV64_IMM(2, 16), CALL_HELPER(131), JMP_IMM(EBPF_JEQ, 0, 0, 5), MOV64_REG(6, 0),
	     MOV64_REG(1, 0), MOV64_IMM(2, 0), CALL_HELPER(132), ST_MEM(EBPF_B, 6, 0, 0),
	     MOV64_IMM(0, 0), EXIT());
	TRAP("submit of a non-record", EBPF_FAULT_OUT_OF_BOUNDS, CTX, CALL_HELPER(132), EXIT());
	/* PTR_TO_MEM arguments: readable for the size argument */
	OK("sum stack", 7, 0, ST_MEM(EBPF_H, 10, -2, 0x0403), MOV64_REG(1, 10),
	   ALU64_IMM(EBPF_ADD, 1, -2), MOV64_IMM(2, 2), CALL_HELPER(150), EXIT());
	TRAP("sum uninit stack", EBPF_FAULT_UNINIT_STACK, 0, ST_MEM(EBPF_H, 10, -2, 0x0403),
	     MOV64_REG(1, 10), ALU64_IMM(EBPF_ADD, 1, -3), MOV64_IMM(2, 3), CALL_HELPER(150),
	     EXIT());
	TRAP("sum past ctx", EBPF_FAULT_OUT_OF_BOUNDS, CTX, MOV64_IMM(2, 17), CALL_HELPER(150),
	     EXIT());
	OK("sum ctx", 0, CTX, MOV64_IMM(2, 16), CALL_HELPER(150), EXIT());
}

/* The fast interpreter checks nothing (the verifier vouches for the program): the same
 * uninitialised read and out-of-region write run there. */
static void test_fast_unchecked(void)
{
	struct ebpf_insn p[] = {LDX_MEM(EBPF_W, 0, 10, -8), ST_MEM(EBPF_B, 1, 16, 0), EXIT()};
	static uint8_t big[32];
	struct ebpf_exec *prog = ebpf_exec__new(p, 3, NULL, NULL, 0);
	uint64_t r0;

	CHECK(prog != NULL);
	CHECK_EQ_U64(ebpf_interp__run(prog, (uint64_t)(uintptr_t)big, 0, NULL, &r0), 0);
	ebpf_exec__free(prog);
}

/* The fault record: pc, address, size and a one-line message. */
static void test_fault_record(void)
{
	struct ebpf_insn p[] = {MOV64_IMM(0, 0), LDX_MEM(EBPF_W, 0, 1, 14), EXIT()};
	struct ebpf_exec *prog = ebpf_exec__new(p, 3, NULL, NULL, 0);
	struct ebpf_fault f;
	struct ebpf_run_opts o = {
	    .sz = sizeof(o), .checked = 1, .regions = regions, .n_regions = 1, .fault = &f};
	uint64_t r0 = 123;

	CHECK(prog != NULL);
	if (!prog)
		return;
	CHECK_EQ_U64(ebpf_interp__run(prog, CTX, 0, &o, &r0), -EFAULT);
	CHECK_EQ_U64(r0, 123); /* untouched on failure */
	CHECK_EQ_U64(f.kind, EBPF_FAULT_OUT_OF_BOUNDS);
	CHECK_EQ_U64(f.pc, 1);
	CHECK_EQ_U64(f.addr, CTX + 14);
	CHECK_EQ_U64(f.size, 4);
	CHECK(strstr(f.msg, "insn 1: read of 4 bytes at 0x") == f.msg);
	CHECK(strstr(f.msg, "outside any region") != NULL);
	/* fault may be NULL */
	o.fault = NULL;
	CHECK_EQ_U64(ebpf_interp__run(prog, CTX, 0, &o, &r0), -EFAULT);
	ebpf_exec__free(prog);
}

int main(void)
{
	unsigned i;

	for (i = 0; i < REGION_SIZE; i++)
		rodata[i] = (uint8_t)(i + 1);
	regions[0] = (struct ebpf_region){CTX, REGION_SIZE, EBPF_REGION_READ | EBPF_REGION_WRITE};
	regions[1] = (struct ebpf_region){RO, REGION_SIZE, EBPF_REGION_READ};
	table.by_id[131] = &p_reserve;
	table.by_id[132] = &p_submit;
	table.by_id[150] = &p_sum;
	test_stack();
	test_registers();
	test_regions();
	test_helper_memory();
	test_fast_unchecked();
	test_fault_record();
	return check_summary("interp_checked");
}
