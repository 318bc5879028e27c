/* Program types as data: what a hook's context looks like to the verifier, which helpers it
 * may call, which return values it may produce, and its cost budget. The tables themselves live
 * in engine/src/progtypes.c and are static-asserted against the SDK structs (include/ncclbpf.h). */
#ifndef NCCLBPF_PROGTYPE_H
#define NCCLBPF_PROGTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "isa.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EBPF_CTX_READ	    0x1u
#define EBPF_CTX_WRITE	    0x2u
#define EBPF_CTX_RANK_LOCAL 0x4u /* the value differs between ranks */
#define EBPF_CTX_DECISION   0x8u /* an output that must be identical on every rank */
#define EBPF_CTX_BYTES                                                                             \
	0x10u /* plain memory: loads, stores and atomics of 1/2/4/8 bytes                          \
		 anywhere inside the field, any alignment (test contexts) */

/* One field of a context. Reads may be narrower than the field (1/2/4/8 bytes at natural
 * alignment, fully inside it); writes must be exactly the field's size at its offset. */
struct ebpf_ctx_field {
	const char *name;
	uint16_t off;
	uint16_t size;
	uint32_t flags; /* EBPF_CTX_* */
};

#define EBPF_PROG_TYPE_F_RANK_CONSISTENT 0x1u /* decisions checked for rank consistency */

struct ebpf_prog_type {
	const char *name;    /* "tuner" */
	const char *section; /* ELF section name, or prefix when it ends in '/' ("net/") */
	uint32_t ctx_size;
	const struct ebpf_ctx_field *fields;
	uint32_t n_fields;
	uint64_t helper_allow[EBPF_MAX_HELPERS / 64]; /* bit per helper id */
	int64_t ret_min, ret_max;		      /* allowed r0 at exit of the entry function */
	uint64_t insn_budget;			      /* worst-case executed instructions */
	uint32_t flags;				      /* EBPF_PROG_TYPE_F_* */
};

/* The shipped program types, and lookup by ELF section name (NULL when none matches). */
const struct ebpf_prog_type *ebpf_prog_type_by_section(const char *section);
const struct ebpf_prog_type *ebpf_prog_type_by_name(const char *name);
/* Writes the section names of every program type into buf, comma separated, a prefix type as
 * "net/<name>" (for messages: the list comes from the table, so it cannot fall behind it). */
void ebpf_prog_type_sections(char *buf, size_t len);
/* The ebpf_verify_stats.ctx_read bit of type's field called name (0 when it has none). */
uint64_t ebpf_prog_type_field_bit(const struct ebpf_prog_type *type, const char *name);

#ifdef __cplusplus
}
#endif
#endif
