/* The static verifier: abstract interpretation over all paths (memory safety, termination,
 * helper contracts, pointer-leak freedom, rank consistency, worst-case cost).
 * Owner: engine/src/verifier/. Nothing unverified is ever run by the runtime. */
#ifndef EBPF_VERIFIER_H
#define EBPF_VERIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "isa.h"
#include "progtype.h"
#include "exec.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ebpf_map;

/* C source position of an instruction, from .BTF.ext line info (loader). */
struct ebpf_line_info {
	uint32_t insn; /* instruction index in the program handed to the verifier */
	uint32_t line;
	uint32_t col;
	const char *file; /* may be NULL */
	const char *src;  /* the source line's text, may be NULL */
};

#define EBPF_VERIFY_F_LOG 0x1u /* write the per-instruction state trace to log_buf */
#define EBPF_VERIFY_F_ALLOW_RANK_LOCAL                                                             \
	0x2u /* unsafe experimental mode: accept rank-dependent                                    \
		tuner decisions (callers must log loudly) */

/* Per-map facts in and out (arrays of n_maps entries, indexed like opts.maps).
 * RANK_LOCAL: the contents may differ between ranks. In rank-consistent program types nothing
 *   read from the map may reach a decision: values, whether a lookup finds an element, what an
 *   update or delete returns.
 * PER_COMM: decision state of one communicator (the runtime gives each communicator its own
 *   instance): uniform for decisions, so rank-consistent programs may write it only with
 *   uniform values outside rank-local branches; other program types may not use it.
 * WRITTEN (out): the program may write the map (stores, atomics, update and delete helpers).
 * Which maps are rank-local is the loader's business (ebpf_object__load): every map some
 * program of the object writes, unless per-communicator, and per-CPU and LRU maps. */
#define EBPF_VERIFY_MAP_RANK_LOCAL 0x1u
#define EBPF_VERIFY_MAP_WRITTEN	   0x2u
#define EBPF_VERIFY_MAP_PER_COMM   0x4u

struct ebpf_verify_opts {
	size_t sz;
	const struct ebpf_prog_type *type;
	struct ebpf_map *const *maps; /* EBPF_PSEUDO_MAP_* immediates index this table */
	uint32_t n_maps;
	uint8_t *map_flags; /* may be NULL: no rank-local maps, WRITTEN not reported */
	const struct ebpf_helper_table *helpers;
	const struct ebpf_line_info *lines; /* sorted by insn, may be NULL */
	uint32_t n_lines;
	uint32_t flags;		   /* EBPF_VERIFY_F_* */
	uint64_t complexity_limit; /* processed-instruction budget; 0 = 1,000,000 */
	char *log_buf;		   /* full trace with EBPF_VERIFY_F_LOG */
	size_t log_size;
	/* in, may be NULL: for a rank-local map, why its contents differ between ranks and how to
	 * fix the program; appended to a rejection that a value read from the map caused */
	const char *const *map_why;
	/* out, may be NULL: the first instruction found writing each map (UINT32_MAX: none) */
	uint32_t *map_write_insn;
	/* out, may be NULL: n_insns entries, for each load (LDX) the context offset it reads on
	 * every path that reaches it (its register's offset plus the instruction's), else
	 * EBPF_CTX_OFF_NONE (not a load, never reached, or never from the context) or
	 * EBPF_CTX_OFF_MIXED (the context at another offset, or other memory, on another path):
	 * what a host needs to rewrite context reads (ebpf_ctx_from_f32) */
	int32_t *ctx_off;
};
#define EBPF_CTX_OFF_NONE  (-1)
#define EBPF_CTX_OFF_MIXED (-2)

struct ebpf_verify_stats {
	uint32_t insns;		   /* program length */
	uint64_t processed;	   /* instructions the analysis visited */
	uint32_t peak_states;	   /* largest number of stored states */
	uint64_t worst_case_insns; /* maximum instructions any execution can run */
	uint64_t time_ns;
	uint64_t memory_bytes; /* the analysis's memory at its largest */
	/* Context fields the program may read: bit i for type->fields[i] (i < 63), bit 63 for any
	 * field from index 63 on. Reads happen only through context loads (no helper takes the
	 * context pointer), so a clear bit means no execution can observe that field. */
	uint64_t ctx_read;
	/* The same per 8-byte word of the context: bit i when a read may touch bytes [8i, 8i + 8)
	 * (bit 63 for any byte from 504 on). Every context access has a constant offset, so this
	 * separates the elements of an array field (the tuner's cost cells: an adapter converts
	 * only the cells a program may read). */
	uint64_t ctx_words;
	/* The words a store may write, the same way: writes happen only through context stores
	 * (no helper takes the context pointer), so a host need not look at an output whose word
	 * is clear here: it still holds what the host put there. */
	uint64_t ctx_written;
};

/* Returns 0 when the program is safe, -EACCES when rejected (err holds the one-line reason with
 * instruction, source line and register state), -EINVAL for malformed input, -E2BIG when the
 * complexity budget ran out. */
int ebpf_verify(const struct ebpf_insn *insns, uint32_t n_insns,
		const struct ebpf_verify_opts *opts, struct ebpf_verify_stats *stats, char *err,
		size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
