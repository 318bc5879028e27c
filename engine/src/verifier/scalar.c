/* Value ranges of scalars: the eight bounds (signed/unsigned, 64/32-bit) and the tnum, kept
 * consistent by scalar_sync(), and the transfer function of every ALU operation. Every function
 * here over-approximates: the result contains every concrete result. */
#include <string.h>

#include "state.h"

static inline uint64_t umax64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}
static inline uint64_t umin64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}
static inline int64_t smax64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}
static inline int64_t smin64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static void bounds64_reset(struct reg *r)
{
	r->smin = S64_MIN;
	r->smax = S64_MAX;
	r->umin = 0;
	r->umax = U64_MAX;
}

static void bounds32_reset(struct reg *r)
{
	r->s32_min = S32_MIN;
	r->s32_max = S32_MAX;
	r->u32_min = 0;
	r->u32_max = U32_MAX;
}

void reg_bounds_reset(struct reg *r)
{
	bounds64_reset(r);
	bounds32_reset(r);
}

void reg_mark_unknown(struct reg *r)
{
	memset(r, 0, sizeof(*r));
	r->type = SCALAR;
	r->var_off = tnum_unknown;
	reg_bounds_reset(r);
}

void reg_mark_const(struct reg *r, uint64_t v)
{
	memset(r, 0, sizeof(*r));
	r->type = SCALAR;
	r->var_off = tnum_const(v);
	r->smin = r->smax = (int64_t)v;
	r->umin = r->umax = v;
	r->s32_min = r->s32_max = (int32_t)v;
	r->u32_min = r->u32_max = (uint32_t)v;
}

void reg_mark_range(struct reg *r, uint64_t umin, uint64_t umax)
{
	reg_mark_unknown(r);
	r->umin = umin;
	r->umax = umax;
	scalar_sync(r);
}

void reg_mark_not_init(struct reg *r)
{
	reg_mark_unknown(r);
	r->type = NOT_INIT;
}

bool scalar_is_const(const struct reg *r)
{
	return tnum_is_const(r->var_off);
}

bool scalar_is_empty(const struct reg *r)
{
	return r->umin > r->umax || r->smin > r->smax || r->u32_min > r->u32_max ||
	       r->s32_min > r->s32_max || (r->var_off.value & r->var_off.mask);
}

static void tighten_u32(struct reg *r, uint32_t lo, uint32_t hi)
{
	if (r->u32_min < lo)
		r->u32_min = lo;
	if (r->u32_max > hi)
		r->u32_max = hi;
}

static void tighten_s32(struct reg *r, int32_t lo, int32_t hi)
{
	if (r->s32_min < lo)
		r->s32_min = lo;
	if (r->s32_max > hi)
		r->s32_max = hi;
}

/* 64 -> 32 from a 64-bit range [lo, hi] (the unsigned or the signed one, as bits): the low
 * halves are monotonic when the range stays in one 2^32 window. */
static void tighten32_from64(struct reg *r, uint64_t lo, uint64_t hi)
{
	if ((lo >> 32) != (hi >> 32))
		return;
	tighten_u32(r, (uint32_t)lo, (uint32_t)hi);
	if ((int32_t)lo <= (int32_t)hi)
		tighten_s32(r, (int32_t)lo, (int32_t)hi);
}

