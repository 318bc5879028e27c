/* The program object shared by exec.c (creation), the interpreter and the JIT backends. */
#ifndef EBPF_EXEC_INTERNAL_H
#define EBPF_EXEC_INTERNAL_H

#include "ebpf/jit.h"
#include "ebpf/exec.h"
#include "ebpf/progtype.h"

/* The interpreter's copy of an instruction slot (same index as insns[]): register numbers
 * unpacked into whole bytes, so the dispatch loop extracts no bit-fields. */
struct ebpf_interp_insn {
	uint8_t code;
	uint8_t dst;
	uint8_t src;
	uint8_t _pad0;
	int16_t off;
	uint16_t _pad1;
	int32_t imm;
	uint32_t _pad2;
};

/* The executable copy's form of a converted context load (ebpf_exec_opts.f32_loads): an opcode
 * no input may carry (LDX with mode 0xe0), dst and src as in the load it replaces, off the
 * displacement from src to the host's `const float *` in the context, imm the byte offset of the
 * element's float in that array. */
#define EBPF_INTERNAL_LDX_F32 (EBPF_LDX | 0xe0 | EBPF_DW)

struct ebpf_exec {
	struct ebpf_exec_hot hot; /* first: read by the inline ebpf_exec__run */
	char name[64];
	struct ebpf_insn *insns; /* executable copy: EBPF_PSEUDO_MAP_* resolved to addresses */
	uint32_t n_insns;
	struct ebpf_interp_insn *interp_insns;	 /* n_insns entries, built by ebpf_exec__new */
	const struct ebpf_helper_table *helpers; /* may be NULL */
	struct ebpf_map **maps;			 /* copy of the map table (not owned) */
	uint32_t n_maps;
	/* Memory that resolved EBPF_PSEUDO_MAP_VALUE immediates point into; the bounds-checking
	 * interpreter admits accesses there. */
	struct ebpf_region *implicit_regions;
	uint32_t n_implicit_regions;
	/* JIT state (jit/jit.c). jit_mem is an mmap()ed mapping of jit_mem_size bytes that
	 * ebpf_exec__free munmap()s. */
	ebpf_jit_fn jit_fn;
	void *jit_mem;
	size_t jit_mem_size;
	struct ebpf_jit_stats jit_stats;
	/* EBPF_INTERNAL_LDX_F32's conversion (valid when n_f32_loads > 0). */
	struct ebpf_ctx_from_f32 from_f32;
	uint32_t n_f32_loads;
};

#endif
