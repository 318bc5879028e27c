/* The verifier's driver: structural checks, then a depth-first abstract interpretation of every
 * path (ALU and jump transfer functions here; memory, calls, pruning and rank consistency in
 * their own files), then whole-program limits (combined stack, worst-case cost). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ebpf/maps.h"
#include "state.h"

#define MAX_PENDING 8192

static const char *const op_names[16] = {"+",	"-", "*", "/",	 "|",	"&",   "<<", ">>",
					 "neg", "%", "^", "mov", "s>>", "end", "?",  "?"};

/* --- scalar copies: a refinement of one applies to all (Linux's find_equal_scalars) ---------- */

static void propagate_scalar_id(struct vstate *st, const struct reg *src)
{
	if (!src->id || src->type != SCALAR)
		return;
	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct frame *fr = st->frames[f];
		for (int r = 0; r < EBPF_REG_10; r++) {
			struct reg *x = &fr->regs[r];
			if (x->type == SCALAR && x->id == src->id && x != src) {
				uint8_t local = x->local;
				uint32_t taint = x->taint;
				*x = *src;
				x->local = local;
				x->taint = taint;
			}
		}
		for (uint32_t s = 0; s < fr->nslots; s++) {
			struct reg *x = &fr->slots[s].spill;
			if (STACK_KIND(fr->slots[s].bytes[0]) == STACK_SPILL && x->type == SCALAR &&
			    x->id == src->id && x != src) {
				uint8_t local = x->local;
				uint32_t taint = x->taint;
				*x = *src;
				x->local = local;
				x->taint = taint;
			}
		}
	}
}

/* Another register or spilled slot holds a copy of src (same id): a branch narrowing src
 * narrows it too. */
static bool scalar_has_copies(const struct vstate *st, const struct reg *src)
{
	if (!src->id || src->type != SCALAR)
		return false;
	for (uint32_t f = 0; f <= st->curframe; f++) {
		const struct frame *fr = st->frames[f];
		for (int r = 0; r < EBPF_REG_10; r++)
			if (&fr->regs[r] != src && fr->regs[r].type == SCALAR &&
			    fr->regs[r].id == src->id)
				return true;
		for (uint32_t k = 0; k < fr->nslots; k++)
			if (STACK_KIND(fr->slots[k].bytes[0]) == STACK_SPILL &&
			    fr->slots[k].spill.type == SCALAR && fr->slots[k].spill.id == src->id)
				return true;
	}
	return false;
}

/* --- ALU ------------------------------------------------------------------------------------- */

