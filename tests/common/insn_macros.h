/* Instruction-writing macros for tests: each expands to one (or, for LD_IMM64, two) struct
 * ebpf_insn initialisers, so a program is written as
 *	struct ebpf_insn prog[] = { MOV64_IMM(0, 42), EXIT() };
 * Names follow the kernel's filter.h (BPF_MOV64_IMM etc.) without the prefix. */
#ifndef NCCLBPF_TEST_INSN_MACROS_H
#define NCCLBPF_TEST_INSN_MACROS_H

#include "ebpf/isa.h"

#define INSN(c, d, s, o, i)                                                                        \
	((struct ebpf_insn){.code = (uint8_t)(c),                                                  \
			    .dst_reg = (d),                                                        \
			    .src_reg = (s),                                                        \
			    .off = (int16_t)(o),                                                   \
			    .imm = (int32_t)(i)})

/* ALU: op is EBPF_ADD, EBPF_SUB, ... */
#define ALU64_IMM(op, dst, imm) INSN(EBPF_ALU64 | (op) | EBPF_K, dst, 0, 0, imm)
#define ALU64_REG(op, dst, src) INSN(EBPF_ALU64 | (op) | EBPF_X, dst, src, 0, 0)
#define ALU32_IMM(op, dst, imm) INSN(EBPF_ALU | (op) | EBPF_K, dst, 0, 0, imm)
#define ALU32_REG(op, dst, src) INSN(EBPF_ALU | (op) | EBPF_X, dst, src, 0, 0)
/* Signed division/modulo (v4): off = 1. */
#define SALU64_IMM(op, dst, imm) INSN(EBPF_ALU64 | (op) | EBPF_K, dst, 0, 1, imm)
#define SALU64_REG(op, dst, src) INSN(EBPF_ALU64 | (op) | EBPF_X, dst, src, 1, 0)
#define SALU32_IMM(op, dst, imm) INSN(EBPF_ALU | (op) | EBPF_K, dst, 0, 1, imm)
#define SALU32_REG(op, dst, src) INSN(EBPF_ALU | (op) | EBPF_X, dst, src, 1, 0)
#define NEG64(dst)		 INSN(EBPF_ALU64 | EBPF_NEG | EBPF_K, dst, 0, 0, 0)
#define NEG32(dst)		 INSN(EBPF_ALU | EBPF_NEG | EBPF_K, dst, 0, 0, 0)

#define MOV64_IMM(dst, imm) ALU64_IMM(EBPF_MOV, dst, imm)
#define MOV64_REG(dst, src) ALU64_REG(EBPF_MOV, dst, src)
#define MOV32_IMM(dst, imm) ALU32_IMM(EBPF_MOV, dst, imm)
#define MOV32_REG(dst, src) ALU32_REG(EBPF_MOV, dst, src)
/* Sign-extending moves (v4): bits = 8, 16 (both widths) or 32 (64-bit only). */
#define MOVSX64_REG(dst, src, bits) INSN(EBPF_ALU64 | EBPF_MOV | EBPF_X, dst, src, bits, 0)
#define MOVSX32_REG(dst, src, bits) INSN(EBPF_ALU | EBPF_MOV | EBPF_X, dst, src, bits, 0)

/* Byte order: bits = 16, 32, 64. */
#define ENDIAN_LE(dst, bits) INSN(EBPF_ALU | EBPF_END | EBPF_TO_LE, dst, 0, 0, bits)
#define ENDIAN_BE(dst, bits) INSN(EBPF_ALU | EBPF_END | EBPF_TO_BE, dst, 0, 0, bits)
#define BSWAP(dst, bits)     INSN(EBPF_ALU64 | EBPF_END | EBPF_TO_LE, dst, 0, 0, bits)

/* 64-bit immediate: two instructions. */
#define LD_IMM64_RAW(dst, src, imm64)                                                              \
	INSN(EBPF_LD | EBPF_DW | EBPF_IMM, dst, src, 0, (uint32_t)(uint64_t)(imm64)),              \
	    INSN(0, 0, 0, 0, (uint32_t)((uint64_t)(imm64) >> 32))
#define LD_IMM64(dst, imm64) LD_IMM64_RAW(dst, 0, imm64)
/* Map handle / direct value address by index into ebpf_exec_opts.maps. */
#define LD_MAP_FD(dst, map_idx) LD_IMM64_RAW(dst, EBPF_PSEUDO_MAP_FD, (uint32_t)(map_idx))
#define LD_MAP_VALUE(dst, map_idx, off)                                                            \
	INSN(EBPF_LD | EBPF_DW | EBPF_IMM, dst, EBPF_PSEUDO_MAP_VALUE, 0, map_idx),                \
	    INSN(0, 0, 0, 0, off)

/* Memory: size is EBPF_B, EBPF_H, EBPF_W, EBPF_DW. */
#define LDX_MEM(size, dst, src, off)   INSN(EBPF_LDX | (size) | EBPF_MEM, dst, src, off, 0)
#define LDX_MEMSX(size, dst, src, off) INSN(EBPF_LDX | (size) | EBPF_MEMSX, dst, src, off, 0)
#define STX_MEM(size, dst, src, off)   INSN(EBPF_STX | (size) | EBPF_MEM, dst, src, off, 0)
#define ST_MEM(size, dst, off, imm)    INSN(EBPF_ST | (size) | EBPF_MEM, dst, 0, off, imm)
/* Atomics: size EBPF_W or EBPF_DW; op EBPF_ATOMIC_ADD [| EBPF_FETCH], EBPF_XCHG, EBPF_CMPXCHG. */
#define ATOMIC_OP(size, op, dst, src, off) INSN(EBPF_STX | (size) | EBPF_ATOMIC, dst, src, off, op)

/* Jumps: off is relative to the next instruction. */
#define JMP_IMM(op, dst, imm, off)   INSN(EBPF_JMP | (op) | EBPF_K, dst, 0, off, imm)
#define JMP_REG(op, dst, src, off)   INSN(EBPF_JMP | (op) | EBPF_X, dst, src, off, 0)
#define JMP32_IMM(op, dst, imm, off) INSN(EBPF_JMP32 | (op) | EBPF_K, dst, 0, off, imm)
#define JMP32_REG(op, dst, src, off) INSN(EBPF_JMP32 | (op) | EBPF_X, dst, src, off, 0)
#define JA(off)			     INSN(EBPF_JMP | EBPF_JA, 0, 0, off, 0)
#define JA32(imm)		     INSN(EBPF_JMP32 | EBPF_JA, 0, 0, 0, imm) /* v4: 32-bit offset in imm */

#define CALL_HELPER(id) INSN(EBPF_JMP | EBPF_CALL, 0, EBPF_PSEUDO_HELPER, 0, id)
#define CALL_LOCAL(off) INSN(EBPF_JMP | EBPF_CALL, 0, EBPF_PSEUDO_CALL, 0, off)
#define EXIT()		INSN(EBPF_JMP | EBPF_EXIT, 0, 0, 0, 0)

#define INSN_CNT(arr) ((uint32_t)(sizeof(arr) / sizeof((arr)[0])))

#endif
