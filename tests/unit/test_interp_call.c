/* Calls: helpers through the table (all five arguments, r0 result), bpf-to-bpf calls with
 * their own 512-byte stack frames, r6-r9 preserved across calls, r10 per frame, the frame
 * limit (8 frames run, 9 fault with EBPF_FAULT_CALL_DEPTH, never a crash), insn_limit. */
#include <stdint.h>

#include "interp_harness.h"

static uint64_t h_weighted(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return a + 10 * b + 100 * c + 1000 * d + 10000 * e;
}

static uint64_t h_clobber(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return 77;
}

static const struct ebpf_helper_proto p_weighted = {
    .id = 1,
    .name = "weighted",
    .fn = h_weighted,
    .args = {EBPF_ARG_ANYTHING, EBPF_ARG_ANYTHING, EBPF_ARG_ANYTHING, EBPF_ARG_ANYTHING,
	     EBPF_ARG_ANYTHING},
};
static const struct ebpf_helper_proto p_clobber = {.id = 200, .name = "clobber", .fn = h_clobber};

static struct ebpf_helper_table table;

static void test_helpers(void)
{
	struct harness_env env = {.helpers = &table};
	struct ebpf_insn p[] = {
	    MOV64_IMM(1, 1),
	    MOV64_IMM(2, 2),
	    MOV64_IMM(3, 3),
	    MOV64_IMM(4, 4),
	    MOV64_IMM(5, 5),
	    MOV64_IMM(6, 6),
	    MOV64_IMM(9, 9),
	    CALL_HELPER(1),
	    MOV64_REG(7, 0),
	    CALL_HELPER(200),
	    /* r0 = 77 + r7 + r6 * 1e6 + r9 * 1e7: callee-saved registers survive helpers */
	    ALU64_REG(EBPF_ADD, 0, 7),
	    ALU64_IMM(EBPF_MUL, 6, 1000000),
	    ALU64_REG(EBPF_ADD, 0, 6),
	    ALU64_IMM(EBPF_MUL, 9, 10000000),
	    ALU64_REG(EBPF_ADD, 0, 9),
	    EXIT(),
	};
	CHECK_EQ_U64(harness_run("helpers", p, INSN_CNT(p), 0, 0, &env),
		     77 + 54321 + 6000000 + 90000000);
}

/* main: r6 = F (frames wanted in total), calls f(F - 1); returns f's result * 100 + r6.
 * f(k): k <= 1 -> 1; else stores k at fp-8, sets r6 = k, calls f(k - 1) and returns
 * f(k-1) + r6 + *(fp-8), so a callee clobbering the caller's r6 or stack changes the sum:
 * f(k) = k(k+1) - 1. */
static struct ebpf_insn recurse[] = {
    /* 0 */ MOV64_REG(6, 1),
    /* 1 */ MOV64_REG(1, 6),
    /* 2 */ ALU64_IMM(EBPF_SUB, 1, 1),
    /* 3 */ CALL_LOCAL(3),
    /* 4 */ ALU64_IMM(EBPF_MUL, 0, 100),
    /* 5 */ ALU64_REG(EBPF_ADD, 0, 6),
    /* 6 */ EXIT(),
    /* 7 f */ JMP_IMM(EBPF_JGT, 1, 1, 2),
    /* 8 */ MOV64_IMM(0, 1),
    /* 9 */ EXIT(),
    /* 10 */ STX_MEM(EBPF_DW, 10, 1, -8),
    /* 11 */ MOV64_REG(6, 1),
    /* 12 */ ALU64_IMM(EBPF_SUB, 1, 1),
    /* 13 */ CALL_LOCAL(-7),
    /* 14 */ ALU64_REG(EBPF_ADD, 0, 6),
    /* 15 */ LDX_MEM(EBPF_DW, 2, 10, -8),
    /* 16 */ ALU64_REG(EBPF_ADD, 0, 2),
    /* 17 */ EXIT(),
};