static int ptr_arith(struct env *env, uint32_t pc, const struct ebpf_insn *insn, struct reg *dst,
		     const struct reg *src, bool is64)
{
	uint8_t op = EBPF_OP(insn->code);
	const struct reg *ptr, *off;
	struct reg res, var;
	bool dst_ptr = reg_is_ptr(dst);

	if (!is64)
		return verr(env, pc, -EACCES, "R%u 32-bit pointer arithmetic prohibited",
			    insn->dst_reg);
	if (reg_is_ptr(dst) && reg_is_ptr(src))
		return verr(
		    env, pc, -EACCES,
		    "R%u pointer %s pointer prohibited (only pointer +/- scalar is allowed)",
		    insn->dst_reg, op_names[op >> 4]);
	if (op != EBPF_ADD && op != EBPF_SUB) {
		const struct reg *p = dst_ptr ? dst : src;
		if (op == EBPF_AND || op == EBPF_OR || op == EBPF_XOR)
			return verr(env, pc, -EACCES,
				    "R%u bitwise operator %s on pointer prohibited", insn->dst_reg,
				    op_names[op >> 4]);
		return verr(env, pc, -EACCES,
			    "R%u pointer arithmetic with %s operator prohibited (%s)",
			    insn->dst_reg, op_names[op >> 4], reg_type_str(p->type));
	}
	if (op == EBPF_SUB && !dst_ptr)
		return verr(env, pc, -EACCES, "R%u tried to subtract pointer from scalar",
			    insn->dst_reg);
	ptr = dst_ptr ? dst : src;
	off = dst_ptr ? src : dst;
	/* the offset's range decides every later access through the pointer */
	if (!dst_ptr)
		precise_mark(env, (uint16_t)(1u << insn->dst_reg), true);
	else if (EBPF_SRC(insn->code) == EBPF_X)
		precise_mark(env, (uint16_t)(1u << insn->src_reg), true);
	switch (ptr->type) {
	case PTR_TO_MAP_VALUE_OR_NULL:
	case PTR_TO_MEM_OR_NULL:
		return verr(env, pc, -EACCES,
			    "R%u pointer arithmetic on %s prohibited, null-check it first",
			    insn->dst_reg, reg_type_str(ptr->type));
	case CONST_PTR_TO_MAP:
		return verr(env, pc, -EACCES, "R%u pointer arithmetic on map_ptr prohibited",
			    insn->dst_reg);
	case PTR_TO_CTX:
		if (!scalar_is_const(off))
			return verr(
			    env, pc, -EACCES,
			    "R%u variable ctx access prohibited: context offsets must be constants",
			    insn->dst_reg);
		break;
	default:
		break;
	}
	res = *ptr;
	if (scalar_is_const(off)) {
		int64_t c = (int64_t)off->var_off.value, n;
		if (op == EBPF_SUB)
			c = -c;
		n = (int64_t)res.off + c;
		if (c < -MAX_VAR_OFF || c > MAX_VAR_OFF || n < -MAX_VAR_OFF || n > MAX_VAR_OFF)
			return verr(env, pc, -EACCES, "R%u pointer offset %lld out of range",
				    insn->dst_reg, (long long)n);
		res.off = (int32_t)n;
	} else {
		/* variable part: reuse scalar arithmetic on the pointer's offset bounds */
		var = res;
		var.type = SCALAR;
		scalar_alu(&var, off, op, true, false);
		res.var_off = var.var_off;
		res.smin = var.smin;
		res.smax = var.smax;
		res.umin = var.umin;
		res.umax = var.umax;
		res.s32_min = var.s32_min;
		res.s32_max = var.s32_max;
		res.u32_min = var.u32_min;
		res.u32_max = var.u32_max;
	}
	res.local = ptr->local | off->local;
	res.taint = ptr->local ? ptr->taint : off->taint;
	*dst = res;
	taint_reg_write(env, dst);
	return 0;
}

static int check_alu(struct env *env, const struct ebpf_insn *insn, uint32_t pc)
{
	struct reg *regs = cur_regs(env), *dst = &regs[insn->dst_reg], src;
	uint8_t op = EBPF_OP(insn->code);
	bool is64 = EBPF_CLASS(insn->code) == EBPF_ALU64, x = EBPF_SRC(insn->code) == EBPF_X;

	if (x) {
		if (op != EBPF_END && regs[insn->src_reg].type == NOT_INIT)
			return verr(env, pc, -EACCES, "R%u !read_ok", insn->src_reg);
		src = regs[insn->src_reg];
	} else {
		reg_mark_const(&src, is64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm);
	}
	if (op == EBPF_MOV) {
		if (x && insn->off) { /* sign-extending move */
			if (reg_is_ptr(&src))
				return verr(env, pc, -EACCES,
					    "R%u sign-extension of a pointer prohibited",
					    insn->src_reg);
			scalar_sext(&src, insn->off, !is64);
			src.id = 0;
			*dst = src;
		} else if (x && is64) {
			if (src.type == SCALAR && !scalar_is_const(&src)) {
				if (!src.id)
					src.id = regs[insn->src_reg].id = ++env->next_id;
			}
			*dst = src;
		} else if (x) {
			if (reg_is_ptr(&src))
				return verr(env, pc, -EACCES, "R%u partial copy of pointer",
					    insn->src_reg);
			src.id = 0;
			scalar_sync(&src);
			scalar_trunc32(&src);
			*dst = src;
		} else {
			*dst = src;
		}
		taint_reg_write(env, dst);
		return 0;
	}
	if (dst->type == NOT_INIT)
		return verr(env, pc, -EACCES, "R%u !read_ok", insn->dst_reg);
	if (op == EBPF_NEG || op == EBPF_END) {
		if (reg_is_ptr(dst))
			return verr(env, pc, -EACCES, "R%u pointer arithmetic with %s prohibited",
				    insn->dst_reg, op == EBPF_NEG ? "neg" : "byte swap");
		if (op == EBPF_NEG) {
			struct reg zero;
			reg_mark_const(&zero, 0);
			zero.local = dst->local;
			zero.taint = dst->taint;
			scalar_alu(&zero, dst, EBPF_SUB, is64, false);
			*dst = zero;
		} else {
			scalar_bswap(dst, insn->imm, is64 || x);
		}
		taint_reg_write(env, dst);
		return 0;
	}
	if (reg_is_ptr(dst) || reg_is_ptr(&src))
		return ptr_arith(env, pc, insn, dst, &src, is64);
	if ((op == EBPF_DIV || op == EBPF_MOD) && x)
		precise_mark(env, (uint16_t)(1u << insn->src_reg), true);
	if ((op == EBPF_DIV || op == EBPF_MOD) && x && (is64 ? src.umin == 0 : src.u32_min == 0)) {
		char d[192];
		reg_describe(&src, d, sizeof(d));
		return verr(env, pc, -EACCES,
			    "R%u %s by zero possible: divisor R%u=%s may be 0; check it first",
			    insn->src_reg, op == EBPF_DIV ? "division" : "modulo", insn->src_reg,
			    d);
	}
	scalar_alu(dst, &src, op, is64, (op == EBPF_DIV || op == EBPF_MOD) && insn->off == 1);
	taint_reg_write(env, dst);
	return 0;
}

