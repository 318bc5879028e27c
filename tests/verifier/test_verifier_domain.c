/* Soundness of the abstract domain, by sampling: for random abstract scalars A and B and random
 * members a of A and b of B, the concrete result of every ALU operation must be a member of the
 * abstract result, branch decisions must agree with the concrete comparison, and narrowing on
 * the side the concrete values take must keep them. Uses the verifier's internal functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "state.h"

static uint64_t rs = 0x243f6a8885a308d3ull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static uint64_t interesting(void)
{
	static const uint64_t v[] = {0,
				     1,
				     2,
				     7,
				     8,
				     31,
				     32,
				     63,
				     64,
				     255,
				     256,
				     0x7fffffff,
				     0x80000000,
				     0xffffffff,
				     0x100000000ull,
				     0x7fffffffffffffffull,
				     0x8000000000000000ull,
				     ~0ull,
				     ~0ull - 1,
				     (uint64_t)-8};
	uint64_t r = rnd();
	switch (r % 4) {
	case 0:
		return v[(r >> 8) % (sizeof(v) / sizeof(v[0]))];
	case 1:
		return (r >> 8) % 300;
	case 2:
		return (uint64_t) - (int64_t)((r >> 8) % 300);
	default:
		return rnd();
	}
}

/* A random abstract value and a way to draw its members. */
struct absval {
	struct reg r;
};

static bool member(const struct reg *r, uint64_t v)
{
	return v >= r->umin && v <= r->umax && (int64_t)v >= r->smin && (int64_t)v <= r->smax &&
	       (uint32_t)v >= r->u32_min && (uint32_t)v <= r->u32_max && (int32_t)v >= r->s32_min &&
	       (int32_t)v <= r->s32_max && (v & ~r->var_off.mask) == r->var_off.value;
}

static void make(struct reg *r, uint64_t *sample)
{
	uint64_t a = interesting(), b = interesting();

	switch (rnd() % 4) {
	case 0: /* constant */
		reg_mark_const(r, a);
		*sample = a;
		return;
	case 1: { /* unsigned range */
		uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
		reg_mark_range(r, lo, hi);
		*sample = hi - lo == ~0ull ? rnd() : lo + rnd() % (hi - lo + 1);
		break;
	}
	case 2: { /* signed range */
		int64_t lo = (int64_t)a < (int64_t)b ? (int64_t)a : (int64_t)b;
		int64_t hi = (int64_t)a < (int64_t)b ? (int64_t)b : (int64_t)a;
		uint64_t span = (uint64_t)hi - (uint64_t)lo;
		reg_mark_unknown(r);
		r->smin = lo;
		r->smax = hi;
		scalar_sync(r);
		*sample = (uint64_t)lo + (span == ~0ull ? rnd() : rnd() % (span + 1));
		break;
	}
	default: { /* bits */
		uint64_t mask = rnd() & rnd();
		reg_mark_unknown(r);
		r->var_off = tnum_const(a & ~mask);
		r->var_off.mask = mask;
		scalar_sync(r);
		*sample = (a & ~mask) | (rnd() & mask);
		break;
	}
	}
}

static uint64_t eval(uint8_t op, uint64_t x, uint64_t y, bool is64)
{
	if (!is64) {
		uint32_t a = (uint32_t)x, b = (uint32_t)y;
		switch (op) {
		case EBPF_ADD:
			return (uint32_t)(a + b);
		case EBPF_SUB:
			return (uint32_t)(a - b);
		case EBPF_MUL:
			return (uint32_t)(a * b);
		case EBPF_AND:
			return a & b;
		case EBPF_OR:
			return a | b;
		case EBPF_XOR:
			return a ^ b;
		case EBPF_LSH:
			return (uint32_t)(a << (b & 31));
		case EBPF_RSH:
			return a >> (b & 31);
		case EBPF_ARSH:
			return (uint32_t)((int32_t)a >> (b & 31));
		case EBPF_DIV:
			return b ? a / b : 0;
		case EBPF_MOD:
			return b ? a % b : a;
		default:
			return b; /* MOV */
		}
	}
	switch (op) {
	case EBPF_ADD:
		return x + y;
	case EBPF_SUB:
		return x - y;
	case EBPF_MUL:
		return x * y;
	case EBPF_AND:
		return x & y;
	case EBPF_OR:
		return x | y;
	case EBPF_XOR:
		return x ^ y;
	case EBPF_LSH:
		return x << (y & 63);
	case EBPF_RSH:
		return x >> (y & 63);
	case EBPF_ARSH:
		return (uint64_t)((int64_t)x >> (y & 63));
	case EBPF_DIV:
		return y ? x / y : 0;
	case EBPF_MOD:
		return y ? x % y : x;
	default:
		return y;
	}
}

