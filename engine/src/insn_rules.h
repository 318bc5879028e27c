/* Which instructions exist and what each of their fields may hold (RFC 9669, v1-v4): the one
 * statement of the encoding rules. ebpf_exec__new and the verifier both check every instruction
 * through ebpf_insn_check, so they accept the same encodings and reject the others with the same
 * message. What depends on the rest of the program (jump targets, helper ids, the maps behind a
 * map reference) stays with each caller. */
#ifndef EBPF_INSN_RULES_H
#define EBPF_INSN_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "ebpf/isa.h"

/* Checks *in, the first of the n_left instructions from it to the program's end (a 64-bit
 * immediate load needs its second half), in a program with n_maps maps. Returns 0, or -EINVAL
 * with one line in msg naming the instruction, e.g. "add uses reserved field off=3" (the caller
 * prefixes the instruction index). */
int ebpf_insn_check(const struct ebpf_insn *in, uint32_t n_left, uint32_t n_maps, char *msg,
		    size_t len);

#endif