/* One round of mutual tightening. */
static void sync_once(struct reg *r)
{
	struct tnum t = r->var_off, t32 = tnum_subreg(t);

	/* tnum -> ranges */
	r->umin = umax64(r->umin, t.value);
	r->umax = umin64(r->umax, t.value | t.mask);
	r->smin = smax64(r->smin, (int64_t)(t.value | (t.mask & (1ull << 63))));
	r->smax = smin64(r->smax, (int64_t)(t.value | (t.mask & ~(1ull << 63))));
	tighten_u32(r, (uint32_t)t32.value, (uint32_t)(t32.value | t32.mask));
	tighten_s32(r, (int32_t)(uint32_t)(t32.value | (t32.mask & 0x80000000u)),
		    (int32_t)(uint32_t)(t32.value | (t32.mask & 0x7fffffffu)));

	/* 64-bit: signed <-> unsigned when the range does not cross the sign boundary */
	if ((int64_t)r->umin <= (int64_t)r->umax) {
		r->smin = smax64(r->smin, (int64_t)r->umin);
		r->smax = smin64(r->smax, (int64_t)r->umax);
	}
	if ((uint64_t)r->smin <= (uint64_t)r->smax) {
		r->umin = umax64(r->umin, (uint64_t)r->smin);
		r->umax = umin64(r->umax, (uint64_t)r->smax);
	}

	tighten32_from64(r, r->umin, r->umax);
	tighten32_from64(r, (uint64_t)r->smin, (uint64_t)r->smax);

	/* a 64-bit signed range inside the 32-bit one: the low half is the value itself */
	if (r->smin >= S32_MIN && r->smax <= S32_MAX)
		tighten_s32(r, (int32_t)r->smin, (int32_t)r->smax);

	/* 32-bit: signed <-> unsigned */
	if ((int32_t)r->u32_min <= (int32_t)r->u32_max)
		tighten_s32(r, (int32_t)r->u32_min, (int32_t)r->u32_max);
	if ((uint32_t)r->s32_min <= (uint32_t)r->s32_max)
		tighten_u32(r, (uint32_t)r->s32_min, (uint32_t)r->s32_max);

	/* 32 -> 64 when the upper half is known */
	if (!(t.mask >> 32)) {
		uint64_t hi = t.value & ~0xffffffffull;
		r->umin = umax64(r->umin, hi | r->u32_min);
		r->umax = umin64(r->umax, hi | r->u32_max);
	}

	/* ranges -> tnum */
	if (r->umin <= r->umax)
		r->var_off = tnum_intersect(r->var_off, tnum_range(r->umin, r->umax));
	if (r->u32_min <= r->u32_max)
		r->var_off = tnum_with_subreg(
		    r->var_off,
		    tnum_intersect(tnum_subreg(r->var_off), tnum_range(r->u32_min, r->u32_max)));
}

/* The bounds and tnum of r, to tell whether a round changed anything. */
struct bounds {
	struct tnum t;
	uint64_t umin, umax;
	int64_t smin, smax;
	uint32_t u32_min, u32_max;
	int32_t s32_min, s32_max;
};

static struct bounds bounds_of(const struct reg *r)
{
	return (struct bounds){r->var_off, r->umin,    r->umax,	   r->smin,   r->smax,
			       r->u32_min, r->u32_max, r->s32_min, r->s32_max};
}

static bool bounds_equal(const struct bounds *a, const struct bounds *b)
{
	return a->t.value == b->t.value && a->t.mask == b->t.mask && a->umin == b->umin &&
	       a->umax == b->umax && a->smin == b->smin && a->smax == b->smax &&
	       a->u32_min == b->u32_min && a->u32_max == b->u32_max && a->s32_min == b->s32_min &&
	       a->s32_max == b->s32_max;
}

/* Two rounds; the second only when the first changed something (a round is deterministic, so
 * on an unchanged input it changes nothing: most calls are on already tight bounds). */
void scalar_sync(struct reg *r)
{
	struct bounds before, after;

	/* A known value inside every bound: the rounds would narrow each bound to it (the
	 * result of two rounds, without them; a value outside some bound takes the rounds, which
	 * leave the register empty). */
	if (tnum_is_const(r->var_off)) {
		uint64_t v = r->var_off.value;
		if (r->umin <= v && v <= r->umax && r->smin <= (int64_t)v &&
		    (int64_t)v <= r->smax && r->u32_min <= (uint32_t)v &&
		    (uint32_t)v <= r->u32_max && r->s32_min <= (int32_t)v &&
		    (int32_t)v <= r->s32_max) {
			r->umin = r->umax = v;
			r->smin = r->smax = (int64_t)v;
			r->u32_min = r->u32_max = (uint32_t)v;
			r->s32_min = r->s32_max = (int32_t)v;
			return;
		}
	}
	before = bounds_of(r);
	sync_once(r);
	after = bounds_of(r);
	if (!bounds_equal(&before, &after))
		sync_once(r);
}

