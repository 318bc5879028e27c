/* Registers an instruction reads and writes, shared by the verifier's liveness analysis and the
 * JIT's entry liveness so that both agree on what an instruction touches. */
#ifndef EBPF_INSN_REGS_H
#define EBPF_INSN_REGS_H

#include <stdint.h>

#include "ebpf/isa.h"

/* Bit k of *use / *def stands for register rk. A call reads r1-r5 and writes r0-r5 (callers
 * that know a helper's prototype may narrow the reads); exit reads r0. */
static inline void ebpf_insn_use_def(const struct ebpf_insn *in, uint16_t *use, uint16_t *def)
{
	uint8_t cls = EBPF_CLASS(in->code), op = EBPF_OP(in->code);
	uint16_t d = (uint16_t)(1u << in->dst_reg), s = (uint16_t)(1u << in->src_reg);
	int x = EBPF_SRC(in->code) == EBPF_X;

	*use = *def = 0;
	switch (cls) {
	case EBPF_ALU:
	case EBPF_ALU64:
		*def = d;
		if (op != EBPF_MOV)
			*use |= d;
		if (x && op != EBPF_END && op != EBPF_NEG)
			*use |= s;
		break;
	case EBPF_LD:
		*def = d;
		break;
	case EBPF_LDX:
		*use = s;
		*def = d;
		break;
	case EBPF_ST:
		*use = d;
		break;
	case EBPF_STX:
		*use = d | s;
		if (EBPF_MODE(in->code) == EBPF_ATOMIC) {
			if (in->imm == EBPF_CMPXCHG) {
				*use |= 1;
				*def = 1;
			} else if (in->imm & EBPF_FETCH) {
				*def = s;
			}
		}
		break;
	default: /* JMP, JMP32 */
		if (op == EBPF_CALL) {
			*use = 0x3e;
			*def = 0x3f;
		} else if (op == EBPF_EXIT) {
			*use = 1;
		} else if (op != EBPF_JA) {
			*use = d | (x ? s : 0);
		}
		break;
	}
}

#endif
