/* Tristate number arithmetic (the abstract domain of individual bits). Each operation returns a
 * tnum that contains every concrete result of the operation on members of its inputs. */
#include "tnum.h"

struct tnum tnum_range(uint64_t min, uint64_t max)
{
	uint64_t chi = min ^ max, delta;
	int bits;

	if (min > max)
		return tnum_unknown;
	if (!chi)
		return tnum_const(min);
	bits = 64 - __builtin_clzll(chi);
	/* bits differ somewhere in the low `bits` bits: all of them are unknown */
	if (bits > 63)
		return tnum_unknown;
	delta = (1ull << bits) - 1;
	return TNUM(min & ~delta, delta);
}

struct tnum tnum_lshift(struct tnum a, uint8_t shift)
{
	return TNUM(a.value << shift, a.mask << shift);
}

struct tnum tnum_rshift(struct tnum a, uint8_t shift)
{
	return TNUM(a.value >> shift, a.mask >> shift);
}

struct tnum tnum_arshift(struct tnum a, uint8_t shift, uint8_t bits)
{
	/* Sign-extend from `bits` first so the sign bit (known or unknown) fills the top. */
	if (bits == 32)
		return TNUM((uint32_t)(((int32_t)a.value) >> shift),
			    (uint32_t)(((int32_t)a.mask) >> shift));
	return TNUM((uint64_t)((int64_t)a.value >> shift), (uint64_t)((int64_t)a.mask >> shift));
}

struct tnum tnum_add(struct tnum a, struct tnum b)
{
	uint64_t sm = a.mask + b.mask, sv = a.value + b.value, sigma = sm + sv;
	uint64_t chi = sigma ^ sv, mu = chi | a.mask | b.mask;

	return TNUM(sv & ~mu, mu);
}

struct tnum tnum_sub(struct tnum a, struct tnum b)
{
	uint64_t dv = a.value - b.value, alpha = dv + a.mask, beta = dv - b.mask;
	uint64_t chi = alpha ^ beta, mu = chi | a.mask | b.mask;

	return TNUM(dv & ~mu, mu);
}

struct tnum tnum_and(struct tnum a, struct tnum b)
{
	uint64_t alpha = a.value | a.mask, beta = b.value | b.mask, v = a.value & b.value;

	return TNUM(v, alpha & beta & ~v);
}

struct tnum tnum_or(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value, mu = a.mask | b.mask;

	return TNUM(v, mu & ~v);
}

struct tnum tnum_xor(struct tnum a, struct tnum b)
{
	uint64_t v = a.value ^ b.value, mu = a.mask | b.mask;

	return TNUM(v & ~mu, mu);
}

/* Shift-and-add multiplication: for each bit of a, add b shifted (known 1) or a tnum that may
 * be 0 or b shifted (unknown). */
struct tnum tnum_mul(struct tnum a, struct tnum b)
{
	struct tnum acc_v = tnum_const(a.value * b.value);
	struct tnum acc_m = tnum_const(0);

	while (a.value || a.mask) {
		if (a.value & 1)
			acc_m = tnum_add(acc_m, TNUM(0, b.mask));
		else if (a.mask & 1)
			acc_m = tnum_add(acc_m, TNUM(0, b.value | b.mask));
		a = tnum_rshift(a, 1);
		b = tnum_lshift(b, 1);
	}
	return tnum_add(acc_v, acc_m);
}

struct tnum tnum_intersect(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value, mu = a.mask & b.mask;

	return TNUM(v & ~mu, mu);
}

struct tnum tnum_union(struct tnum a, struct tnum b)
{
	uint64_t mu = a.mask | b.mask | (a.value ^ b.value);

	return TNUM(a.value & ~mu, mu);
}

struct tnum tnum_cast(struct tnum a, uint8_t size)
{
	if (size >= 8)
		return a;
	a.value &= (1ull << (size * 8)) - 1;
	a.mask &= (1ull << (size * 8)) - 1;
	return a;
}

bool tnum_in(struct tnum a, struct tnum b)
{
	if (b.mask & ~a.mask)
		return false;
	b.value &= ~a.mask;
	return a.value == b.value;
}

bool tnum_overlap(struct tnum a, struct tnum b)
{
	uint64_t mu = a.mask | b.mask;

	return (a.value & ~mu) == (b.value & ~mu);
}

int tnum_sbin(char *buf, unsigned long len, struct tnum a)
{
	unsigned long n;

	for (n = 64; n; n--) {
		if (n < len) {
			if (a.mask & 1)
				buf[n - 1] = 'x';
			else if (a.value & 1)
				buf[n - 1] = '1';
			else
				buf[n - 1] = '0';
		}
		a.mask >>= 1;
		a.value >>= 1;
	}
	if (len)
		buf[len < 65 ? len - 1 : 64] = '\0';
	return 64;
}
