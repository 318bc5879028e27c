/* Random eBPF program generator for differential and soundness testing.
 *
 * Deterministic: the same seed and options always give the same program (no global state, no
 * clock), so any failure is reproduced from its seed alone. Every program is structurally valid
 * and accepted by the Linux verifier in the common case (the kernel oracle measures the rate),
 * always terminates (forward jumps; loops count a locked register down from a small constant),
 * and touches only:
 *   - its own stack frame, inside a window [r10 - win, r10) that its prologue initialises
 *     before anything reads it;
 *   - the input buffer [r1, r1 + buf_len) passed at entry (kept in r9), when GEN_BUF is on;
 *   - with the map families (GEN_MAP_FAMILIES, off unless asked for): the values of the maps in
 *     gen_prog.maps (looked up and NULL-checked first), and ring buffer records it reserved
 *     (until it submits or discards them).
 * It never stores a pointer to memory and never returns one; the only pointer arithmetic is
 * on buffer, map value and record pointers, within their bounds.
 *
 * Calling convention (same as `ncclbpf exec`): r1 = buffer address, r2 = buf_len. Without a
 * buffer (buf_len == 0) pass r1 = 0, r2 = 0. The result is r0; each function folds its scalar
 * registers and its whole stack window into r0 before `exit`, so a wrong stack or register
 * state shows up in r0, and a wrong buffer write shows up in the buffer.
 *
 * Layout: function 0 (the entry) first, then its bpf-to-bpf callees; every callee is called
 * (the kernel rejects unreachable code). Callees get the buffer in r1 when there is one.
 *
 * Maps: map i of gen_prog.maps is referenced as a 64-bit immediate load with src_reg
 * EBPF_PSEUDO_MAP_FD (or EBPF_PSEUDO_MAP_VALUE) and imm = i, the engine's convention
 * (ebpf_verify_opts.maps, ebpf_exec_opts.maps); gen_env.h creates matching engine maps and the
 * kernel oracle matching kernel maps. Helpers are called by their Linux numbers (helpers.h).
 *
 * Extending: gen_internal.h says how to add a program pattern (one emitter, one table row). */
#ifndef NCCLBPF_TEST_GEN_H
#define NCCLBPF_TEST_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ebpf/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Instruction families (gen_opts.families). v4 marks instructions the kernel has since 6.6. */
enum gen_family {
	GEN_ALU64 = 1u << 0,	 /* 64-bit add/sub/mul/or/and/xor/mov/neg, imm and reg */
	GEN_ALU32 = 1u << 1,	 /* the same in 32-bit form (upper half zeroed) */
	GEN_DIVMOD = 1u << 2,	 /* unsigned div/mod, incl. division by a zero register */
	GEN_SDIVMOD = 1u << 3,	 /* v4 signed div/mod, incl. INT_MIN / -1 */
	GEN_SHIFT = 1u << 4,	 /* lsh/rsh/arsh, register counts of any size */
	GEN_MOVSX = 1u << 5,	 /* v4 sign-extending moves */
	GEN_BSWAP = 1u << 6,	 /* le/be conversions and v4 unconditional bswap */
	GEN_JMP = 1u << 7,	 /* 64-bit conditional jumps (if / if-else blocks), ja */
	GEN_JMP32 = 1u << 8,	 /* 32-bit conditional jumps */
	GEN_GOTOL = 1u << 9,	 /* v4 ja with a 32-bit offset */
	GEN_LOOP = 1u << 10,	 /* bounded backward loops with a counter register */
	GEN_STACK = 1u << 11,	 /* loads/stores of every size on the stack window */
	GEN_BUF = 1u << 12,	 /* loads/stores of every size on the input buffer */
	GEN_MEMSX = 1u << 13,	 /* v4 sign-extending loads (on stack / buffer as enabled) */
	GEN_ATOMIC = 1u << 14,	 /* atomics (add/or/and/xor +fetch, xchg, cmpxchg; 32/64-bit) */
	GEN_LDIMM64 = 1u << 15,	 /* 64-bit immediate loads */
	GEN_CALL = 1u << 16,	 /* bpf-to-bpf calls (up to GEN_MAX_FUNCS functions) */
	GEN_V4_BSWAP = 1u << 17, /* v4 unconditional bswap (with GEN_BSWAP) */
	GEN_VAROFF = 1u << 18,	 /* buffer accesses through (index & mask) + r9 (with GEN_BUF) */
	/* Maps and helpers: not in GEN_ALL_FAMILIES (drivers must provide the maps, gen_env.h). */
	GEN_MAP_LOOKUP = 1u << 19, /* map_lookup_elem with a NULL check, then loads, stores,
				    * atomics (with GEN_ATOMIC) and constant / masked variable
				    * pointer arithmetic on the value; direct value loads (lddw
				    * map value) of one-element arrays */
	GEN_MAP_UPDATE = 1u << 20, /* map_update_elem / map_delete_elem, key and value on the
				    * stack or the value of a lookup */
	GEN_RINGBUF = 1u << 21,	   /* ringbuf_reserve, accesses inside the record, submit or
				    * discard; ringbuf_output of a stack area with a constant
				    * or masked variable size argument */
	GEN_NONDET = 1u << 22,	   /* ktime_get_ns, get_prandom_u32, get_smp_processor_id:
				    * results differ between runs (verdict and soundness runs
				    * only, not value differentials) */
};
#define GEN_V3_FAMILIES                                                                            \
	(GEN_ALU64 | GEN_ALU32 | GEN_DIVMOD | GEN_SHIFT | GEN_BSWAP | GEN_JMP | GEN_JMP32 |        \
	 GEN_LOOP | GEN_STACK | GEN_BUF | GEN_ATOMIC | GEN_LDIMM64 | GEN_CALL | GEN_VAROFF)
