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
		size_t bytes;
		uint64_t *h;
		if (cap > MAX_HIST) {
			st->hist_overflow = true;
			return;
		}
		h = arena_regrow(&env->arena, st->hist, st->cap_hist * sizeof(*h),
				 st->n_hist * sizeof(*h), cap * sizeof(*h), &bytes);
		if (!h) {
			st->hist_overflow = true;
			return;
		}
		st->hist = h;
		st->cap_hist = (uint32_t)(bytes / sizeof(*h));
	}
	st->hist[st->n_hist++] = pc;
}

#define HIST_SLOT   (1ull << 63)
#define HIST_LINKED (1ull << 62)

void hist_note_linked(struct env *env)
{
	struct vstate *st = &env->cur;

	if (!st->hist_overflow && st->n_hist)
		st->hist[st->n_hist - 1] |= HIST_LINKED;
}

void hist_note_slot(struct env *env, uint32_t frameno, uint32_t slot)
{
	struct vstate *st = &env->cur;

	if (!st->hist_overflow && st->n_hist)
		st->hist[st->n_hist - 1] |=
		    HIST_SLOT | ((uint64_t)frameno << 32) | ((uint64_t)slot << 40);
}

void precise_all(struct checkpoint *cp)
{
	for (; cp && !cp->all_precise; cp = cp->st.parent)
		cp->all_precise = true;
}

#define BIT(r) ((uint16_t)(1u << (r)))

/* Registers needed before an instruction, given those needed after it. The trace walks one
 * frame at a time (wf); `saved` holds the masks of the frames below it, innermost last. */
struct bt {
	uint16_t mask;
	uint32_t wf, n_saved;
	uint16_t saved[EBPF_MAX_FRAMES];
	uint64_t slots[EBPF_MAX_FRAMES]; /* by absolute frame number */
};

static bool bt_empty(const struct bt *bt)
{
	if (bt->mask)
		return false;
	for (uint32_t k = 0; k < bt->n_saved; k++)
		if (bt->saved[k])
			return false;
	for (uint32_t k = 0; k < EBPF_MAX_FRAMES; k++)
		if (bt->slots[k])
			return false;
	return true;
}

static bool backtrack_insn(const struct ebpf_insn *i, uint64_t h, struct bt *bt)
{
	uint8_t cls = EBPF_CLASS(i->code), op = EBPF_OP(i->code);
	uint16_t d = BIT(i->dst_reg), s = BIT(i->src_reg), *mask = &bt->mask;
	bool x = EBPF_SRC(i->code) == EBPF_X;
	bool is_slot = h & HIST_SLOT;
	uint32_t sf = (uint32_t)(h >> 32) & 7, sk = (uint32_t)(h >> 40) & 63;
	uint64_t sbit = 1ull << sk;

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
		/* a fill or narrow load of the stack depends on the slot; other loads carry no
		 * range that a state could differ in (context, maps) */
		if ((*mask & d) && is_slot)
			bt->slots[sf] |= sbit;
		*mask &= (uint16_t)~d;
		return true;
	case EBPF_ST:
		/* only a whole-slot store replaces everything the slot held */
		if (is_slot && EBPF_SIZE(i->code) == EBPF_DW)
			bt->slots[sf] &= ~sbit;
		return true;
	case EBPF_STX:
		if (EBPF_MODE(i->code) == EBPF_ATOMIC) {
			/* the fetched register holds the old memory value; what is written is
			 * unknown to the analysis, so it needs nothing */
			uint16_t fetched = i->imm == EBPF_CMPXCHG  ? BIT(0)
					   : (i->imm & EBPF_FETCH) ? s
								   : 0;
			bool old_needed = (*mask & fetched) != 0;
			*mask &= (uint16_t)~fetched;
			if (is_slot && EBPF_SIZE(i->code) == EBPF_DW)
				bt->slots[sf] &= ~sbit;
			if (is_slot && old_needed)
				bt->slots[sf] |= sbit;
			return true;
		}
		if (is_slot && (bt->slots[sf] & sbit)) {
			if (EBPF_SIZE(i->code) == EBPF_DW)
				bt->slots[sf] &= ~sbit;
			*mask |= s; /* the store copied the register's range or bytes */
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
			if ((*mask & (uint16_t)~0x3e) || !bt->n_saved || !bt->wf)
				return false;
			*mask = (uint16_t)(bt->saved[--bt->n_saved] | *mask);
			bt->wf--;
			return true;
		}
		if (*mask & 0x3e) /* r1-r5 are dead after a call: cannot be needed */
			return false;
		*mask &= (uint16_t)~BIT(0);
		return true;
	case EBPF_EXIT:
		/* entering, backwards, the callee that just returned: r0 came from it, r6-r9 are
		 * the caller's own (callee-saved) */
		if (bt->n_saved == EBPF_MAX_FRAMES || bt->wf + 1 >= EBPF_MAX_FRAMES ||
		    (*mask & 0x3e))
			return false;
		bt->saved[bt->n_saved++] = *mask & 0x3c0;
		*mask &= BIT(0);
		bt->wf++;
		return true;
	default:
		/* a branch narrowed its operands: when one is needed, the range of the other
		 * (register operand) shaped it. When the branch also narrowed copies of an
		 * operand (HIST_LINKED), any needed register may be such a copy. */
		if ((*mask & (d | (x ? s : 0))) || ((h & HIST_LINKED) && !bt_empty(bt)))
			*mask |= d | (x ? s : 0);
		return true;
	}
}