static int check_lddw(struct env *env, const struct ebpf_insn *insn, uint32_t pc)
{
	struct reg *dst = &cur_regs(env)[insn->dst_reg];

	if (insn->src_reg == EBPF_PSEUDO_MAP_VALUE && map_is_per_comm(env, (uint32_t)insn->imm)) {
		const char *name = ebpf_map__name(env_map(env, (uint32_t)insn->imm));
		return verr(
		    env, pc, -EACCES,
		    "direct value access to per-communicator map `%s`: look its elements up "
		    "with bpf_map_lookup_elem",
		    name ? name : "?");
	}
	/* a communicator's decision state exists only where its decisions run */
	if ((insn->src_reg == EBPF_PSEUDO_MAP_FD || insn->src_reg == EBPF_PSEUDO_MAP_VALUE) &&
	    env->type && !(env->type->flags & EBPF_PROG_TYPE_F_RANK_CONSISTENT) &&
	    map_is_per_comm(env, (uint32_t)insn->imm)) {
		const char *name = ebpf_map__name(env_map(env, (uint32_t)insn->imm));
		return verr(env, pc, -EACCES,
			    "per-communicator map `%s` is decision state: only tuner programs may "
			    "use it (%s programs run outside any communicator's decisions)",
			    name ? name : "?", env->type->name);
	}
	switch (insn->src_reg) {
	case EBPF_PSEUDO_MAP_FD:
		reg_mark_const(dst, 0);
		dst->type = CONST_PTR_TO_MAP;
		dst->map_idx = (uint32_t)insn->imm;
		break;
	case EBPF_PSEUDO_MAP_VALUE:
		reg_mark_const(dst, 0);
		dst->type = PTR_TO_MAP_VALUE;
		dst->map_idx = (uint32_t)insn->imm;
		dst->off = insn[1].imm;
		break;
	default:
		reg_mark_const(dst, (uint64_t)(uint32_t)insn->imm |
					((uint64_t)(uint32_t)insn[1].imm << 32));
		break;
	}
	taint_reg_write(env, dst);
	return 0;
}

/* --- branches -------------------------------------------------------------------------------- */

/* Pending states are blocks of their own, the stack an array of pointers to them: growing it
 * copies pointers (an array of the states themselves was copied whole at each doubling, about
 * 100 KB for policies/tuned_table.c's 193 pending branches), and a popped state's block is
 * reused by the next push. */
