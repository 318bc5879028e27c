/* Conditional jumps on scalars: deciding branches whose outcome the ranges already fix, and
 * narrowing both operands on each side of an undecided branch. */
#include "state.h"

/* Bounds of one width viewed uniformly. */
struct view {
	uint64_t umin, umax;
	int64_t smin, smax;
	struct tnum t;
};

/* Signed order is the unsigned order of the values with the sign bit flipped: one rule serves
 * both orders. */
#define SIGN_BIT (1ull << 63)

static uint64_t flip_sign(int64_t v)
{
	return (uint64_t)v ^ SIGN_BIT;
}

static struct view view_of(const struct reg *r, bool is64)
{
	struct view v;

	if (is64) {
		v.umin = r->umin;
		v.umax = r->umax;
		v.smin = r->smin;
		v.smax = r->smax;
		v.t = r->var_off;
	} else {
		v.umin = r->u32_min;
		v.umax = r->u32_max;
		v.smin = r->s32_min;
		v.smax = r->s32_max;
		v.t = tnum_subreg(r->var_off);
	}
	return v;
}

static void view_store(struct reg *r, const struct view *v, bool is64)
{
	if (is64) {
		r->umin = v->umin;
		r->umax = v->umax;
		r->smin = v->smin;
		r->smax = v->smax;
		r->var_off = v->t;
	} else {
		r->u32_min = (uint32_t)v->umin;
		r->u32_max = (uint32_t)v->umax;
		r->s32_min = (int32_t)v->smin;
		r->s32_max = (int32_t)v->smax;
		r->var_off = tnum_with_subreg(r->var_off, v->t);
	}
}

static bool view_equal(const struct view *x, const struct view *y)
{
	return x->umin == y->umin && x->umax == y->umax && x->smin == y->smin &&
	       x->smax == y->smax && x->t.value == y->t.value && x->t.mask == y->t.mask;
}

static bool v_const(const struct view *v)
{
	return tnum_is_const(v->t);
}

static uint8_t negate_op(uint8_t op)
{
	switch (op) {
	case EBPF_JEQ:
		return EBPF_JNE;
	case EBPF_JNE:
		return EBPF_JEQ;
	case EBPF_JGT:
		return EBPF_JLE;
	case EBPF_JLE:
		return EBPF_JGT;
	case EBPF_JGE:
		return EBPF_JLT;
	case EBPF_JLT:
		return EBPF_JGE;
	case EBPF_JSGT:
		return EBPF_JSLE;
	case EBPF_JSLE:
		return EBPF_JSGT;
	case EBPF_JSGE:
		return EBPF_JSLT;
	case EBPF_JSLT:
		return EBPF_JSGE;
	default:
		return 0xff; /* JSET not taken */
	}
}

/* a > b (strict) or a >= b in an unsigned order: 1 always, 0 never, -1 either way. */
static int order_taken(uint64_t amin, uint64_t amax, uint64_t bmin, uint64_t bmax, bool strict)
{
	if (strict)
		return amin > bmax ? 1 : amax <= bmin ? 0 : -1;
	return amin >= bmax ? 1 : amax < bmin ? 0 : -1;
}

static int taken_view(const struct view *a, const struct view *b, uint8_t op)
{
	switch (op) {
	case EBPF_JEQ:
		if (v_const(a) && v_const(b))
			return a->t.value == b->t.value;
		if (a->umin > b->umax || a->umax < b->umin || a->smin > b->smax ||
		    a->smax < b->smin || !tnum_overlap(a->t, b->t))
			return 0;
		return -1;
	case EBPF_JNE: {
		int r = taken_view(a, b, EBPF_JEQ);
		return r < 0 ? r : !r;
	}
	case EBPF_JGT:
	case EBPF_JGE:
		return order_taken(a->umin, a->umax, b->umin, b->umax, op == EBPF_JGT);
	case EBPF_JLT:
		return taken_view(b, a, EBPF_JGT);
	case EBPF_JLE:
		return taken_view(b, a, EBPF_JGE);
	case EBPF_JSGT:
	case EBPF_JSGE:
		return order_taken(flip_sign(a->smin), flip_sign(a->smax), flip_sign(b->smin),
				   flip_sign(b->smax), op == EBPF_JSGT);
	case EBPF_JSLT:
		return taken_view(b, a, EBPF_JSGT);
	case EBPF_JSLE:
		return taken_view(b, a, EBPF_JSGE);
	case EBPF_JSET:
		if (a->t.value & b->t.value)
			return 1;
		if (!((a->t.value | a->t.mask) & (b->t.value | b->t.mask)))
			return 0;
		return -1;
	default:
		return -1;
	}
}

int scalar_branch_taken(const struct reg *a, const struct reg *b, uint8_t op, bool is64)
{
	struct view va = view_of(a, is64), vb = view_of(b, is64);

	return taken_view(&va, &vb, op);
}