/* Adds bt's registers and slots to cp; returns true when cp had them all already. */
static bool mark_cp(struct checkpoint *cp, const struct bt *bt)
{
	bool had = true;

	if (cp->st.curframe != bt->wf) { /* cannot happen; stay sound */
		precise_all(cp);
		return true;
	}
	for (uint32_t f = 0; f <= bt->wf; f++) {
		uint16_t m = f == bt->wf ? bt->mask : bt->saved[bt->n_saved - (bt->wf - f)];
		had &= (cp->precise[f] | m) == cp->precise[f];
		cp->precise[f] |= m;
		had &= (cp->precise_slots[f] | bt->slots[f]) == cp->precise_slots[f];
		cp->precise_slots[f] |= bt->slots[f];
	}
	return had;
}

static void trace(struct env *env, struct bt *bt, bool skip_last)
{
	const struct vstate *st = &env->cur;
	const uint64_t *h = st->hist;
	uint32_t n = st->n_hist;
	struct checkpoint *cp = st->parent;
	bool overflow = st->hist_overflow;

	if (skip_last && n)
		n--;
	for (;;) {
		if (overflow) {
			precise_all(cp);
			return;
		}
		for (uint32_t k = n; k-- > 0 && !bt_empty(bt);) {
			if (!backtrack_insn(&env->insns[(uint32_t)h[k]], h[k], bt)) {
				precise_all(cp);
				return;
			}
		}
		if (bt_empty(bt) || !cp || cp->all_precise)
			return;
		/* already traced from here with these registers: the rest was done then */
		if (mark_cp(cp, bt))
			return;
		h = cp->st.hist;
		n = cp->st.n_hist;
		overflow = cp->st.hist_overflow;
		cp = cp->st.parent;
	}
}

void precise_mark(struct env *env, uint16_t mask, bool skip_last)
{
	struct bt bt = {
	    .mask = mask & 0x3ff, .wf = env->cur.curframe, .n_saved = env->cur.curframe};

	trace(env, &bt, skip_last);
}

void precise_from(struct env *env, const struct checkpoint *cp)
{
	struct bt bt = {.wf = env->cur.curframe, .n_saved = env->cur.curframe};

	if (cp->all_precise) {
		precise_all(env->cur.parent);
		return;
	}
	bt.mask = cp->precise[bt.wf] & 0x3ff;
	for (uint32_t f = 0; f < bt.wf; f++)
		bt.saved[f] = cp->precise[f] & 0x3c0;
	for (uint32_t f = 0; f <= bt.wf; f++)
		bt.slots[f] = cp->precise_slots[f];
	trace(env, &bt, false);
}