static int push_branch(struct env *env, uint32_t target, struct vstate **out)
{
	struct vstate *st;
	size_t bytes;

	if (env->n_stack >= MAX_PENDING)
		return verr_loop(env, env->cur.insn, -E2BIG,
				 "program too complex: pending branches", env->n_stack,
				 "branch limit", MAX_PENDING);
	if (env->n_stack == env->cap_stack) {
		struct vstate **a = arena_regrow(
		    &env->arena, env->stack, env->cap_stack * sizeof(*a), env->n_stack * sizeof(*a),
		    (env->n_stack + 1) * sizeof(*a), &bytes);
		if (!a)
			return verr(env, env->cur.insn, -ENOMEM, "out of memory");
		env->stack = a;
		env->cap_stack = (uint32_t)(bytes / sizeof(*a));
	}
	st = arena_block(&env->arena, sizeof(*st), &bytes);
	if (!st || state_copy(env, st, &env->cur)) {
		arena_unblock(&env->arena, st, sizeof(*st));
		return verr(env, env->cur.insn, -ENOMEM, "out of memory");
	}
	env->stack[env->n_stack++] = st;
	st->insn = target;
	if (st->parent)
		st->parent->branches++;
	if (env->n_stack + env->n_checkpoints > env->peak_states)
		env->peak_states = env->n_stack + env->n_checkpoints;
	*out = st;
	return 0;
}

/* A null check on x, when it is a copy of the checked pointer `id`: a plain pointer (non-null
 * side) or the scalar 0 (null side), whose reservation (*ref) then holds nothing. */
static void mark_null_reg(struct reg *x, uint32_t id, bool is_null, uint32_t *ref)
{
	if ((x->type != PTR_TO_MAP_VALUE_OR_NULL && x->type != PTR_TO_MEM_OR_NULL) || x->id != id)
		return;
	if (is_null) {
		uint8_t local = x->local;
		uint32_t taint = x->taint;
		*ref = x->ref_id ? x->ref_id : *ref;
		reg_mark_const(x, 0);
		x->local = local;
		x->taint = taint;
	} else {
		x->type = x->type == PTR_TO_MAP_VALUE_OR_NULL ? PTR_TO_MAP_VALUE : PTR_TO_MEM;
		x->id = 0;
	}
}

/* A null check: the register and every copy with the same id (registers and spills of every
 * frame) become a plain pointer (non-null side) or the scalar 0 (null side). */
static void mark_null(struct vstate *st, uint32_t id, bool is_null)
{
	uint32_t ref = 0;

	for (uint32_t f = 0; f <= st->curframe; f++) {
		struct frame *fr = st->frames[f];
		for (int r = 0; r <= EBPF_REG_10; r++)
			mark_null_reg(&fr->regs[r], id, is_null, &ref);
		for (uint32_t s = 0; s < fr->nslots; s++)
			if (STACK_KIND(fr->slots[s].bytes[0]) == STACK_SPILL)
				mark_null_reg(&fr->slots[s].spill, id, is_null, &ref);
	}
	if (is_null && ref) { /* a failed reservation holds nothing */
		for (uint32_t i = 0; i < st->n_refs; i++) {
			if (st->refs[i] == ref) {
				st->refs[i] = st->refs[st->n_refs - 1];
				st->ref_insn[i] = st->ref_insn[st->n_refs - 1];
				st->n_refs--;
				break;
			}
		}
	}
}

static int check_ptr_cmp(struct env *env, const struct ebpf_insn *insn, uint32_t pc,
			 struct reg *dst, const struct reg *src, bool is64, uint32_t target)
{
	uint8_t op = EBPF_OP(insn->code);
	const struct reg *p = reg_is_ptr(dst) ? dst : src, *o = reg_is_ptr(dst) ? src : dst;
	bool x = EBPF_SRC(insn->code) == EBPF_X;
	uint32_t preg = reg_is_ptr(dst) ? insn->dst_reg : insn->src_reg;
	struct vstate *other;
	int err;

