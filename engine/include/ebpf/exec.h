/* Executable programs: structural validation, the interpreter (fast and bounds-checking modes)
 * and the JIT behind one entry point.
 *
 * Pipeline: the loader (object.h) or a caller hands raw instructions to ebpf_exec__new, which
 * checks structure (opcodes, jump targets, 64-bit immediates, call targets, helpers), resolves
 * map references to addresses and returns an immutable program that any number of threads may
 * run at once. The static verifier (verifier.h) runs before this on the raw instructions. */
#ifndef EBPF_EXEC_H
#define EBPF_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "isa.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ebpf_map; /* maps.h */

typedef uint64_t (*ebpf_helper_fn)(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5);

/* Argument and return kinds of a helper: the verifier checks calls against them and the
 * bounds-checking interpreter uses the return kind to learn which memory a helper handed out. */
enum ebpf_arg_kind {
	EBPF_ARG_NONE = 0,     /* unused argument */
	EBPF_ARG_ANYTHING,     /* any initialised scalar */
	EBPF_ARG_CONST_MAP,    /* a map handle (LD_IMM64 pseudo map) */
	EBPF_ARG_PTR_TO_KEY,   /* readable memory of the map's key size (map in r1) */
	EBPF_ARG_PTR_TO_VALUE, /* readable memory of the map's value size (map in r1) */
	EBPF_ARG_PTR_TO_MEM,   /* readable memory, size in the next argument */
	EBPF_ARG_CONST_SIZE,   /* size of the previous PTR_TO_MEM argument, > 0, known bounded */
	EBPF_ARG_PTR_TO_ALLOC_MEM, /* memory returned by a reserve helper (ring buffer record) */
};

enum ebpf_ret_kind {
	EBPF_RET_INTEGER = 0,	    /* scalar */
	EBPF_RET_VOID,		    /* r0 undefined afterwards */
	EBPF_RET_MAP_VALUE_OR_NULL, /* pointer to value_size bytes of the map in r1, or NULL */
	EBPF_RET_ALLOC_MEM_OR_NULL, /* pointer to r2 bytes (ring buffer reserve), or NULL */
};

#define EBPF_HELPER_RANK_LOCAL 0x1u /* result differs between ranks (clock, random, cpu) */

struct ebpf_helper_proto {
	uint32_t id; /* Linux helper number */
	const char *name;
	ebpf_helper_fn fn;
	uint8_t ret;	 /* enum ebpf_ret_kind */
	uint8_t args[5]; /* enum ebpf_arg_kind */
	uint32_t flags;	 /* EBPF_HELPER_* */
};

/* Helpers available to a program, indexed by id (NULL = unknown). */
struct ebpf_helper_table {
	const struct ebpf_helper_proto *by_id[EBPF_MAX_HELPERS];
};

/* Options carry their own size so the API can grow (libbpf convention). */
/* A context load to convert (ebpf_exec_opts.f32_loads). */
struct ebpf_exec_ctx_load {
	uint32_t insn;	 /* an 8-byte LDX (EBPF_MEM) */
	int32_t ctx_off; /* the context offset it reads on every path: an element of the field */
};

struct ebpf_ctx_from_f32; /* progtype.h */

struct ebpf_exec_opts {
	size_t sz;
	const char *name;
	const struct ebpf_helper_table *helpers; /* NULL: no helpers */
	struct ebpf_map *const *maps;		 /* resolves EBPF_PSEUDO_MAP_* immediates */
	uint32_t n_maps;
	/* Context loads that read from_f32's field, each made to return its element converted
	 * (ebpf_ctx_from_f32_value) from the host's float array instead of context memory. The
	 * caller vouches, from the verifier (ebpf_verify_opts.ctx_off), that each listed load
	 * reads the context at ctx_off on every path; the program must then run on contexts that
	 * hold the array's address at from_f32->src_off. Anything malformed is refused. */
	const struct ebpf_ctx_from_f32 *from_f32;
	const struct ebpf_exec_ctx_load *f32_loads;
	uint32_t n_f32_loads;
};

struct ebpf_exec;

