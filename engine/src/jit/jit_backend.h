/* The contract between the architecture-neutral JIT driver (jit.c) and one backend per
 * architecture (arch_<arch>/). jit.c analyses the program once (functions, register use, jump
 * targets, inlinable map lookups) and owns executable memory; a backend only turns the analysed
 * program into machine code. Adding an architecture means adding arch_<arch>/ with
 * jit_arch_compile() and nothing else. */
#ifndef EBPF_JIT_BACKEND_H
#define EBPF_JIT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "exec_internal.h"

/* Per-instruction facts (jit_analysis.insn_flags). */
#define JIT_INSN_TARGET	      0x01 /* a jump lands here: a new basic block starts */
#define JIT_INSN_FUNC_START   0x02 /* first instruction of a function (entry or call target) */
#define JIT_INSN_LDDW_TAIL    0x04 /* second slot of a 64-bit immediate load: emits nothing */
#define JIT_INSN_INLINE_ARRAY 0x08 /* a map lookup call the backend inlines (jit_inline) */
/* A converted load (EBPF_INTERNAL_LDX_F32) whose value only a jump on its equality with the
 * conversion's `none` reads: the backend emits the pair as the range test. The jump follows the
 * load, or comes after up to JIT_F32_GAP_MAX register-only ALU instructions that neither touch
 * the load's registers nor are jump targets (clang schedules one there), which the backend
 * emits first: JIT_INSN_F32_GAP(k) says how many. */
#define JIT_INSN_F32_TEST      0x10
#define JIT_F32_GAP_MAX	       2
#define JIT_INSN_F32_GAP(k)    ((uint8_t)((k) << 5))
#define JIT_INSN_F32_GAP_OF(f) (((f) >> 5) & 3)

/* A function: the entry (func 0) or a bpf-to-bpf call target; [start, end) instructions. */
struct jit_func {
	uint32_t start, end;
	uint16_t regs_used; /* bit n: eBPF register n is read or written */
	uint8_t uses_stack; /* r10 is referenced */
	uint8_t calls;	    /* contains helper or bpf-to-bpf calls */
};

/* An ARRAY map lookup with a constant map: value = key < max_entries ? base + key * stride : 0. */
struct jit_inline {
	uint64_t base;
	uint32_t stride;
	uint32_t max_entries;
};

struct jit_analysis {
	const struct ebpf_exec *prog;
	uint32_t n_insns;
	uint8_t *insn_flags;   /* JIT_INSN_* per instruction */
	uint32_t *insn_func;   /* index of the function each instruction belongs to */
	uint32_t *insn_inline; /* index into inl for JIT_INSN_INLINE_ARRAY calls */
	struct jit_func *funcs;
	uint32_t n_funcs;
	struct jit_inline *inl;
	uint32_t n_inl;
	uint8_t has_bpf_calls; /* any bpf-to-bpf call: frame depth must be checked */
	/* Registers among r0, r3-r9 that the program may read before writing them: the backend
	 * zeroes these at entry, as the interpreter starts every register at 0 (the verifier
	 * rejects such reads; this keeps unverified runs of both engines identical). Usually empty.
	 */
	uint16_t entry_zero;
	uint32_t flags;		 /* EBPF_JIT_F_* from the options */
	uint64_t *fault_counter; /* incremented (atomically) when a run aborts on call depth */
};

/* Executable memory, owned by jit.c: one RW mapping while the backend writes, then RX. */
void *jit_mem_alloc(size_t size, const void *near_hint, size_t *mapped);
int jit_mem_seal(void *mem, size_t mapped);
void jit_mem_free(void *mem, size_t mapped);

struct jit_image {
	void *mem;     /* mapping from jit_mem_alloc, sealed by jit.c after the backend returns */
	size_t mapped; /* size of the mapping */
	uint32_t code_size;
	ebpf_jit_fn entry;
	uint8_t keeps_regs; /* entry keeps every register but rax, rdi, rsi (jit.h) */
};

/* Compiles the analysed program. On success returns 0 with img filled (mem still writable:
 * jit.c seals it); on failure returns -errno with one line in err and no mapping left. */
int jit_arch_compile(const struct jit_analysis *an, struct jit_image *img, char *err,
		     size_t err_len);

#endif