	if (!is64)
		return verr(env, pc, -EACCES, "R%u 32-bit pointer comparison prohibited", preg);
	if (reg_is_ptr(dst) && x && reg_is_ptr(src))
		return verr(env, pc, -EACCES,
			    "R%u pointer comparison prohibited: pointers may only be compared with "
			    "0 (NULL)",
			    insn->dst_reg);
	if (x) /* the scalar side must stay 0 */
		precise_mark(
		    env, (uint16_t)(1u << (reg_is_ptr(dst) ? insn->src_reg : insn->dst_reg)), true);
	if ((op != EBPF_JEQ && op != EBPF_JNE) || !tnum_equals_const(o->var_off, 0))
		return verr(env, pc, -EACCES,
			    "R%u pointer comparison prohibited: pointers may only be compared with "
			    "0 (NULL)",
			    preg);
	/* A rank-local pointer's null-ness may differ on another rank even where this path knows
	 * it (this path got here through an earlier rank-local branch): whatever the outcome, what
	 * is written until the paths meet is rank-local. */
	if (p->local)
		taint_branch(env, pc, p->taint);
	if (p->type != PTR_TO_MAP_VALUE_OR_NULL && p->type != PTR_TO_MEM_OR_NULL) {
		/* never null: the outcome is known */
		env->cur.insn = op == EBPF_JNE ? target : pc + 1;
		return 0;
	}
	{
		uint32_t id = p->id;
		err = push_branch(env, target, &other);
		if (err)
			return err;
		/* taken side: JEQ -> null, JNE -> non-null */
		mark_null(other, id, op == EBPF_JEQ);
		mark_null(&env->cur, id, op != EBPF_JEQ);
	}
	env->cur.insn = pc + 1;
	return 0;
}

static void apply_refined(struct vstate *st, const struct ebpf_insn *insn, bool x,
			  const struct reg *a, const struct reg *b)
{
	struct frame *f = st->frames[st->curframe];

	f->regs[insn->dst_reg] = *a;
	propagate_scalar_id(st, &f->regs[insn->dst_reg]);
	if (x) {
		f->regs[insn->src_reg] = *b;
		propagate_scalar_id(st, &f->regs[insn->src_reg]);
	}
}

static int check_cond_jmp(struct env *env, const struct ebpf_insn *insn, uint32_t pc)
{
	struct reg *regs = cur_regs(env), *dst = &regs[insn->dst_reg], src, *srcp = NULL;
	uint8_t op = EBPF_OP(insn->code);
	bool is64 = EBPF_CLASS(insn->code) == EBPF_JMP, x = EBPF_SRC(insn->code) == EBPF_X;
	uint32_t target = pc + 1 + (uint32_t)(int32_t)insn->off;
	struct vstate *other;
	int taken, err;

	if (dst->type == NOT_INIT)
		return verr(env, pc, -EACCES, "R%u !read_ok", insn->dst_reg);
	if (x) {
		srcp = &regs[insn->src_reg];
		if (srcp->type == NOT_INIT)
			return verr(env, pc, -EACCES, "R%u !read_ok", insn->src_reg);
		src = *srcp;
	} else {
		reg_mark_const(&src, is64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm);
	}
	if (reg_is_ptr(dst) || reg_is_ptr(&src))
		return check_ptr_cmp(env, insn, pc, dst, &src, is64, target);
	/* precision tracking must know when narrowing reaches registers other than the
	 * operands (before push_branch: the pushed state carries the history) */
	if (scalar_has_copies(&env->cur, dst) || (srcp && scalar_has_copies(&env->cur, srcp)))
		hist_note_linked(env);

	/* A branch on a rank-local value taints what is written until the paths meet, also where
	 * this path's ranges decide it: on another rank the value, and so the outcome, may
	 * differ (rank_campaign found a constant decided differently on the two paths of an
	 * earlier rank-local branch, after their taint had ended). */
	if (dst->local || src.local)
		taint_branch(env, pc, dst->local ? dst->taint : src.taint);
	taken = scalar_branch_taken(dst, &src, op, is64);
	if (taken >= 0) /* the ranges decided the branch: they matter */
		precise_mark(env, (uint16_t)((1u << insn->dst_reg) | (x ? 1u << insn->src_reg : 0)),
			     true);
	if (taken == 1) {
		env->cur.insn = target;
		return 0;
	}
	if (taken == 0) {
		env->cur.insn = pc + 1;
		return 0;
	}
	{
		struct reg ta = *dst, tb = src, fa = *dst, fb = src;
		bool ok_t = scalar_refine(&ta, &tb, op, is64, true);
		bool ok_f = scalar_refine(&fa, &fb, op, is64, false);
		struct vstate *st = &env->cur;

		if (!ok_t && !ok_f) {
			/* the operands' ranges contradict each other: this path ends because of
			 * them, so a state that differs in them must not be pruned against ours */
			precise_mark(
			    env, (uint16_t)((1u << insn->dst_reg) | (x ? 1u << insn->src_reg : 0)),
			    true);
			prune_path_dead(env);
			return 1; /* the state itself is infeasible */
		}
		if (ok_t && ok_f) {
			err = push_branch(env, target, &other);
			if (err)
				return err;
			apply_refined(other, insn, x, &ta, &tb);
			apply_refined(st, insn, x, &fa, &fb);
			st->insn = pc + 1;
		} else if (ok_t) {
			precise_mark(
			    env, (uint16_t)((1u << insn->dst_reg) | (x ? 1u << insn->src_reg : 0)),
			    true);
			apply_refined(st, insn, x, &ta, &tb);
			st->insn = target;
		} else {
			precise_mark(
			    env, (uint16_t)((1u << insn->dst_reg) | (x ? 1u << insn->src_reg : 0)),
			    true);
			apply_refined(st, insn, x, &fa, &fb);
			st->insn = pc + 1;
		}
	}
	return 0;
}