#define GEN_ALL_FAMILIES                                                                           \
	(GEN_V3_FAMILIES | GEN_SDIVMOD | GEN_MOVSX | GEN_GOTOL | GEN_MEMSX | GEN_V4_BSWAP)
/* Deterministic map and helper families (same result on every run from the same map state). */
#define GEN_MAP_FAMILIES (GEN_MAP_LOOKUP | GEN_MAP_UPDATE | GEN_RINGBUF)

#define GEN_MAX_INSNS 4096
#define GEN_MAX_BUF   256 /* bytes */
#define GEN_MAX_FUNCS 4
#define GEN_MAX_MAPS  8

/* A map the generated program may use (Linux's map type numbers, maps.h). */
struct gen_map {
	uint32_t type; /* EBPF_MAP_TYPE_ARRAY, _HASH, _PERCPU_ARRAY, _LRU_HASH, _RINGBUF, ... */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries; /* ring buffer: bytes (a power of two multiple of the page size) */
};

/* The default map set (gen_opts.maps == NULL): an array, a one-element array (global data,
 * direct value loads), a hash, a per-CPU array, an LRU hash and a 4 KiB ring buffer. */
extern const struct gen_map gen_default_maps[];
extern const uint32_t gen_n_default_maps;

struct gen_opts {
	size_t sz;	    /* sizeof(struct gen_opts) */
	uint32_t families;  /* GEN_* mask; 0 = GEN_ALL_FAMILIES */
	uint32_t max_len;   /* body items per function: random in [max_len/4, max_len]; 0 = 40 */
	uint32_t buf_len;   /* buffer bytes (8..GEN_MAX_BUF, multiple of 8); 0 = random */
	uint32_t max_funcs; /* functions incl. the entry when GEN_CALL (1..4); 0 = 4 */
	uint32_t max_loop_iters; /* per loop (1..16); 0 = 5 */
	uint32_t max_depth;	 /* nesting of if/loop blocks; 0 = 3 */
	/* Percentage of memory accesses made deliberately unsafe (0 = none, the default): outside
	 * the buffer, below the initialised stack window or above the frame, or through a mask
	 * too wide for the buffer. For verifier testing: such programs may fault at run time
	 * (the kernel should reject most of them; a bounds-checking run traps them). */
	uint32_t unsafe_pct;
	/* The maps the map families draw from (up to GEN_MAX_MAPS); NULL = gen_default_maps.
	 * Values of 8..512 bytes; keys of 4 or 8 bytes (arrays: 4). */
	const struct gen_map *maps;
	uint32_t n_maps;
};

struct gen_prog {
	uint64_t seed;
	uint32_t families; /* what was enabled */
	uint32_t n_insns;
	uint32_t n_funcs;
	uint32_t func_start[GEN_MAX_FUNCS];
	uint32_t n_unsafe;	  /* deliberately unsafe accesses emitted (see unsafe_pct) */
	uint32_t buf_len;	  /* 0 when the program takes no buffer */
	uint8_t buf[GEN_MAX_BUF]; /* initial buffer contents (random) */
	uint32_t n_maps;	  /* maps referenced by index (0 without the map families) */
	struct gen_map maps[GEN_MAX_MAPS];
	struct ebpf_insn insns[GEN_MAX_INSNS];
};

/* Generates the program for seed into *out. Returns 0, or -EINVAL on bad options. */
int gen_program(uint64_t seed, const struct gen_opts *opts, struct gen_prog *out);

/* Options that vary with the seed (length, nesting, loop counts, buffer size) so that a run over
 * consecutive seeds covers small and large programs and each program is reproduced from its seed
 * alone. families as in gen_opts (0 = all). */
void gen_opts_for_seed(uint64_t seed, uint32_t families, struct gen_opts *o);

/* Parses a comma-separated family list ("alu64,alu32,jmp", "all", "v3", "all,-call", "all,maps")
 * into a mask ("maps" = GEN_MAP_FAMILIES; "nondet" adds GEN_NONDET).
 * Returns 0 or -EINVAL (unknown name). */
int gen_parse_families(const char *s, uint32_t *mask);
/* Writes the family names of mask, comma-separated, into buf. */
void gen_format_families(uint32_t mask, char *buf, size_t len);

/* Prints the program one instruction per line (pc, hex, disassembly where this build has a
 * disassembler) with function boundaries and the initial buffer. */
void gen_print(FILE *f, const struct gen_prog *p);

#ifdef __cplusplus
}
#endif
#endif
