/* BPF ELF objects: the loader. Owner: engine/src/loader/.
 *
 * An object is what `clang -O2 -g -target bpf -mcpu=v3 -c policy.c` produces. Opening it parses
 * and checks the ELF (and BTF, .BTF.ext), and assembles every program: programs are chosen by
 * section name (the platform's program types, progtype.h), bpf-to-bpf calls pull the called
 * functions (static subprograms in .text) into each program, map references become
 * EBPF_PSEUDO_MAP_FD and global data references EBPF_PSEUDO_MAP_VALUE, both with imm = index into
 * the object's map table. Nothing is created or run by opening. Loading creates the maps (with
 * their initial data), verifies every program and creates the executable programs (prog.h).
 *
 * Malformed or unsupported input of any kind is rejected with one line naming the section,
 * symbol and offset; the loader never trusts a length, offset or count in the file. */
#ifndef EBPF_OBJECT_H
#define EBPF_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "isa.h"
#include "maps.h"
#include "exec.h"
#include "progtype.h"
#include "verifier.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits: larger inputs are rejected with -E2BIG. */
#define EBPF_OBJECT_MAX_SIZE  (64u << 20) /* bytes of ELF */
#define EBPF_OBJECT_MAX_PROGS 256u
#define EBPF_OBJECT_MAX_MAPS  64u
#define EBPF_OBJECT_MAX_DATA  (1u << 20) /* bytes of one global data section */
/* Instructions (and line records) of all assembled programs together: every program carries its
 * own copy of the subprograms it calls, so a small file could otherwise expand enormously. */
#define EBPF_OBJECT_MAX_TOTAL_INSNS (1u << 22)

struct ebpf_object;
struct ebpf_program;	/* one program of an object (its code before loading, its prog after) */
struct ebpf_object_map; /* one map declared by an object (definition, initial data, the map) */

struct ebpf_object_open_opts {
	size_t sz;
	const char *name; /* used in messages; default: the file name, or "mem" */
	/* The host's program types and helpers (progtype.h); it must outlive the object. NULL:
	 * none, so every section other than .text is refused as of an unknown program type. */
	const struct ebpf_platform *platform;
};

/* Parses an object. buf is copied: the caller may free it at once. On failure returns NULL,
 * sets errno (EINVAL malformed/unsupported, E2BIG too large, ENOMEM, ENOENT/EIO for files) and
 * writes one line to err. */
struct ebpf_object *ebpf_object__open_mem(const void *buf, size_t size,
					  const struct ebpf_object_open_opts *opts, char *err,
					  size_t err_len);
struct ebpf_object *ebpf_object__open_file(const char *path,
					   const struct ebpf_object_open_opts *opts, char *err,
					   size_t err_len);

/* What one object may ask for, checked from its definitions before anything is allocated or
 * verified (a host embedding policies sets these; the engine has no defaults of its own beyond
 * the hard limits above). 0 in a field: no limit. */
struct ebpf_object_limits {
	size_t sz;
	uint64_t map_bytes;	/* memory of all maps together, by ebpf_map__def_memory */
	uint64_t ringbuf_bytes; /* size of any one ring buffer */
	uint32_t progs;		/* programs */
	uint32_t insns;		/* instructions of all assembled programs together */
	/* Appended to a map memory refusal, e.g. "MY_MAX_MAP_BYTES raises it"; may be NULL. */
	const char *map_bytes_hint;
};

/* What an object asks for, in the limits' terms. */
struct ebpf_object_usage {
	size_t sz;
	uint64_t map_bytes;	    /* all maps together */
	uint64_t largest_map_bytes; /* the largest map, largest_map its index (maps only) */
	uint32_t largest_map;
	uint64_t ringbuf_bytes; /* the largest ring buffer */
	uint32_t maps, progs, insns;
};

/* Measures obj into usage (may be NULL) and checks it against lim (NULL: measure only).
 * Returns 0, or -E2BIG with one line in err naming the limit, what the object asks and, for
 * memory, its largest map. Cheap: reads definitions and counts, allocates nothing. */
int ebpf_object__check_limits(const struct ebpf_object *obj, const struct ebpf_object_limits *lim,
			      struct ebpf_object_usage *usage, char *err, size_t err_len);

struct ebpf_object_load_opts {
	size_t sz;
	/* NULL: the platform's (ebpf_object_open_opts.platform), else ebpf_helpers_default() */
	const struct ebpf_helper_table *helpers;
	uint32_t verify_flags;	   /* EBPF_VERIFY_F_* for every program */
	uint64_t complexity_limit; /* 0: the verifier's default */
	char *log_buf;		   /* verifier log of the failing program */
	size_t log_size;
	const struct ebpf_object_limits *limits; /* checked first; NULL: the hard limits only */
	/* 1: a program whose type has a field to convert (ebpf_prog_type.from_f32) and reads it
	 * only in whole elements at offsets the verifier found fixed is created with those reads
	 * converted (ebpf_program__ctx_converted); the host must then run it on contexts that
	 * hold the array's address. 0: contexts are plain memory. */
	int convert_ctx;
};

