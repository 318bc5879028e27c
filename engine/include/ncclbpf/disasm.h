/* Disassembler in the syntax of the Linux verifier log / llvm-objdump -d for BPF. */
#ifndef NCCLBPF_DISASM_H
#define NCCLBPF_DISASM_H

#include <stddef.h>

#include "isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Formats insns[pc] (and insns[pc+1] for a 64-bit immediate load; n bounds the read) into buf,
 * e.g. "r0 = *(u32 *)(r1 + 4)". Returns the number of instructions consumed (1 or 2), or 0 when
 * the opcode is unknown (buf then says "invalid insn 0x..."). */
int ebpf_disasm_insn(const struct ebpf_insn *insns, size_t n, size_t pc, char *buf,
		     size_t buf_len);

#ifdef __cplusplus
}
#endif
#endif
