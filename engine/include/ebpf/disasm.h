/* Disassembler in the syntax of llvm-objdump -d for BPF (which the Linux verifier log mostly
 * shares): "r0 = *(u32 *)(r1 + 4)", "if w1 s> 5 goto +3", "lock *(u64 *)(r1 + 0) += r2",
 * "r1 = 78187493520 ll", "call 1", "exit".
 *
 * Where llvm-objdump 14 has no spelling (the v4 instructions, jset, mod, stores of immediates)
 * the text is what newer LLVM releases print: "r0 = (s8)r1", "r0 s/= r1", "r0 = *(s16 *)(r1 + 2)",
 * "r0 = bswap32 r0", "gotol +70000", "if r1 & 4 goto +1", "r0 %= r1", "*(u32 *)(r10 - 8) = 5".
 * Loads and stores always name 64-bit registers (llvm-objdump without +alu32, and the kernel);
 * 32-bit fetching atomics have only the alu32 spelling ("w2 = atomic_fetch_add((u32 *)(r1 + 0),
 * w2)", "w0 = cmpxchg32_32(r1 + 0, w0, w2)").
 * 64-bit immediate loads with a pseudo source (before the loader resolved them) print as
 * "r1 = map[3] ll", "r1 = map_value[3] + 16 ll", "r1 = func[+5] ll". */
#ifndef EBPF_DISASM_H
#define EBPF_DISASM_H

#include <stddef.h>

#include "isa.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ebpf_helper_table; /* prog.h */

/* Formats insns[pc] (and insns[pc+1] for a 64-bit immediate load; n bounds the read) into buf,
 * e.g. "r0 = *(u32 *)(r1 + 4)". Returns the number of instructions consumed (1 or 2), or 0 when
 * the opcode is unknown (buf then says "invalid insn 0x..."). */
int ebpf_disasm_insn(const struct ebpf_insn *insns, size_t n, size_t pc, char *buf, size_t buf_len);

struct ebpf_disasm_opts {
	size_t sz;
	/* When set, helper calls name the helper as the kernel log does:
	 * "call bpf_map_lookup_elem#1" (unknown ids stay "call 99"). */
	const struct ebpf_helper_table *helpers;
};

/* ebpf_disasm_insn with options (opts may be NULL). */
int ebpf_disasm_insn_opts(const struct ebpf_insn *insns, size_t n, size_t pc, char *buf,
			  size_t buf_len, const struct ebpf_disasm_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
