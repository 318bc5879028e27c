/* Tristate numbers: a value whose bits are each known-0, known-1 or unknown (value, mask).
 * A bit set in mask is unknown; value has no bit set where mask has one. */
#ifndef EBPF_VERIFIER_TNUM_H
#define EBPF_VERIFIER_TNUM_H

#include <stdbool.h>
#include <stdint.h>

struct tnum {
	uint64_t value;
	uint64_t mask;
};

#define TNUM(v, m) ((struct tnum){.value = (v), .mask = (m)})
static const struct tnum tnum_unknown = {0, ~0ull};

static inline struct tnum tnum_const(uint64_t v)
{
	return TNUM(v, 0);
}
static inline bool tnum_is_const(struct tnum a)
{
	return !a.mask;
}
static inline bool tnum_is_unknown(struct tnum a)
{
	return !~a.mask;
}
static inline bool tnum_equals_const(struct tnum a, uint64_t v)
{
	return tnum_is_const(a) && a.value == v;
}
static inline uint64_t tnum_umin(struct tnum a)
{
	return a.value;
}
static inline uint64_t tnum_umax(struct tnum a)
{
	return a.value | a.mask;
}

struct tnum tnum_range(uint64_t min, uint64_t max);
struct tnum tnum_lshift(struct tnum a, uint8_t shift);
struct tnum tnum_rshift(struct tnum a, uint8_t shift);
struct tnum tnum_arshift(struct tnum a, uint8_t shift, uint8_t bits);
struct tnum tnum_add(struct tnum a, struct tnum b);
struct tnum tnum_sub(struct tnum a, struct tnum b);
struct tnum tnum_and(struct tnum a, struct tnum b);
struct tnum tnum_or(struct tnum a, struct tnum b);
struct tnum tnum_xor(struct tnum a, struct tnum b);
struct tnum tnum_mul(struct tnum a, struct tnum b);
/* Values in both a and b (callers check that they can meet at all). */
struct tnum tnum_intersect(struct tnum a, struct tnum b);
/* Values in a or b. */
struct tnum tnum_union(struct tnum a, struct tnum b);
/* Keep the low `size` bytes. */
struct tnum tnum_cast(struct tnum a, uint8_t size);
/* Is every value of b also a value of a? */
bool tnum_in(struct tnum a, struct tnum b);
/* Can a and b share a value? */
bool tnum_overlap(struct tnum a, struct tnum b);
static inline struct tnum tnum_subreg(struct tnum a)
{
	return tnum_cast(a, 4);
}
/* Replace the low 32 bits of a by those of sub. */
static inline struct tnum tnum_with_subreg(struct tnum a, struct tnum sub)
{
	return TNUM((a.value & ~0xffffffffull) | (sub.value & 0xffffffffull),
		    (a.mask & ~0xffffffffull) | (sub.mask & 0xffffffffull));
}
int tnum_sbin(char *buf, unsigned long len, struct tnum a);

#endif