/* --- main loop ------------------------------------------------------------------------------- */

/* Returns 1 when the current path ended, 0 to continue, <0 on error. */
static int step(struct env *env)
{
	uint32_t pc = env->cur.insn;
	const struct ebpf_insn *insn = &env->insns[pc];
	uint8_t cls = EBPF_CLASS(insn->code);
	int err;

	if (++env->processed > env->limit)
		return verr_loop(env, pc, -E2BIG,
				 "program too complex: instructions processed without finishing",
				 env->processed, "complexity limit", env->limit);
	taint_at_insn(env, pc);
	err = prune_visit(env, pc);
	if (err)
		return err;
	hist_push(env, pc);
	log_insn_state(env, pc);
	env->cur.cost++;
	env->cur.since_checkpoint++;
	switch (cls) {
	case EBPF_ALU:
	case EBPF_ALU64:
		err = check_alu(env, insn, pc);
		env->cur.insn = pc + 1;
		return err;
	case EBPF_LDX:
		err = check_ldx(env, insn);
		env->cur.insn = pc + 1;
		return err;
	case EBPF_ST:
		err = check_store(env, insn);
		env->cur.insn = pc + 1;
		return err;
	case EBPF_STX:
		err = EBPF_MODE(insn->code) == EBPF_ATOMIC ? check_atomic(env, insn)
							   : check_store(env, insn);
		env->cur.insn = pc + 1;
		return err;
	case EBPF_LD:
		err = check_lddw(env, insn, pc);
		env->cur.insn = pc + 2;
		return err;
	default:
		break;
	}
	switch (EBPF_OP(insn->code)) {
	case EBPF_JA:
		env->cur.insn = pc + 1 + (uint32_t)(cls == EBPF_JMP32 ? insn->imm : insn->off);
		return 0;
	case EBPF_CALL:
		if (insn->src_reg == EBPF_PSEUDO_CALL)
			return check_subprog_call(env, insn, pc);
		err = check_helper_call(env, insn, pc);
		env->cur.insn = pc + 1;
		return err;
	case EBPF_EXIT:
		err = check_exit(env, pc);
		if (err == 1)
			prune_path_done(env, env->cur.cost);
		return err;
	default:
		return check_cond_jmp(env, insn, pc);
	}
}

static int do_check(struct env *env)
{
	int err;

	err = state_init(env, &env->cur);
	if (err)
		return verr(env, 0, err, "out of memory");
	for (;;) {
		err = step(env);
		if (err < 0)
			return err;
		if (err == 0)
			continue;
		/* the path ended (exit, pruned or infeasible); continue with a pending branch */
		state_free(env, &env->cur);
		if (!env->n_stack)
			return 0;
		struct vstate *next = env->stack[--env->n_stack];
		env->cur = *next;
		arena_unblock(&env->arena, next, sizeof(*next));
	}
}