/* Checks the object against opts->limits (before anything is created), creates the maps
 * (global data maps filled with their initial contents), verifies every program and creates it.
 * Verification decides which maps decisions may depend on (rank consistency: every map a program
 * of the object may write is rank-local, except per-communicator maps, and so are per-CPU and
 * LRU maps; docs/verifier.md) and records it on each map (ebpf_object_map__rank_flags). All or
 * nothing: on failure nothing stays created. Returns 0 or -errno (-E2BIG: over a limit,
 * -EACCES: a program was rejected) with err filled. Loading twice is -EBUSY. */
int ebpf_object__load(struct ebpf_object *obj, const struct ebpf_object_load_opts *opts, char *err,
		      size_t err_len);
/* What loading verifies, without stopping at the first rejection and without creating
 * programs: creates the maps, verifies every program as ebpf_object__load would, calls
 * report(arg, p, rc, msg) for each program in object order with its verdict (0, or -errno and
 * the one-line reason; statistics in ebpf_program__verify_stats; with opts->log_buf, the log of
 * that program's verification is in it during the call), records the maps' classification and
 * frees the maps again. Returns the number of programs rejected, or -errno (maps could not be
 * created; -EBUSY when loaded). For `ncclbpf verify`. */
typedef void (*ebpf_object_verify_report_fn)(void *arg, struct ebpf_program *p, int rc,
					     const char *msg);
int ebpf_object__verify(struct ebpf_object *obj, const struct ebpf_object_load_opts *opts,
			ebpf_object_verify_report_fn report, void *arg, char *err, size_t err_len);
/* Frees the object with its programs and maps. The caller guarantees that nothing still runs
 * them. NULL is ignored. */
void ebpf_object__close(struct ebpf_object *obj);

const char *ebpf_object__name(const struct ebpf_object *obj);
int ebpf_object__is_loaded(const struct ebpf_object *obj);

/* --- Programs ------------------------------------------------------------------------------ */
uint32_t ebpf_object__prog_cnt(const struct ebpf_object *obj);
struct ebpf_program *ebpf_object__prog(const struct ebpf_object *obj, uint32_t idx);
/* Iteration: prev NULL gives the first; returns NULL after the last. */
struct ebpf_program *ebpf_object__next_program(const struct ebpf_object *obj,
					       const struct ebpf_program *prev);
struct ebpf_program *ebpf_object__find_program_by_name(const struct ebpf_object *obj,
						       const char *name);

const char *ebpf_program__name(const struct ebpf_program *p);	 /* the function's name */
const char *ebpf_program__section(const struct ebpf_program *p); /* "tuner", "net/connect" */
const struct ebpf_prog_type *ebpf_program__type(const struct ebpf_program *p);
/* The assembled code as handed to the verifier: the entry function first, then every function
 * it calls (transitively), calls fixed up, map and data references as pseudo immediates. */
const struct ebpf_insn *ebpf_program__insns(const struct ebpf_program *p);
uint32_t ebpf_program__insn_cnt(const struct ebpf_program *p);
/* Instructions of the entry function alone (the rest are appended subprograms). */
uint32_t ebpf_program__entry_insn_cnt(const struct ebpf_program *p);
/* C source positions (sorted by insn; empty without .BTF.ext). Valid while the object lives. */
const struct ebpf_line_info *ebpf_program__line_info(const struct ebpf_program *p,
						     uint32_t *n_lines);
/* The source line of insn (the closest record at or before it), or NULL. */
const struct ebpf_line_info *ebpf_program__line_of(const struct ebpf_program *p, uint32_t insn);
/* The functions the code is made of: index 0 is the entry function, then each appended
 * subprogram with its first instruction and length. NULL when idx is out of range. */
uint32_t ebpf_program__func_cnt(const struct ebpf_program *p);
const char *ebpf_program__func(const struct ebpf_program *p, uint32_t idx, uint32_t *start,
			       uint32_t *len);
/* Name of the function that contains insn, or NULL. */
const char *ebpf_program__func_at(const struct ebpf_program *p, uint32_t insn);
/* After a successful load: the executable program and the verifier's statistics. */
struct ebpf_exec *ebpf_program__exec(const struct ebpf_program *p);
const struct ebpf_verify_stats *ebpf_program__verify_stats(const struct ebpf_program *p);
/* After a successful load: 1 when the program's reads of its type's from_f32 field were
 * converted (ebpf_object_load_opts.convert_ctx; the host need not fill the field but must give
 * the array's address), 0 when it reads the field as memory or not at all. */
int ebpf_program__ctx_converted(const struct ebpf_program *p);