static uint64_t u_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}
static uint64_t u_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}
static int64_t s_max(int64_t a, int64_t b)
{
	return a > b ? a : b;
}
static int64_t s_min(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* a > b (strict) or a >= b in an unsigned order whose values run from lo to hi: a's minimum
 * rises to b's (above it when strict), b's maximum falls to a's. False when it cannot hold. */
static bool narrow_ge(uint64_t *amin, uint64_t amax, uint64_t bmin, uint64_t *bmax, uint64_t lo,
		      uint64_t hi, bool strict)
{
	if (strict) {
		if (bmin == hi || amax == lo)
			return false;
		bmin++;
		amax--;
	}
	*amin = u_max(*amin, bmin);
	*bmax = u_min(*bmax, amax);
	return true;
}

/* Narrow a and b assuming "a OP b" holds. Returns false when it cannot hold. */
static bool refine_view(struct view *a, struct view *b, uint8_t op, bool is64)
{
	uint64_t umaxv = is64 ? U64_MAX : U32_MAX;
	int64_t smaxv = is64 ? S64_MAX : S32_MAX, sminv = is64 ? S64_MIN : S32_MIN;

	switch (op) {
	case EBPF_JEQ:
		if (!tnum_overlap(a->t, b->t))
			return false;
		a->umin = b->umin = u_max(a->umin, b->umin);
		a->umax = b->umax = u_min(a->umax, b->umax);
		a->smin = b->smin = s_max(a->smin, b->smin);
		a->smax = b->smax = s_min(a->smax, b->smax);
		a->t = b->t = tnum_intersect(a->t, b->t);
		break;
	case EBPF_JNE:
		if (v_const(b)) {
			uint64_t c = b->t.value;
			int64_t sc = is64 ? (int64_t)c : (int64_t)(int32_t)c;
			if (v_const(a) && a->t.value == c)
				return false;
			if ((a->umin == c && a->umax == c) || (a->smin == sc && a->smax == sc))
				return false;
			if (a->umin == c)
				a->umin++;
			else if (a->umax == c)
				a->umax--;
			if (a->smin == sc)
				a->smin++;
			else if (a->smax == sc)
				a->smax--;
		} else if (v_const(a)) {
			return refine_view(b, a, op, is64);
		}
		break;
	case EBPF_JGT:
	case EBPF_JGE:
		if (!narrow_ge(&a->umin, a->umax, b->umin, &b->umax, 0, umaxv, op == EBPF_JGT))
			return false;
		break;
	case EBPF_JLT:
		return refine_view(b, a, EBPF_JGT, is64);
	case EBPF_JLE:
		return refine_view(b, a, EBPF_JGE, is64);
	case EBPF_JSGT:
	case EBPF_JSGE: {
		uint64_t amin = flip_sign(a->smin), bmax = flip_sign(b->smax);
		if (!narrow_ge(&amin, flip_sign(a->smax), flip_sign(b->smin), &bmax,
			       flip_sign(sminv), flip_sign(smaxv), op == EBPF_JSGT))
			return false;
		a->smin = (int64_t)(amin ^ SIGN_BIT);
		b->smax = (int64_t)(bmax ^ SIGN_BIT);
		break;
	}
	case EBPF_JSLT:
		return refine_view(b, a, EBPF_JSGT, is64);
	case EBPF_JSLE:
		return refine_view(b, a, EBPF_JSGE, is64);
	case EBPF_JSET:
		/* a single known bit tested set becomes known */
		if (v_const(b) && b->t.value && !(b->t.value & (b->t.value - 1))) {
			if (!(a->t.mask & b->t.value) && !(a->t.value & b->t.value))
				return false;
			a->t.value |= b->t.value;
			a->t.mask &= ~b->t.value;
		}
		break;
	case 0xff: /* JSET not taken: every bit of a constant b is clear in a */
		if (v_const(b)) {
			if (a->t.value & b->t.value)
				return false;
			a->t = tnum_and(a->t, tnum_const(~b->t.value));
		}
		break;
	}
	return a->umin <= a->umax && a->smin <= a->smax && b->umin <= b->umax && b->smin <= b->smax;
}

bool scalar_refine(struct reg *a, struct reg *b, uint8_t op, bool is64, bool taken)
{
	struct view va = view_of(a, is64), vb = view_of(b, is64);

	if (!taken)
		op = negate_op(op);
	struct view oa = va, ob = vb;

	if (!refine_view(&va, &vb, op, is64))
		return false;
	/* an operand the branch did not narrow stays as it was (most comparisons of two unknown
	 * values narrow nothing; an immediate operand is a constant) */
	if (!view_equal(&va, &oa)) {
		view_store(a, &va, is64);
		scalar_sync(a);
		if (scalar_is_empty(a))
			return false;
	}
	if (!view_equal(&vb, &ob)) {
		view_store(b, &vb, is64);
		scalar_sync(b);
		if (scalar_is_empty(b))
			return false;
	}
	return true;
}