/* Keep the low 32 bits and zero-extend (the result of every 32-bit ALU operation). The 32-bit
 * bounds must be synced with the 64-bit ones before. */
void scalar_trunc32(struct reg *r)
{
	r->var_off = tnum_subreg(r->var_off);
	if (r->u32_min > r->u32_max) { /* defensive: should not happen */
		r->u32_min = 0;
		r->u32_max = U32_MAX;
	}
	r->umin = r->u32_min;
	r->umax = r->u32_max;
	r->smin = (int64_t)r->u32_min;
	r->smax = (int64_t)r->u32_max;
	scalar_sync(r);
}

/* Sign-extend the low `bits` bits (8, 16, 32) to 64 bits; with to32 the result is then
 * truncated to 32 bits (32-bit MOVSX). */
void scalar_sext(struct reg *r, int bits, bool to32)
{
	uint64_t half = 1ull << (bits - 1), mask = (half << 1) - 1;
	struct tnum t = tnum_cast(r->var_off, (uint8_t)(bits / 8));
	/* the value's rank label survives the extension (a constant too: it may be a constant
	 * only on this path, chosen by a branch on a rank-local value) */
	uint8_t local = r->local;
	uint32_t taint = r->taint;

	if (tnum_is_const(t)) {
		uint64_t v = t.value;
		if (v & half)
			v |= ~mask;
		reg_mark_const(r, v);
	} else if (r->umax < half) {
		/* already non-negative and narrower: the value is unchanged */
	} else {
		/* top bits copy the (possibly unknown) sign bit */
		struct tnum s =
		    tnum_arshift(tnum_lshift(t, (uint8_t)(64 - bits)), (uint8_t)(64 - bits), 64);
		reg_mark_unknown(r);
		r->var_off = s;
		r->smin = -(int64_t)half;
		r->smax = (int64_t)(half - 1);
		scalar_sync(r);
	}
	if (to32) {
		scalar_sync(r);
		scalar_trunc32(r);
	}
	r->local = local;
	r->taint = taint;
}

/* [alo, ahi] + or - [blo, bhi] in a signed type of range [min, max] (computed in 64 bits): the
 * whole range when an end leaves it. */
static void s_addsub(int64_t alo, int64_t ahi, int64_t blo, int64_t bhi, bool sub, int64_t min,
		     int64_t max, int64_t *lo, int64_t *hi)
{
	/* two statements: both ends are always computed (clang rejects '|' on booleans) */
	bool out_lo =
	    sub ? __builtin_sub_overflow(alo, bhi, lo) : __builtin_add_overflow(alo, blo, lo);
	bool out_hi =
	    sub ? __builtin_sub_overflow(ahi, blo, hi) : __builtin_add_overflow(ahi, bhi, hi);
	bool out = out_lo || out_hi;

	if (out || *lo < min || *lo > max || *hi < min || *hi > max) {
		*lo = min;
		*hi = max;
	}
}

/* The same in an unsigned type of range [0, max]. */
static void u_addsub(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi, bool sub, uint64_t max,
		     uint64_t *lo, uint64_t *hi)
{
	/* two statements: both ends are always computed (clang rejects '|' on booleans) */
	bool out_lo =
	    sub ? __builtin_sub_overflow(alo, bhi, lo) : __builtin_add_overflow(alo, blo, lo);
	bool out_hi =
	    sub ? __builtin_sub_overflow(ahi, blo, hi) : __builtin_add_overflow(ahi, bhi, hi);
	bool out = out_lo || out_hi;

	if (out || *lo > max || *hi > max) {
		*lo = 0;
		*hi = max;
	}
}