/* --- Maps ---------------------------------------------------------------------------------- */
enum ebpf_object_map_kind {
	EBPF_OBJECT_MAP_BTF = 0, /* declared in .maps */
	EBPF_OBJECT_MAP_RODATA,	 /* .rodata*: one-element array, read-only for programs */
	EBPF_OBJECT_MAP_DATA,	 /* .data*: one-element array with initial contents */
	EBPF_OBJECT_MAP_BSS,	 /* .bss*: one-element array, zeroed */
};

uint32_t ebpf_object__map_cnt(const struct ebpf_object *obj);
/* idx is the index the programs' EBPF_PSEUDO_MAP_* immediates use. */
struct ebpf_object_map *ebpf_object__map(const struct ebpf_object *obj, uint32_t idx);
struct ebpf_object_map *ebpf_object__next_map(const struct ebpf_object *obj,
					      const struct ebpf_object_map *prev);
struct ebpf_object_map *ebpf_object__find_map_by_name(const struct ebpf_object *obj,
						      const char *name);

const char *ebpf_object_map__name(const struct ebpf_object_map *m);
uint32_t ebpf_object_map__index(const struct ebpf_object_map *m);
int ebpf_object_map__kind(const struct ebpf_object_map *m); /* enum ebpf_object_map_kind */
/* The kind's name, as tools show it: the section it was declared in, without the dot ("maps",
 * "rodata", "data", "bss"); "?" for a value that is no kind. */
const char *ebpf_object_map_kind__name(int kind);
const struct ebpf_map_def *ebpf_object_map__def(const struct ebpf_object_map *m);
/* Initial contents of element 0 of a global data map (value_size bytes), NULL for BTF maps. */
const void *ebpf_object_map__initial_data(const struct ebpf_object_map *m, size_t *size);
/* After a successful load: the map programs use. */
struct ebpf_map *ebpf_object_map__map(const struct ebpf_object_map *m);

/* A key (value 0) or value (value 1) of the map as JSON text, typed by the object's BTF: structs
 * as objects with their fields by name, arrays as arrays (a char array holding a C string as a
 * string), enums by name, integers as numbers, bools as true/false, a global data section as
 * an object of its variables (the shape `bpftool map dump` shows). data is size bytes (one
 * value; per-CPU maps: one CPU's). Returns 1 when typed, 0 when the map has no type for it (the
 * text is then the little-endian integer of 1, 2, 4 or 8 bytes, else "0x..." hex), -ENOSPC
 * when out_len is too small. */
int ebpf_object_map__json(const struct ebpf_object_map *m, int value, const void *data, size_t size,
			  char *out, size_t out_len);

/* Rank consistency of a map as verification decided it (after ebpf_object__load or
 * ebpf_object__verify; 0 before). */
#define EBPF_OBJECT_MAP_F_WRITTEN 0x1u /* some program of the object may write it */
#define EBPF_OBJECT_MAP_F_RANK_LOCAL                                                               \
	0x2u				/* contents may differ between ranks: no decision may      \
					   depend on it (written, per-CPU or LRU) */
#define EBPF_OBJECT_MAP_F_PER_COMM 0x4u /* one instance per communicator (decision state) */
uint32_t ebpf_object_map__rank_flags(const struct ebpf_object_map *m);
/* The first write verification found (program, instruction), or NULL when no program writes
 * the map. */
const struct ebpf_program *ebpf_object_map__writer(const struct ebpf_object_map *m, uint32_t *insn);

/* Maps a policy exports as metrics: declared with __uint(ncclbpf_export, N) in the map (N:
 * EBPF_MAP_EXPORT_GAUGE or EBPF_MAP_EXPORT_COUNTER). The loader checks at open that the key is
 * an integer or a struct of integers and integer arrays (each becomes a label) and the value an
 * integer or a struct of integers (each becomes a metric); members whose name starts with '_'
 * are padding and left out. */
#define EBPF_MAP_EXPORT_GAUGE	1u
#define EBPF_MAP_EXPORT_COUNTER 2u
#define EBPF_MAP_FIELDS_MAX	16u
#define EBPF_MAP_FIELD_NAME_LEN 48u
struct ebpf_map_field {
	char name[EBPF_MAP_FIELD_NAME_LEN]; /* the member's name; "key" or "value" for a scalar */
	uint32_t off;			    /* byte offset in the key or value */
	uint32_t size;			    /* bytes of one element: 1, 2, 4 or 8 */
	uint32_t count;			    /* elements (an array member), else 1 */
	uint32_t is_signed;
};
/* EBPF_MAP_EXPORT_*, or 0 when the map is not exported. */
uint32_t ebpf_object_map__export(const struct ebpf_object_map *m);
/* The key's (value = 0) or the value's (value = 1) fields of an exported map; returns how many
 * (0 when not exported). */
uint32_t ebpf_object_map__fields(const struct ebpf_object_map *m, int value,
				 const struct ebpf_map_field **out);

#ifdef __cplusplus
}
#endif
#endif
