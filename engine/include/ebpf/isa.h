/* The eBPF instruction set (RFC 9669, versions v1-v4): encoding constants shared by the
 * interpreter, the JITs, the verifier, the disassembler and the loader.
 * Names follow linux/bpf.h so that eBPF programmers recognise them, prefixed to avoid clashes
 * with a kernel header included in the same translation unit (tests do that). */
#ifndef EBPF_ISA_H
#define EBPF_ISA_H

#include <stdint.h>

struct ebpf_insn {
	uint8_t code;
	uint8_t dst_reg : 4;
	uint8_t src_reg : 4;
	int16_t off;
	int32_t imm;
};
#ifdef __cplusplus
static_assert(sizeof(struct ebpf_insn) == 8, "eBPF instructions are 8 bytes");
#else
_Static_assert(sizeof(struct ebpf_insn) == 8, "eBPF instructions are 8 bytes");
#endif

/* Instruction classes (low 3 bits of code). */
#define EBPF_CLASS(code) ((code)&0x07)
#define EBPF_LD		 0x00
#define EBPF_LDX	 0x01
#define EBPF_ST		 0x02
#define EBPF_STX	 0x03
#define EBPF_ALU	 0x04
#define EBPF_JMP	 0x05
#define EBPF_JMP32	 0x06
#define EBPF_ALU64	 0x07

/* Load/store: size (bits 3-4) and mode (bits 5-7). */
#define EBPF_SIZE(code) ((code)&0x18)
#define EBPF_W		0x00
#define EBPF_H		0x08
#define EBPF_B		0x10
#define EBPF_DW		0x18
#define EBPF_MODE(code) ((code)&0xe0)
#define EBPF_IMM	0x00
#define EBPF_ABS	0x20 /* legacy packet access, not supported */
#define EBPF_IND	0x40 /* legacy packet access, not supported */
#define EBPF_MEM	0x60
#define EBPF_MEMSX	0x80 /* v4: sign-extending loads */
#define EBPF_ATOMIC	0xc0

/* ALU/JMP: source (bit 3) and operation (bits 4-7). */
#define EBPF_SRC(code) ((code)&0x08)
#define EBPF_K	       0x00
#define EBPF_X	       0x08
#define EBPF_OP(code)  ((code)&0xf0)

#define EBPF_ADD   0x00
#define EBPF_SUB   0x10
#define EBPF_MUL   0x20
#define EBPF_DIV   0x30 /* off = 1: signed (v4) */
#define EBPF_OR	   0x40
#define EBPF_AND   0x50
#define EBPF_LSH   0x60
#define EBPF_RSH   0x70
#define EBPF_NEG   0x80
#define EBPF_MOD   0x90 /* off = 1: signed (v4) */
#define EBPF_XOR   0xa0
#define EBPF_MOV   0xb0 /* off = 8/16/32: sign-extending move (v4) */
#define EBPF_ARSH  0xc0
#define EBPF_END   0xd0 /* ALU: TO_LE (K) / TO_BE (X); ALU64 + K: unconditional bswap (v4) */
#define EBPF_TO_LE 0x00
#define EBPF_TO_BE 0x08

#define EBPF_JA	  0x00 /* JMP32 class: 32-bit offset in imm (v4) */
#define EBPF_JEQ  0x10
#define EBPF_JGT  0x20
#define EBPF_JGE  0x30
#define EBPF_JSET 0x40
#define EBPF_JNE  0x50
#define EBPF_JSGT 0x60
#define EBPF_JSGE 0x70
#define EBPF_CALL 0x80
#define EBPF_EXIT 0x90
#define EBPF_JLT  0xa0
#define EBPF_JLE  0xb0
#define EBPF_JSLT 0xc0
#define EBPF_JSLE 0xd0

/* Atomic operations (imm of an EBPF_ATOMIC store). */
#define EBPF_FETCH	0x01
#define EBPF_ATOMIC_ADD 0x00
#define EBPF_ATOMIC_OR	0x40
#define EBPF_ATOMIC_AND 0x50
#define EBPF_ATOMIC_XOR 0xa0
#define EBPF_XCHG	(0xe0 | EBPF_FETCH)
#define EBPF_CMPXCHG	(0xf0 | EBPF_FETCH)

/* src_reg of a 64-bit immediate load (code EBPF_LD|EBPF_DW|EBPF_IMM). The loader emits the map
 * forms with imm = index into the program's map table; ebpf_exec__new resolves them. */
#define EBPF_PSEUDO_MAP_FD    1 /* imm = map index: value is the map handle */
#define EBPF_PSEUDO_MAP_VALUE 2 /* imm = map index, next imm = offset into element 0's value */
#define EBPF_PSEUDO_FUNC      4 /* imm = relative insn offset of a subprogram (unsupported) */

/* src_reg of EBPF_CALL. */
#define EBPF_PSEUDO_HELPER 0 /* imm = helper id */
#define EBPF_PSEUDO_CALL   1 /* imm = relative offset of a local function */
#define EBPF_PSEUDO_KFUNC  2 /* imm = BTF id (unsupported: rejected) */

/* Registers. */
#define EBPF_REG_0  0
#define EBPF_REG_1  1
#define EBPF_REG_2  2
#define EBPF_REG_3  3
#define EBPF_REG_4  4
#define EBPF_REG_5  5
#define EBPF_REG_6  6
#define EBPF_REG_7  7
#define EBPF_REG_8  8
#define EBPF_REG_9  9
#define EBPF_REG_10 10
#define EBPF_NREGS  11

/* Execution limits shared by every engine. */
#define EBPF_STACK_SIZE	 512 /* bytes per frame */
#define EBPF_MAX_FRAMES	 8   /* call depth including the entry function */
#define EBPF_MAX_INSNS	 (1u << 20)
#define EBPF_MAX_HELPERS 256

static inline int ebpf_insn_is_lddw(const struct ebpf_insn *i)
{
	return i->code == (EBPF_LD | EBPF_DW | EBPF_IMM);
}

#endif
