/* Program types as data: what a hook's context looks like to the verifier, which helpers it
 * may call, which return values it may produce, and its cost budget. The engine defines none:
 * the host that embeds it describes its own in a platform (struct ebpf_platform) and passes it
 * when opening objects (ebpf_object_open_opts.platform), as libbpf's users pass program types
 * and PREVAIL its platform. Types are read while verifying, never while a program runs. */
#ifndef EBPF_PROGTYPE_H
#define EBPF_PROGTYPE_H

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

/* A context array of 8-byte elements that a host may leave unfilled: loaded with
 * ebpf_object_load_opts.convert_ctx, every read of an element becomes a conversion of the float at
 * the same index of an array the host points to (ebpf_ctx_from_f32_value), done by the read
 * itself, so that a call pays only for the elements its path reads. The host keeps the array's
 * address in the context's memory at src_off, past ctx_size where no program can read it. */
struct ebpf_ctx_from_f32 {
	uint16_t field_off; /* the array field's offset */
	uint16_t n;	    /* its elements */
	uint16_t src_off;   /* where the host's `const float *` is (>= ctx_size, 8-aligned) */
	float lo, hi;	    /* v in [lo, hi) reads as round(v * scale) (NaN is outside) */
	double scale;	    /* hi * scale + 0.5 must stay below 2^62 */
	uint64_t none;	    /* what any other v reads as */
};

/* What a read of an element converted from v returns: (uint64_t)(int64_t)((double)v * scale +
 * 0.5) for lo <= v < hi, else none. The interpreter calls this; the JIT emits the same IEEE
 * operations in the same order (convert to double, multiply, add, truncate). */
static inline uint64_t ebpf_ctx_from_f32_value(const struct ebpf_ctx_from_f32 *c, float v)
{
	return v >= c->lo && v < c->hi ? (uint64_t)(int64_t)((double)v * c->scale + 0.5) : c->none;
}

/* The bits of c's field in ebpf_verify_stats.ctx_words: what a host need not fill for a program
 * whose reads of it are converted. */
static inline uint64_t ebpf_ctx_from_f32_words(const struct ebpf_ctx_from_f32 *c)
{
	uint64_t w0 = c->field_off / 8u, n = c->n;
	return w0 >= 63 ? 0 : (n >= 64 - w0 ? ~0ull : (1ull << n) - 1) << w0;
}

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
	/* A prefix type's names: what the host serves after the prefix, NULL-terminated ("connect"
	 * for "net/connect"); a name ending in "=N" stands for its text with a decimal number in
	 * place of N. Messages spell each one out (ebpf_platform_sections) and the host looks a
	 * section up among them (ebpf_prog_type_section_name); the loader takes any name after the
	 * prefix and leaves refusing the others to the host. NULL: any name ("<name>"). */
	const char *const *names;
	const struct ebpf_ctx_from_f32 *from_f32; /* NULL: every field is plain memory */
};

struct ebpf_helper_table;

/* What a host defines for the programs it runs: its program types, each chosen by ELF section
 * name, and the helpers programs may call (each type narrows them by helper_allow). The host
 * keeps it alive as long as objects opened with it. */
struct ebpf_platform {
	const char *name; /* in messages */
	const struct ebpf_prog_type *types;
	uint32_t n_types;
	const struct ebpf_helper_table *helpers; /* NULL: ebpf_helpers_default() */
	/* The host's words for the loader's rank-consistency advice (each may be NULL: left out):
	 * how a policy declares a map per-communicator (EBPF_MAP_F_PER_COMM) in the host's SDK,
	 * e.g. "__uint(map_flags, MY_F_PER_COMM)"; a uniform input a decision may use instead of
	 * a rank-local map ("ctx->seq"); how an operator writes a map from outside, through the
	 * host's control plane ("mytool map update"). */
	const char *per_comm_decl;
	const char *uniform_input;
	const char *map_update_how;
};

/* The platform's program type for an ELF section name, or by type name (NULL when none
 * matches or platform is NULL). */
const struct ebpf_prog_type *ebpf_platform_type_by_section(const struct ebpf_platform *platform,
							   const char *section);
const struct ebpf_prog_type *ebpf_platform_type_by_name(const struct ebpf_platform *platform,
							const char *name);
/* Writes the section names of every program type into buf, comma separated, a prefix type's
 * each of its names ("net/connect, net/accept, ...", or "net/<name>" without names; "none"
 * without types), for messages: the list comes from the table, so it cannot fall behind it. */
void ebpf_platform_sections(const struct ebpf_platform *platform, char *buf, size_t len);
/* Which of type's sections section is: 0 for a type without a prefix or names, else the index of
 * its name in type->names, with *num (may be NULL) the number of a "=N" name (saturated at
 * UINT64_MAX), else 0. -1 when section is none of type's. */
int ebpf_prog_type_section_name(const struct ebpf_prog_type *type, const char *section,
				uint64_t *num);
/* The ebpf_verify_stats.ctx_read bit of type's field called name (0 when it has none). */
uint64_t ebpf_prog_type_field_bit(const struct ebpf_prog_type *type, const char *name);

#ifdef __cplusplus
}
#endif
#endif
