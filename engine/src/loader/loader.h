/* Internals of the BPF ELF loader, shared by its files:
 *   elf.c    ELF64 container: header, sections, symbols (bounds-checked, unaligned-safe)
 *   btf.c    .BTF types and strings, map definitions, .BTF.ext line info
 *   maps.c   map table of an object: .maps (BTF-defined) and global data sections
 *   export.c maps exported as metrics: the key's and value's integer fields, checked
 *   link.c   program assembly: functions, relocations, bpf-to-bpf call linking, line info
 *   object.c open/close and the public accessors
 *   limits.c what an object asks for against its host's limits (before anything is created)
 *   load.c   map creation, verification, program creation
 * Every length, offset and count read from the file is checked before use. */
#ifndef EBPF_LOADER_H
#define EBPF_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ebpf/elf.h" /* ebpf_le16/32/64: the little-endian field readers */
#include "ebpf/object.h"

/* --- Error reporting: every failure writes one line and returns -errno ---------------------- */
int ldr_err(char *err, size_t err_len, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* off + len <= size without overflow. */
static inline int ldr_in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* --- ELF ----------------------------------------------------------------------------------- */
#define LDR_SHT_NULL	  0
#define LDR_SHT_PROGBITS  EBPF_ELF_SHT_PROGBITS
#define LDR_SHT_SYMTAB	  2
#define LDR_SHT_STRTAB	  3
#define LDR_SHT_RELA	  4
#define LDR_SHT_NOBITS	  EBPF_ELF_SHT_NOBITS
#define LDR_SHT_REL	  9
#define LDR_SHF_WRITE	  0x1
#define LDR_SHF_ALLOC	  0x2
#define LDR_SHF_EXECINSTR 0x4
#define LDR_SHN_UNDEF	  0
#define LDR_SHN_LORESERVE 0xff00
#define LDR_STT_NOTYPE	  0
#define LDR_STT_OBJECT	  1
#define LDR_STT_FUNC	  2
#define LDR_STT_SECTION	  3
#define LDR_EM_BPF	  247

#define LDR_R_BPF_NONE	      0
#define LDR_R_BPF_64_64	      1
#define LDR_R_BPF_64_ABS64    2
#define LDR_R_BPF_64_ABS32    3
#define LDR_R_BPF_64_NODYLD32 4
#define LDR_R_BPF_64_32	      10

#define LDR_MAX_SECTIONS 4096u
#define LDR_MAX_SYMBOLS	 (1u << 20)
#define LDR_MAP_NAME_LEN 64u

struct ldr_sec {
	const char *name;
	uint32_t type;
	uint64_t flags;
	uint64_t off;
	uint64_t size;
	uint32_t link;
	uint32_t info;
	uint64_t entsize;
	const uint8_t *data; /* NULL for NOBITS and the null section */
};

struct ldr_sym {
	const char *name; /* "" when unnamed */
	uint64_t value;
	uint64_t size;
	uint16_t shndx;
	uint8_t type;
	uint8_t bind;
};

struct ldr_elf {
	const uint8_t *buf;
	size_t size;
	struct ldr_sec *secs;
	uint32_t n_secs;
	uint32_t symtab_idx; /* 0 when there is no symbol table */
	const uint8_t *syms;
	uint32_t n_syms;
	const char *strtab;
	uint64_t strtab_size;
};

int ldr_elf_parse(struct ldr_elf *elf, const uint8_t *buf, size_t size, char *err, size_t err_len);
void ldr_elf_free(struct ldr_elf *elf);
/* Reads symbol idx (name validated). */
int ldr_elf_sym(const struct ldr_elf *elf, uint32_t idx, struct ldr_sym *sym, char *err,
		size_t err_len);
/* Index of the section with this name, or 0. */
uint32_t ldr_elf_find_sec(const struct ldr_elf *elf, const char *name);

/* --- BTF ----------------------------------------------------------------------------------- */
#define LDR_BTF_KIND_INT	1
#define LDR_BTF_KIND_PTR	2
#define LDR_BTF_KIND_ARRAY	3
#define LDR_BTF_KIND_STRUCT	4
#define LDR_BTF_KIND_UNION	5
#define LDR_BTF_KIND_ENUM	6
#define LDR_BTF_KIND_FWD	7
#define LDR_BTF_KIND_TYPEDEF	8
#define LDR_BTF_KIND_VOLATILE	9
#define LDR_BTF_KIND_CONST	10
#define LDR_BTF_KIND_RESTRICT	11
#define LDR_BTF_KIND_FUNC	12
#define LDR_BTF_KIND_FUNC_PROTO 13
#define LDR_BTF_KIND_VAR	14
#define LDR_BTF_KIND_DATASEC	15
#define LDR_BTF_KIND_FLOAT	16
#define LDR_BTF_KIND_DECL_TAG	17
#define LDR_BTF_KIND_TYPE_TAG	18
#define LDR_BTF_KIND_ENUM64	19

#define LDR_BTF_MAX_TYPES (1u << 20)

struct ldr_btf_type {
	uint32_t name_off;
	uint32_t kind;
	uint32_t kflag; /* struct/union: members carry bitfield sizes; enum: signed values */
	uint32_t vlen;
	uint32_t size_or_type;
	const uint8_t *extra; /* kind-specific data after the common header (validated length) */
};

struct ldr_btf {
	const uint8_t *types; /* start of the type section */
	uint32_t *offs;	      /* offs[id] = byte offset of type id (id 1..n_types) */
	uint32_t n_types;
	const char *strs;
	uint32_t str_len;
};

int ldr_btf_parse(struct ldr_btf *btf, const uint8_t *data, uint64_t size, char *err,
		  size_t err_len);
void ldr_btf_free(struct ldr_btf *btf);
/* NUL-terminated string at off, or NULL when off is outside the string section. */
const char *ldr_btf_str(const struct ldr_btf *btf, uint32_t off);
/* Type id (1..n) into t; -EINVAL when id is out of range. */
int ldr_btf_type(const struct ldr_btf *btf, uint32_t id, struct ldr_btf_type *t);
/* Follows typedef/const/volatile/restrict/type_tag; returns the id of the underlying type. */
int ldr_btf_skip_mods(const struct ldr_btf *btf, uint32_t id, uint32_t *out);
/* Size in bytes of a type (arrays multiply out); -EINVAL when it has none or is malformed. */
int ldr_btf_size(const struct ldr_btf *btf, uint32_t id, uint64_t *size);

/* One .BTF.ext line record, resolved. */
struct ldr_line {
	uint32_t sec;  /* ELF section index */
	uint32_t insn; /* instruction index within that section */
	uint32_t line, col;
	const char *file, *src;
};

/* Parses .BTF.ext: line info records (sorted by section, insn); rejects CO-RE relocations. */
int ldr_btf_ext_parse(const struct ldr_elf *elf, const struct ldr_btf *btf, const uint8_t *data,
		      uint64_t size, struct ldr_line **lines, uint32_t *n_lines, char *err,
		      size_t err_len);

/* --- The object ---------------------------------------------------------------------------- */
struct ebpf_object_map {
	char name[LDR_MAP_NAME_LEN];
	uint32_t index;
	int kind;
	struct ebpf_map_def def;
	uint8_t *init;	  /* initial contents (data maps) */
	uint32_t sec;	  /* ELF section: .maps for BTF maps, the data section otherwise */
	uint64_t sym_off; /* BTF maps: symbol offset in .maps */
	struct ebpf_map *map;
	/* rank.c, at verification: EBPF_OBJECT_MAP_F_*, and the first write found (the program
	 * and instruction named when a decision may not depend on the map) */
	uint32_t rank_flags;
	const struct ebpf_program *writer;
	uint32_t writer_insn;
	/* BTF ids of the key and value types (0: none; a data map's value is its DATASEC) */
	uint32_t key_type, value_type;
	const struct ebpf_object *obj;
	/* export.c: __uint(ncclbpf_export, N) and the key's and value's fields */
	uint32_t export_kind;
	uint32_t n_fields[2];
	struct ebpf_map_field fields[2][EBPF_MAP_FIELDS_MAX];
};

struct ebpf_program {
	char *name;
	char *section;
	const struct ebpf_prog_type *type;
	struct ebpf_insn *insns;
	uint32_t n_insns;
	uint32_t entry_insns;
	struct ebpf_line_info *lines;
	uint32_t n_lines;
	struct ldr_pfunc {
		char *name;
		uint32_t start, len;
	} * funcs; /* [0] is the entry function, then the appended ones in code order */
	uint32_t n_funcs;
	struct ebpf_exec *prog;
	struct ebpf_verify_stats vstats;
	/* With ebpf_object_load_opts.convert_ctx and a type with from_f32: the verifier's context
	 * offset of each load (ebpf_verify_opts.ctx_off), and how many loads were converted. */
	int32_t *ctx_off;
	uint32_t n_f32_loads;
};

struct ebpf_object {
	char *name;
	uint8_t *image; /* copy of the ELF file: BTF strings referenced by line info live here */
	size_t image_size;
	struct ebpf_program *progs;
	uint32_t n_progs;
	struct ebpf_object_map *maps;
	uint32_t n_maps;
	uint32_t maps_room; /* entries allocated in maps (ldr_collect_maps) */
	struct ldr_btf btf; /* kept for typed map contents (its data lives in image) */
	const struct ebpf_platform *platform; /* the host's program types and helpers */
	int loaded;
	/* Set by ebpf_object__load: frees the created maps and programs. A pointer, so that users
	 * that only open objects (objdump, the open fuzzer) do not link maps and programs. */
	void (*unload)(struct ebpf_object *obj);
};

/* Builds obj->maps from .maps (BTF) and the global data sections. */
/* export.c: records an exported map's fields from its key and value BTF types (kind is the
 * __uint(ncclbpf_export, N) value); an error naming the map and member when they cannot be
 * exported. */
int ldr_map_export(struct ebpf_object_map *m, const struct ldr_btf *btf, uint32_t kind,
		   uint32_t key_type, uint32_t value_type, char *err, size_t err_len);
int ldr_collect_maps(struct ebpf_object *obj, const struct ldr_elf *elf, const struct ldr_btf *btf,
		     char *err, size_t err_len);
/* Map index of a relocation target section/offset, or -1 when the section holds no map. */
int ldr_map_for_sym(const struct ebpf_object *obj, const struct ldr_elf *elf,
		    const struct ldr_sym *sym);
/* rank.c: verifies every program and classifies the maps for rank consistency (one place).
 * Without report: stops at the first rejection (-errno, err names the program). With report:
 * verifies everything and reports each program's verdict; returns the number rejected. */
int ldr_verify_programs(struct ebpf_object *obj, struct ebpf_map *const *maps,
			const struct ebpf_helper_table *helpers,
			const struct ebpf_object_load_opts *o, ebpf_object_verify_report_fn report,
			void *arg, char *err, size_t err_len);
/* Builds obj->progs (functions, relocations, call linking, line info). */
int ldr_link_programs(struct ebpf_object *obj, const struct ldr_elf *elf,
		      const struct ldr_line *lines, uint32_t n_lines, char *err, size_t err_len);

#endif