/* ADD or SUB: each of the four ranges on its own. */
static void alu_addsub(struct reg *d, const struct reg *a, const struct reg *b, bool sub)
{
	int64_t lo, hi;
	uint64_t ulo, uhi;

	d->var_off = sub ? tnum_sub(a->var_off, b->var_off) : tnum_add(a->var_off, b->var_off);
	s_addsub(a->smin, a->smax, b->smin, b->smax, sub, S64_MIN, S64_MAX, &d->smin, &d->smax);
	u_addsub(a->umin, a->umax, b->umin, b->umax, sub, U64_MAX, &d->umin, &d->umax);
	s_addsub(a->s32_min, a->s32_max, b->s32_min, b->s32_max, sub, S32_MIN, S32_MAX, &lo, &hi);
	d->s32_min = (int32_t)lo;
	d->s32_max = (int32_t)hi;
	u_addsub(a->u32_min, a->u32_max, b->u32_min, b->u32_max, sub, U32_MAX, &ulo, &uhi);
	d->u32_min = (uint32_t)ulo;
	d->u32_max = (uint32_t)uhi;
}

static void alu_mul(struct reg *d, const struct reg *a, const struct reg *b)
{
	uint64_t u;
	int64_t p[4];
	bool ovf = false;

	d->var_off = tnum_mul(a->var_off, b->var_off);
	if (__builtin_mul_overflow(a->umax, b->umax, &u)) {
		d->umin = 0;
		d->umax = U64_MAX;
	} else {
		d->umin = a->umin * b->umin;
		d->umax = u;
	}
	ovf |= __builtin_mul_overflow(a->smin, b->smin, &p[0]);
	ovf |= __builtin_mul_overflow(a->smin, b->smax, &p[1]);
	ovf |= __builtin_mul_overflow(a->smax, b->smin, &p[2]);
	ovf |= __builtin_mul_overflow(a->smax, b->smax, &p[3]);
	if (ovf) {
		d->smin = S64_MIN;
		d->smax = S64_MAX;
	} else {
		d->smin = smin64(smin64(p[0], p[1]), smin64(p[2], p[3]));
		d->smax = smax64(smax64(p[0], p[1]), smax64(p[2], p[3]));
	}
	bounds32_reset(d);
	if ((uint64_t)a->u32_max * b->u32_max <= U32_MAX) {
		d->u32_min = a->u32_min * b->u32_min;
		d->u32_max = a->u32_max * b->u32_max;
	}
}

static void alu_bitwise(struct reg *d, const struct reg *a, const struct reg *b, uint8_t op)
{
	bounds64_reset(d);
	bounds32_reset(d);
	switch (op) {
	case EBPF_AND:
		d->var_off = tnum_and(a->var_off, b->var_off);
		d->umax = umin64(a->umax, b->umax);
		d->u32_max = a->u32_max < b->u32_max ? a->u32_max : b->u32_max;
		break;
	case EBPF_OR:
		d->var_off = tnum_or(a->var_off, b->var_off);
		d->umin = umax64(a->umin, b->umin);
		d->u32_min = a->u32_min > b->u32_min ? a->u32_min : b->u32_min;
		break;
	default: /* XOR */
		d->var_off = tnum_xor(a->var_off, b->var_off);
		break;
	}
}

static void alu_shift(struct reg *d, const struct reg *a, const struct reg *b, uint8_t op,
		      unsigned bits)
{
	uint8_t k;

	bounds64_reset(d);
	bounds32_reset(d);
	if (!tnum_is_const(b->var_off) || b->var_off.value >= bits) {
		/* unknown amount (or an out-of-range one, masked at run time) */
		d->var_off = tnum_unknown;
		if (op == EBPF_RSH && bits == 64 && b->umin > 0 && b->umax < 64)
			d->umax = a->umax >> b->umin;
		return;
	}
	k = (uint8_t)b->var_off.value;
	switch (op) {
	case EBPF_LSH:
		d->var_off = tnum_lshift(a->var_off, k);
		if (a->umax <= (U64_MAX >> k)) {
			d->umin = a->umin << k;
			d->umax = a->umax << k;
		}
		if (a->smin >= 0 && a->smax <= (S64_MAX >> k)) {
			d->smin = a->smin << k;
			d->smax = a->smax << k;
		}
		break;
	case EBPF_RSH:
		d->var_off = tnum_rshift(a->var_off, k);
		d->umin = a->umin >> k;
		d->umax = a->umax >> k;
		break;
	default: /* ARSH on a 64-bit (possibly sign-extended) value */
		d->var_off = tnum_arshift(a->var_off, k, 64);
		d->smin = a->smin >> k;
		d->smax = a->smax >> k;
		break;
	}
}

