/* Budget rejections name the loop they come from: the step limit, the pending-branch limit and
 * the worst-case-path budget are all reached by a loop that runs too often, and the reader
 * needs its source line, the bound the verifier saw and the budget it exceeded. The loop is
 * found from the instructions: a back-edge (a jump to an earlier instruction) whose body
 * [target, back-edge] contains the instruction the verifier was at, or, for the whole-path
 * budget and where no loop holds that instruction, any loop; among several, the one whose body
 * compares against the largest constant (the bound clang emits for `for (i = 0; i < N; i++)`). The
 * constants that count are those compared with a counter (a register the body steps by a
 * constant and never loads), when there is one: the body's other compares test the data
 * (`if (*v > 100)` in a loop of 64 was named as the bound 100). */
#include <stdio.h>

#include "state.h"

static int is_jump(const struct ebpf_insn *in)
{
	uint8_t cls = EBPF_CLASS(in->code), op = EBPF_OP(in->code);
	return (cls == EBPF_JMP || cls == EBPF_JMP32) && op != EBPF_CALL && op != EBPF_EXIT;
}

/* The largest constant a conditional jump in [lo, hi] compares against (0: none); among those
 * that compare a counter (a register the body steps by a constant and never loads) if any do. */
static int64_t body_bound(const struct env *env, uint32_t lo, uint32_t hi)
{
	int64_t best = 0, best_counter = 0;
	uint16_t stepped = 0, loaded = 0;

	for (uint32_t i = lo; i <= hi && i < env->n; i++) {
		const struct ebpf_insn *in = &env->insns[i];
		uint8_t cls = EBPF_CLASS(in->code), op = EBPF_OP(in->code);
		if ((cls == EBPF_ALU || cls == EBPF_ALU64) && (op == EBPF_ADD || op == EBPF_SUB) &&
		    EBPF_SRC(in->code) == EBPF_K)
			stepped |= (uint16_t)(1u << in->dst_reg);
		if (cls == EBPF_LDX)
			loaded |= (uint16_t)(1u << in->dst_reg);
	}
	stepped &= (uint16_t)~loaded; /* a value read from memory is data, not the counter */
	for (uint32_t i = lo; i <= hi && i < env->n; i++) {
		const struct ebpf_insn *in = &env->insns[i];
		if (is_jump(in) && EBPF_OP(in->code) != EBPF_JA && EBPF_SRC(in->code) == EBPF_K) {
			int64_t v = in->imm < 0 ? -(int64_t)in->imm : in->imm;
			best = v > best ? v : best;
			if (((stepped >> in->dst_reg) & 1) && v > best_counter)
				best_counter = v;
		}
	}
	return best_counter ? best_counter : best;
}

/* The back-edge of the loop to name (UINT32_MAX: none); *bound its constant (0: none seen). */
static uint32_t find_loop(const struct env *env, uint32_t pc, int64_t *bound)
{
	uint32_t found = UINT32_MAX;
	*bound = 0;
	for (uint32_t i = 0; i < env->n; i++) {
		const struct ebpf_insn *in = &env->insns[i];
		if (!is_jump(in) || in->off >= 0)
			continue;
		int64_t t = (int64_t)i + in->off + 1;
		if (t < 0 || (pc != UINT32_MAX && (pc < (uint64_t)t || pc > i)))
			continue;
		int64_t b = body_bound(env, (uint32_t)t, i);
		if (found == UINT32_MAX || b > *bound) {
			found = i;
			*bound = b;
		}
	}
	return found;
}

int verr_loop(struct env *env, uint32_t pc, int rc, const char *what, uint64_t seen,
	      const char *budget_name, uint64_t budget)
{
	int64_t bound;
	uint32_t at = find_loop(env, pc, &bound);
	char loop[160];

	/* the limit was reached after a loop (the paths it multiplied go on past it): name the
	 * loop still, not "no loop" */
	if (at == UINT32_MAX && pc != UINT32_MAX)
		at = find_loop(env, UINT32_MAX, &bound);
	if (at == UINT32_MAX)
		snprintf(loop, sizeof(loop), "no loop found: the path itself is too long");
	else if (bound)
		snprintf(
		    loop, sizeof(loop),
		    "this loop compares against %lld: lower its bound or do less per iteration",
		    (long long)bound);
	else
		snprintf(loop, sizeof(loop),
			 "this loop has no constant bound: bound it with a constant (i < N)");
	return verr(env, at == UINT32_MAX ? pc : at, rc, "%s: %llu, over the %s of %llu; %s", what,
		    (unsigned long long)seen, budget_name, (unsigned long long)budget, loop);
}