int ebpf_verify(const struct ebpf_insn *insns, uint32_t n_insns,
		const struct ebpf_verify_opts *uopts, struct ebpf_verify_stats *stats, char *err,
		size_t err_len)
{
	struct ebpf_verify_opts opts;
	struct timespec t0, t1;
	struct env env;
	uint64_t memory;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (err && err_len)
		err[0] = 0;
	memset(&env, 0, sizeof(env));
	memset(&opts, 0, sizeof(opts));
	if (uopts)
		memcpy(&opts, uopts, uopts->sz < sizeof(opts) ? uopts->sz : sizeof(opts));
	opts.sz = sizeof(opts);
	env.insns = insns;
	env.n = n_insns;
	env.opts = &opts;
	env.type = opts.type;
	env.err = err;
	env.err_len = err_len;
	env.log = opts.log_buf;
	env.log_len = opts.log_size;
	env.log_on = (opts.flags & EBPF_VERIFY_F_LOG) && opts.log_buf && opts.log_size;
	if (env.log_on)
		opts.log_buf[0] = 0;
	env.limit = opts.complexity_limit ? opts.complexity_limit : 1000000;
	env.rank_check = env.type && (env.type->flags & EBPF_PROG_TYPE_F_RANK_CONSISTENT) &&
			 !(opts.flags & EBPF_VERIFY_F_ALLOW_RANK_LOCAL);
	if (!insns || !n_insns || n_insns > EBPF_MAX_INSNS || !uopts ||
	    uopts->sz < sizeof(size_t)) {
		if (err && err_len)
			snprintf(err, err_len, "invalid arguments: %u instructions", n_insns);
		return -EINVAL;
	}
	if (opts.n_maps && !opts.maps) {
		if (err && err_len)
			snprintf(err, err_len, "invalid arguments: %u maps but no map table",
				 opts.n_maps);
		return -EINVAL;
	}
	if (opts.map_flags)
		for (uint32_t i = 0; i < opts.n_maps; i++)
			opts.map_flags[i] &= (uint8_t)~EBPF_VERIFY_MAP_WRITTEN;
	if (opts.map_write_insn)
		for (uint32_t i = 0; i < opts.n_maps; i++)
			opts.map_write_insn[i] = UINT32_MAX;
	arena_init(&env.arena);
	env.aux = arena_zalloc(&env.arena, (n_insns + 1) * sizeof(*env.aux));
	if (!env.aux) {
		arena_release(&env.arena);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i <= n_insns; i++)
		env.aux[i].ipdom = UINT32_MAX;
	rc = cfg_check(&env);
	if (!rc)
		rc = do_check(&env);
	if (!rc)
		rc = cfg_check_calls(&env, true);
	if (!rc && env.type && env.worst_cost > env.type->insn_budget) {
		char budget[64];
		snprintf(budget, sizeof(budget), "%s budget", env.type->name);
		rc = verr_loop(&env, UINT32_MAX, -EACCES, "instructions on the worst-case path",
			       env.worst_cost, budget, env.type->insn_budget);
	}
	if (rc && !env.status)
		env.status = rc;
	rc = env.status;
	/* -EINVAL from structural checks, -E2BIG from budgets; everything else rejects */
	if (rc && rc != -EINVAL && rc != -E2BIG && rc != -ENOMEM)
		rc = -EACCES;
	for (uint32_t i = 0; opts.ctx_off && i < n_insns; i++) {
		int32_t v = env.aux[i].ldx_ctx;
		opts.ctx_off[i] = v >= LDX_CTX(0)  ? v - LDX_CTX(0)
				  : v == LDX_MIXED ? EBPF_CTX_OFF_MIXED
						   : EBPF_CTX_OFF_NONE;
	}
	memory = env.arena.total;  /* the arena only grows until released */
	arena_release(&env.arena); /* every state, the aux data and the pending stack */
	free(env.subprogs);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (stats) {
		memset(stats, 0, sizeof(*stats));
		stats->insns = n_insns;
		stats->processed = env.processed;
		stats->peak_states = env.peak_states;
		stats->memory_bytes = memory;
		stats->worst_case_insns = env.worst_cost;
		stats->ctx_read = env.ctx_read;
		stats->ctx_words = env.ctx_words;
		stats->ctx_written = env.ctx_written;
		stats->time_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull +
				 (uint64_t)(t1.tv_nsec - t0.tv_nsec);
	}
	if (!rc && env.log_on)
		vlog(&env, "processed %llu insns, peak states %u, worst-case path %llu insns\n",
		     (unsigned long long)env.processed, env.peak_states,
		     (unsigned long long)env.worst_cost);
	return rc;
}