/* Checks structure and creates the program. On failure returns NULL and writes one line to
 * err (e.g. "insn 3: jump out of range (target 17, program has 9 insns)"). */
struct ebpf_exec *ebpf_exec__new(const struct ebpf_insn *insns, uint32_t n_insns,
				 const struct ebpf_exec_opts *opts, char *err, size_t err_len);
void ebpf_exec__free(struct ebpf_exec *prog);
uint32_t ebpf_exec__insn_cnt(const struct ebpf_exec *prog);
/* The program as executed (map references resolved to addresses). */
const struct ebpf_insn *ebpf_exec__insns(const struct ebpf_exec *prog);
const char *ebpf_exec__name(const struct ebpf_exec *prog);

/* --- Running ------------------------------------------------------------------------------ */

enum ebpf_engine {
	EBPF_ENGINE_DEFAULT = 0, /* the JIT where available, else the interpreter */
	EBPF_ENGINE_INTERP,
	EBPF_ENGINE_JIT,
};

/* A memory region a bounds-checked run may touch. */
#define EBPF_REGION_READ  0x1u
#define EBPF_REGION_WRITE 0x2u
struct ebpf_region {
	uint64_t base;
	uint64_t size;
	uint32_t perms; /* EBPF_REGION_* */
};

enum ebpf_fault_kind {
	EBPF_FAULT_NONE = 0,
	EBPF_FAULT_OUT_OF_BOUNDS, /* access outside every declared region */
	EBPF_FAULT_UNINIT_STACK,  /* read of a stack byte never written */
	EBPF_FAULT_CALL_DEPTH,	  /* more than EBPF_MAX_FRAMES frames */
	EBPF_FAULT_INSN_LIMIT,	  /* more instructions than run_opts.insn_limit */
	EBPF_FAULT_BAD_HELPER,	  /* helper id unknown at run time */
	EBPF_FAULT_BAD_INSN,	  /* cannot happen after ebpf_exec__new; defensive */
	EBPF_FAULT_UNINIT_REG,	  /* read of a register never written (EBPF_RUN_F_UNINIT_REGS) */
};

struct ebpf_fault {
	int kind; /* enum ebpf_fault_kind */
	uint32_t pc;
	uint64_t addr;
	uint32_t size;
	char msg[160]; /* one line, e.g. "insn 12: write of 8 bytes at 0x... outside any region" */
};

struct ebpf_run_opts {
	size_t sz;
	/* Bounds-checking mode: every load/store must fall inside the program's own stack frames
	 * (reads only of bytes written before), a region listed here, or memory a helper returned
	 * (by its ret kind), or the run stops with a fault. */
	int checked;
	const struct ebpf_region *regions;
	uint32_t n_regions;
	uint64_t insn_limit;	  /* 0 = unlimited (interpreter only) */
	struct ebpf_fault *fault; /* filled on failure when non-NULL */
	uint32_t flags;		  /* EBPF_RUN_F_* */
};

/* Checked mode also traps reads of registers that hold no value in the kernel's model: at entry
 * only r1, r2 and r10 are set; a helper call leaves r1-r5 undefined (and r0 after a void
 * helper); a bpf-to-bpf callee starts without r0 and r6-r9, and its caller gets r1-r5 back
 * undefined. The interpreter itself starts every register at 0, which conformance tests that
 * read r0 before writing it rely on, hence opt-in. */
#define EBPF_RUN_F_UNINIT_REGS 0x1u

/* Runs the program with r1, r2 as given; *r0 receives the result. Returns 0, or -EFAULT with
 * opts->fault filled when a run-time fault stopped the program (only possible in checked mode
 * or on call-depth overflow). Reentrant: no global mutable state. */
int ebpf_interp__run(const struct ebpf_exec *prog, uint64_t r1, uint64_t r2,
		     const struct ebpf_run_opts *opts, uint64_t *r0);

/* --- JIT (jit.h has the details) --- */
typedef uint64_t (*ebpf_jit_fn)(uint64_t r1, uint64_t r2);

#ifdef __cplusplus
}
#endif
#endif