static bool cond(uint8_t op, uint64_t x, uint64_t y, bool is64)
{
	if (!is64) {
		x = (uint32_t)x;
		y = (uint32_t)y;
	}
	int64_t sx = is64 ? (int64_t)x : (int32_t)x, sy = is64 ? (int64_t)y : (int32_t)y;
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
	case EBPF_JSGT:
		return sx > sy;
	case EBPF_JSGE:
		return sx >= sy;
	case EBPF_JSLT:
		return sx < sy;
	case EBPF_JSLE:
		return sx <= sy;
	default:
		return (x & y) != 0; /* JSET */
	}
}

static int reported;
static void report(const char *what, uint8_t op, bool is64, const struct reg *a,
		   const struct reg *b, const struct reg *res, uint64_t x, uint64_t y, uint64_t v)
{
	char da[256], db[256], dr[256];
	if (reported++ > 10)
		return;
	reg_describe(a, da, sizeof(da));
	reg_describe(b, db, sizeof(db));
	reg_describe(res, dr, sizeof(dr));
	fprintf(stderr, "%s op 0x%x %s: A=%s B=%s x=0x%llx y=0x%llx -> 0x%llx not in %s\n", what,
		op, is64 ? "64" : "32", da, db, (unsigned long long)x, (unsigned long long)y,
		(unsigned long long)v, dr);
}

int main(int argc, char **argv)
{
	static const uint8_t alu[] = {EBPF_ADD, EBPF_SUB, EBPF_MUL,  EBPF_AND, EBPF_OR,	 EBPF_XOR,
				      EBPF_LSH, EBPF_RSH, EBPF_ARSH, EBPF_DIV, EBPF_MOD, EBPF_MOV};
	static const uint8_t jmp[] = {EBPF_JEQ,	 EBPF_JNE,  EBPF_JGT,  EBPF_JGE,
				      EBPF_JLT,	 EBPF_JLE,  EBPF_JSGT, EBPF_JSGE,
				      EBPF_JSLT, EBPF_JSLE, EBPF_JSET};
	long iters = argc > 1 ? atol(argv[1]) : 300000;

	for (long it = 0; it < iters; it++) {
		struct reg a, b, r;
		uint64_t x, y, v;
		bool is64 = rnd() & 1;

		make(&a, &x);
		make(&b, &y);
		CHECK(member(&a, x));
		CHECK(member(&b, y));
		if (!member(&a, x) || !member(&b, y)) {
			report("sample", 0, is64, &a, &b, &a, x, y, x);
			continue;
		}
		/* ALU */
		uint8_t op = alu[rnd() % sizeof(alu)];
		if ((op == EBPF_DIV || op == EBPF_MOD) && (is64 ? b.umin == 0 : b.u32_min == 0))
			op = EBPF_ADD; /* the verifier rejects possible zero divisors */
		r = a;
		scalar_alu(&r, &b, op, is64, false);
		v = eval(op, x, y, is64);
		if (!member(&r, v)) {
			CHECK(member(&r, v));
			report("alu", op, is64, &a, &b, &r, x, y, v);
		}
		/* sign extension and byte swaps */
		{
			int bits = 8 << (rnd() % 3);
			struct reg s = a;
			uint64_t m = x & ((1ull << bits) - 1);
			if (m >> (bits - 1))
				m |= ~0ull << bits;
			scalar_sext(&s, bits, false);
			if (!member(&s, m)) {
				CHECK(member(&s, m));
				report("sext", (uint8_t)bits, true, &a, &a, &s, x, 0, m);
			}
			s = a;
			scalar_bswap(&s, 16 << (rnd() % 3), true);
			(void)s;
		}
		/* branches */
		uint8_t jop = jmp[rnd() % sizeof(jmp)];
		bool c = cond(jop, x, y, is64);
		int t = scalar_branch_taken(&a, &b, jop, is64);
		if (t >= 0 && t != (int)c) {
			CHECK(t == (int)c);
			report("taken", jop, is64, &a, &b, &a, x, y, (uint64_t)c);
		}
		struct reg ra = a, rb = b;
		bool ok = scalar_refine(&ra, &rb, jop, is64, c);
		if (!ok || !member(&ra, x) || !member(&rb, y)) {
			CHECK(ok && member(&ra, x) && member(&rb, y));
			report(c ? "refine-taken" : "refine-not-taken", jop, is64, &a, &b,
			       !member(&ra, x) ? &ra : &rb, x, y, !member(&ra, x) ? x : y);
		}
	}
	return check_summary("test_verifier_domain");
}
