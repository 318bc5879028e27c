/* The generator's internals, shared by its emitters (gen.c: instructions, control flow and
 * functions; gen_maps.c: maps and helpers). A new program pattern is a family bit in gen.h and
 * one emitter, in a file of its own that includes this header, plus a row in gen_maps.c's
 * pattern table (gen__map_item) or a branch in gen.c's gen_item:
 *
 *   static void emit_my_pattern(struct gen *g);   // emits a few instructions
 *
 * A pattern of a new family must draw no random numbers when its family is off, so that the
 * programs of existing seeds (regression tests name some) stay the same.
 *
 * Emitters keep the generator's invariants (gen.h): every register they read is initialised
 * (g->init), they never write a locked loop counter (g->locked) and leave every register of
 * g->keep readable, every pointer they create dies before the emitter returns (reset to a
 * scalar), every jump stays inside the emitted block, and they stop before g->limit. */
#ifndef NCCLBPF_TEST_GEN_INTERNAL_H
#define NCCLBPF_TEST_GEN_INTERNAL_H

#include <string.h>

#include "gen.h"

#define GEN_BUF_REG 9

struct gen_rng {
	uint64_t s[4];
};

struct gen {
	struct gen_rng rng;
	struct gen_prog *p;
	uint32_t fam;
	uint32_t max_len, max_loop_iters, max_depth, n_funcs;
	int has_buf;
	/* current function */
	int func;
	uint32_t win;	 /* stack window bytes */
	uint16_t init;	 /* registers readable */
	uint16_t locked; /* loop counters: readable, not writable */
	uint16_t keep;	 /* registers that must stay readable (live into an enclosing loop) */
	uint16_t ptrs;	 /* registers holding a pointer right now (besides r9 and r10) */
	int ptr_tmp;	 /* register holding a computed buffer pointer for one access, or -1 */
	uint32_t unsafe_pct;
	uint32_t items; /* body items left */
	uint32_t limit; /* last pc usable by the body */
	int loop_depth;
	/* call fixups */
	uint32_t n_fix;
	uint32_t fix_pc[GEN_MAX_INSNS];
	uint8_t fix_target[GEN_MAX_INSNS];
	int called[GEN_MAX_FUNCS];
};

/* --- randomness (xoshiro256**) -------------------------------------------------------------- */

static inline uint64_t gen_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t gen_next64(struct gen_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = gen_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = gen_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n), n > 0. The modulo bias is irrelevant here. */
static inline uint32_t gen_below(struct gen *g, uint32_t n)
{
	return (uint32_t)(gen_next64(&g->rng) % n);
}

/* 1 with probability pct percent. */
static inline int gen_chance(struct gen *g, uint32_t pct)
{
	return gen_below(g, 100) < pct;
}

/* 1 (and counted in the program's n_unsafe) when this access should be deliberately unsafe. */
static inline int gen_unsafe(struct gen *g)
{
	if (!g->unsafe_pct || !gen_chance(g, g->unsafe_pct))
		return 0;
	g->p->n_unsafe++;
	return 1;
}

/* The largest power of two <= v (v > 0). */
static inline uint32_t gen_floor_pow2(uint32_t v)
{
	uint32_t p = 1;
	while (p * 2 <= v)
		p *= 2;
	return p;
}

/* --- emitting ------------------------------------------------------------------------------- */

static inline int gen_has(const struct gen *g, uint32_t f)
{
	return (g->fam & f) != 0;
}

static inline uint32_t gen_pc(const struct gen *g)
{
	return g->p->n_insns;
}

static inline void gen_emit(struct gen *g, uint8_t code, int dst, int src, int16_t off, int32_t imm)
{
	struct ebpf_insn *i = &g->p->insns[g->p->n_insns++];
	memset(i, 0, sizeof(*i));
	i->code = code;
	i->dst_reg = (uint8_t)dst;
	i->src_reg = (uint8_t)src;
	i->off = off;
	i->imm = imm;
}

/* A 64-bit immediate load (two instruction slots); src is EBPF_PSEUDO_MAP_* or 0. */
static inline void gen_emit_lddw(struct gen *g, int dst, int src, int32_t lo, int32_t hi)
{
	gen_emit(g, EBPF_LD | EBPF_DW | EBPF_IMM, dst, src, 0, lo);
	gen_emit(g, 0, 0, 0, 0, hi);
}

/* Points the forward jump at `at` to the next instruction. */
static inline void gen_patch_fwd(struct gen *g, uint32_t at)
{
	g->p->insns[at].off = (int16_t)(gen_pc(g) - at - 1);
}

static inline void gen_mark_init(struct gen *g, int r)
{
	g->init |= (uint16_t)(1u << r);
}

/* --- registers and values (gen.c) ----------------------------------------------------------- */

/* 1 when r holds a scalar the program may compute with (not r9's buffer, r10 or a pointer). */
int gen__is_scalar_reg(const struct gen *g, int r);
/* A random readable scalar register (r0 is always readable after the prologue). */
int gen__pick_read(struct gen *g);
/* A random writable scalar register from r<lo> up, or -1. */
int gen__pick_write_from(struct gen *g, int lo);
/* dst = a random value, in one of the ways a compiler would set a register. */
void gen__set_reg(struct gen *g, int dst);
int32_t gen__interesting_imm(struct gen *g);
uint64_t gen__interesting_u64(struct gen *g);
/* An ALU instruction on a random scalar register. */
void gen__alu(struct gen *g);
/* A load, store or atomic on the stack window or the buffer. */
void gen__mem(struct gen *g);
/* Picks the base register and offset of an access of 1 << lg bytes (aligned when must_align);
 * 0, or -1 when no such access fits. May emit instructions that compute the base. */
typedef int (*gen_addr_fn)(struct gen *g, void *ctx, int lg, int must_align, int *base,
			   int16_t *off);
/* A load (sign-extending with GEN_MEMSX), a store of a register or an immediate, or an atomic
 * (with GEN_ATOMIC) at an address pick chooses. */
void gen__mem_access(struct gen *g, gen_addr_fn pick, void *ctx);

/* --- maps and helpers (gen_maps.c) ---------------------------------------------------------- */

/* One map or helper pattern (lookup and value accesses, update/delete, ring buffer record,
 * ring buffer output, a rank-local helper), chosen among the enabled GEN_MAP_FAMILIES. */
void gen__map_item(struct gen *g);
/* The program's map table from the options (the default set when opts->maps is NULL). */
int gen__maps_from_opts(const struct gen_opts *o, struct gen_prog *out);

#endif
