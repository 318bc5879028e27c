/* Precision tracking. A stored state may prune a new one whose scalars have other ranges, as
 * long as those ranges never mattered: a scalar range matters when it reaches a pointer offset,
 * a divisor, a helper size, a branch the ranges decided, a spill, or the program's return value.
 * At such a use the registers involved are traced back through the instructions of the current
 * path (data dependence) and marked precise in each checkpoint they pass; states_equal()
 * compares only precise scalars by range. Where the trace cannot follow (calls, returns, a
 * history too long to keep) every register of the checkpoints above is taken as precise. */
#include <stdlib.h>

#include "state.h"

#define MAX_HIST 4096

void hist_push(struct env *env, uint32_t pc)
{
	struct vstate *st = &env->cur;

	if (st->hist_overflow)
		return;
	if (st->n_hist == st->cap_hist) {
		uint32_t cap = st->cap_hist ? st->cap_hist * 2 : 32;
		uint32_t *h;
		if (cap > MAX_HIST) {
			st->hist_overflow = true;
			return;
		}
		h = realloc(st->hist, cap * sizeof(*h));
		if (!h) {
			st->hist_overflow = true;
			return;
		}
		st->hist = h;
		st->cap_hist = cap;
	}
	st->hist[st->n_hist++] = pc;
}

void precise_all(struct checkpoint *cp)
{
	for (; cp && !cp->all_precise; cp = cp->st.parent)
		cp->all_precise = true;
}

#define BIT(r) ((uint16_t)(1u << (r)))

/* Registers needed before an instruction, given those needed after it, per frame: `saved`
 * holds the caller frames' masks while the trace walks backwards through a callee. */
struct bt {
	uint16_t mask;
	uint32_t n_saved;
	uint16_t saved[EBPF_MAX_FRAMES];
};

/* Returns false when the trace cannot continue. */
static bool backtrack_insn(const struct ebpf_insn *i, struct bt *bt)
{
	uint8_t cls = EBPF_CLASS(i->code), op = EBPF_OP(i->code);
	uint16_t d = BIT(i->dst_reg), s = BIT(i->src_reg), *mask = &bt->mask;
	bool x = EBPF_SRC(i->code) == EBPF_X;

	switch (cls) {
	case EBPF_ALU:
	case EBPF_ALU64:
		if (!(*mask & d))
			return true;
		if (op == EBPF_MOV) {
			*mask &= (uint16_t)~d;
			if (x)
				*mask |= s;
		} else if (x && op != EBPF_END) {
			*mask |= s;
		}
		return true;
	case EBPF_LDX:
		/* loaded values depend on memory, whose contents are compared on their own (spills)
		 * or carry no range (bytes, context, maps) */
		*mask &= (uint16_t)~d;
		return true;
	case EBPF_ST:
		return true;
	case EBPF_STX:
		if (EBPF_MODE(i->code) == EBPF_ATOMIC) {
			if (i->imm == EBPF_CMPXCHG)
				*mask &= (uint16_t)~BIT(0);
			else if (i->imm & EBPF_FETCH)
				*mask &= (uint16_t)~s;
		}
		return true;
	case EBPF_LD:
		*mask &= (uint16_t)~d;
		return true;
	default:
		break;
	}
	switch (op) {
	case EBPF_JA:
		return true;
	case EBPF_CALL:
		if (i->src_reg == EBPF_PSEUDO_CALL) {
			/* leaving the callee backwards: its r1-r5 were the caller's arguments */
			if (*mask & (uint16_t)~0x3e)
				return false;
			*mask = (uint16_t)((bt->n_saved ? bt->saved[--bt->n_saved] : 0) | *mask);
			return true;
		}
		if (*mask & 0x3e) /* r1-r5 are dead after a call: cannot be needed */
			return false;
		*mask &= (uint16_t)~BIT(0);
		return true;
	case EBPF_EXIT:
		/* entering, backwards, the callee that just returned: r0 came from it, r6-r9 are
		 * the caller's own (callee-saved) */
		if (bt->n_saved == EBPF_MAX_FRAMES || (*mask & 0x3e))
			return false;
		bt->saved[bt->n_saved++] = *mask & 0x3c0;
		*mask &= BIT(0);
		return true;
	default:
		/* a branch narrowed its operands (and their copies): they shaped what is needed */
		if (*mask)
			*mask |= d | (x ? s : 0);
		return true;
	}
}

static bool bt_empty(const struct bt *bt)
{
	if (bt->mask)
		return false;
	for (uint32_t k = 0; k < bt->n_saved; k++)
		if (bt->saved[k])
			return false;
	return true;
}

void precise_mark(struct env *env, uint16_t mask, bool skip_last)
{
	const struct vstate *st = &env->cur;
	const uint32_t *h = st->hist;
	uint32_t n = st->n_hist;
	struct checkpoint *cp = st->parent;
	bool overflow = st->hist_overflow;
	struct bt bt = {.mask = mask & 0x3ff}; /* r10 is never a scalar */

	if (skip_last && n)
		n--;
	for (;;) {
		if (overflow) {
			precise_all(cp);
			return;
		}
		for (uint32_t k = n; k-- > 0 && !bt_empty(&bt);) {
			if (!backtrack_insn(&env->insns[h[k]], &bt)) {
				precise_all(cp);
				return;
			}
		}
		if (bt_empty(&bt) || !cp)
			return;
		if (cp->all_precise)
			return;
		/* already traced from here with these registers (and nothing pending above) */
		if (!bt.n_saved && (cp->precise | bt.mask) == cp->precise)
			return;
		cp->precise |= bt.mask;
		h = cp->st.hist;
		n = cp->st.n_hist;
		overflow = cp->st.hist_overflow;
		cp = cp->st.parent;
	}
}