static void alu_divmod(struct reg *d, const struct reg *a, const struct reg *b, uint8_t op,
		       bool sdiv)
{
	bounds64_reset(d);
	bounds32_reset(d);
	d->var_off = tnum_unknown;
	if (sdiv || b->umin == 0) /* b->umin == 0 only for constant-zero K, rejected earlier */
		return;
	if (op == EBPF_DIV) {
		d->umin = a->umin / b->umax;
		d->umax = a->umax / b->umin;
	} else if (a->umax < b->umin) {
		*d = *a; /* x % y == x when x < y */
	} else {
		d->umax = umin64(a->umax, b->umax - 1);
	}
}

/* A 32-bit operand: the low half of the register, zero-extended. */
static void operand32(struct reg *r)
{
	scalar_sync(r);
	scalar_trunc32(r);
}

void scalar_alu(struct reg *dst, const struct reg *src, uint8_t op, bool is64, bool sdiv)
{
	struct reg a = *dst, b = *src, d;

	if (!is64) {
		operand32(&a);
		operand32(&b);
		if (op == EBPF_ARSH) { /* arithmetic shift of the sign-extended low half */
			scalar_sext(&a, 32, false);
		}
		if (sdiv) {
			scalar_sext(&a, 32, false);
			scalar_sext(&b, 32, false);
		}
	}
	d = a;
	d.id = 0;
	switch (op) {
	case EBPF_ADD:
	case EBPF_SUB:
		alu_addsub(&d, &a, &b, op == EBPF_SUB);
		break;
	case EBPF_MUL:
		alu_mul(&d, &a, &b);
		break;
	case EBPF_AND:
	case EBPF_OR:
	case EBPF_XOR:
		alu_bitwise(&d, &a, &b, op);
		break;
	case EBPF_LSH:
	case EBPF_RSH:
	case EBPF_ARSH:
		alu_shift(&d, &a, &b, op, is64 ? 64 : 32);
		break;
	case EBPF_DIV:
	case EBPF_MOD:
		alu_divmod(&d, &a, &b, op, sdiv);
		break;
	case EBPF_MOV:
		d = b;
		break;
	default:
		reg_mark_unknown(&d);
		break;
	}
	scalar_sync(&d);
	if (scalar_is_empty(&d)) { /* cannot happen with consistent inputs; stay sound */
		d.var_off = tnum_unknown;
		reg_bounds_reset(&d);
	}
	if (!is64)
		scalar_trunc32(&d);
	d.type = SCALAR;
	d.local = dst->local | src->local;
	d.taint = dst->local ? dst->taint : src->taint;
	d.id = 0;
	*dst = d;
}

static uint64_t bswap_bits(uint64_t v, int bits)
{
	switch (bits) {
	case 16:
		return __builtin_bswap16((uint16_t)v);
	case 32:
		return __builtin_bswap32((uint32_t)v);
	default:
		return __builtin_bswap64(v);
	}
}

/* BPF_END: to_be (or the v4 unconditional swap) reverses bytes; to_le on a little-endian host
 * only truncates to `bits`. */
void scalar_bswap(struct reg *r, int bits, bool swap)
{
	uint8_t local = r->local;
	uint32_t taint = r->taint;
	struct tnum t = tnum_cast(r->var_off, (uint8_t)(bits / 8));

	if (!swap) {
		if (bits < 64) {
			scalar_sync(r);
			if (bits == 32) {
				scalar_trunc32(r);
			} else if (tnum_is_const(t)) {
				reg_mark_const(r, t.value);
			} else if (r->umax > 0xffff) {
				reg_mark_range(r, 0, 0xffff);
				r->var_off = tnum_intersect(r->var_off, t);
			}
		}
	} else if (tnum_is_const(t)) {
		reg_mark_const(r, bswap_bits(t.value, bits));
	} else {
		reg_mark_range(r, 0, bits == 64 ? U64_MAX : (1ull << bits) - 1);
	}
	r->local = local;
	r->taint = taint;
	r->id = 0;
}