static void test_frames(void)
{
	uint64_t frames;

	for (frames = 2; frames <= EBPF_MAX_FRAMES; frames++) {
		uint64_t k = frames - 1;
		CHECK_EQ_U64(harness_run("recursion", recurse, INSN_CNT(recurse), frames, 0, NULL),
			     (k * (k + 1) - 1) * 100 + frames);
	}
	/* One frame too many faults, in every variant. */
	harness_expect_fault("depth 9", recurse, INSN_CNT(recurse), EBPF_MAX_FRAMES + 1, 0, NULL, 0,
			     EBPF_FAULT_CALL_DEPTH);
	harness_expect_fault("depth 9 checked", recurse, INSN_CNT(recurse), EBPF_MAX_FRAMES + 1, 0,
			     NULL, 1, EBPF_FAULT_CALL_DEPTH);
	harness_expect_fault("deep", recurse, INSN_CNT(recurse), 1000, 0, NULL, 0,
			     EBPF_FAULT_CALL_DEPTH);
}

/* r10 differs per frame by exactly 512 bytes and the callee's frame lies below. */
static void test_frame_pointer(void)
{
	struct ebpf_insn p[] = {
	    MOV64_REG(6, 10), CALL_LOCAL(3), ALU64_REG(EBPF_SUB, 6, 0), MOV64_REG(0, 6), EXIT(),
	    MOV64_REG(0, 10), EXIT(),
	};
	CHECK_EQ_U64(harness_run("fp", p, INSN_CNT(p), 0, 0, NULL), EBPF_STACK_SIZE);
}

/* A callee may read and write its caller's stack through a pointer passed in r1. */
static void test_caller_stack(void)
{
	struct ebpf_insn p[] = {
	    ST_MEM(EBPF_DW, 10, -16, 40),
	    MOV64_REG(1, 10),
	    ALU64_IMM(EBPF_ADD, 1, -16),
	    CALL_LOCAL(2),
	    LDX_MEM(EBPF_DW, 0, 10, -16),
	    EXIT(),
	    LDX_MEM(EBPF_DW, 2, 1, 0),
	    ALU64_IMM(EBPF_ADD, 2, 2),
	    STX_MEM(EBPF_DW, 1, 2, 0),
	    MOV64_IMM(0, 0),
	    EXIT(),
	};
	CHECK_EQ_U64(harness_run("caller stack", p, INSN_CNT(p), 0, 0, NULL), 42);
}

static void test_insn_limit(void)
{
	struct ebpf_insn loop[] = {JA(-1), EXIT()};
	struct ebpf_insn three[] = {MOV64_IMM(0, 1), MOV64_IMM(0, 2), EXIT()};
	char err[128];
	struct ebpf_exec *p = ebpf_exec__new(loop, 2, NULL, err, sizeof(err));
	struct ebpf_exec *q = ebpf_exec__new(three, 3, NULL, err, sizeof(err));
	struct ebpf_fault f;
	uint64_t r0 = 0;
	int checked;

	CHECK(p && q);
	if (!p || !q)
		return;
	for (checked = 0; checked < 2; checked++) {
		struct ebpf_run_opts o = {
		    .sz = sizeof(o), .checked = checked, .insn_limit = 1000, .fault = &f};
		CHECK_EQ_U64(ebpf_interp__run(p, 0, 0, &o, &r0), -EFAULT);
		CHECK_EQ_U64(f.kind, EBPF_FAULT_INSN_LIMIT);
		/* exactly at the limit is fine, one below is not */
		o.insn_limit = 3;
		CHECK_EQ_U64(ebpf_interp__run(q, 0, 0, &o, &r0), 0);
		CHECK_EQ_U64(r0, 2);
		o.insn_limit = 2;
		CHECK_EQ_U64(ebpf_interp__run(q, 0, 0, &o, &r0), -EFAULT);
		CHECK_EQ_U64(f.kind, EBPF_FAULT_INSN_LIMIT);
	}
	ebpf_exec__free(p);
	ebpf_exec__free(q);
}

int main(void)
{
	table.by_id[1] = &p_weighted;
	table.by_id[200] = &p_clobber;
	test_helpers();
	test_frames();
	test_frame_pointer();
	test_caller_stack();
	test_insn_limit();
	return check_summary("interp_call");
}
