/* ebpf_exec__new: structural validation of raw instructions and resolution of map references.
 *
 * Everything the interpreter and the JITs rely on without re-checking is established here:
 * every opcode is one RFC 9669 (v1-v4) defines, with its reserved fields zero; registers exist
 * and r10 is never written (insn_rules.c, the table the verifier checks through too); every jump
 * and local call lands on an instruction start inside the program; helper ids exist in the table;
 * the program cannot fall off its end. Semantic safety (types, bounds, termination) is the
 * verifier's job, not this file's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "err.h"
#include "insn_rules.h"
#include "ebpf/maps.h"
#include "exec_internal.h"

/* Reads an option field only when the caller's struct is large enough to have it. */
#define OPT(opts, field, dflt)                                                                     \
	((opts) && (opts)->sz >= offsetof(typeof(*(opts)), field) + sizeof((opts)->field)          \
	     ? (opts)->field                                                                       \
	     : (dflt))

struct validator {
	const struct ebpf_insn *insns;
	uint32_t n;
	uint8_t *is_lddw_tail; /* 1 for the second slot of a 64-bit immediate load */
	const struct ebpf_helper_table *helpers;
	char *err;
	size_t err_len;
};

#define FAIL(v, pc, ...)                                                                           \
	do {                                                                                       \
		char _m[192];                                                                      \
		snprintf(_m, sizeof(_m), __VA_ARGS__);                                             \
		ebpf_errf((v)->err, (v)->err_len, "insn %u: %s", (unsigned)(pc), _m);              \
		return -EINVAL;                                                                    \
	} while (0)

static int check_target(struct validator *v, uint32_t pc, int64_t target, const char *what)
{
	if (target < 0 || target >= (int64_t)v->n)
		FAIL(v, pc, "%s out of range (target %lld, program has %u insns)", what,
		     (long long)target, v->n);
	if (v->is_lddw_tail[target])
		FAIL(v, pc, "%s into the middle of a 64-bit immediate load (target %lld)", what,
		     (long long)target);
	return 0;
}

/* Where a jump or call leads; the encoding itself is insn_rules.c's. */
static int check_flow(struct validator *v, uint32_t pc, const struct ebpf_insn *in)
{
	uint8_t op = EBPF_OP(in->code);

	switch (op) {
	case EBPF_JA:
		if (EBPF_CLASS(in->code) == EBPF_JMP32)
			return check_target(v, pc, (int64_t)pc + 1 + in->imm, "jump");
		return check_target(v, pc, (int64_t)pc + 1 + in->off, "jump");
	case EBPF_CALL:
		if (in->src_reg == EBPF_PSEUDO_CALL)
			return check_target(v, pc, (int64_t)pc + 1 + in->imm, "call");
		if ((uint32_t)in->imm >= EBPF_MAX_HELPERS || !v->helpers ||
		    !v->helpers->by_id[in->imm] || !v->helpers->by_id[in->imm]->fn)
			FAIL(v, pc, "call to unknown helper %d", in->imm);
		return 0;
	case EBPF_EXIT:
		return 0;
	default:
		return check_target(v, pc, (int64_t)pc + 1 + in->off, "jump");
	}
}

static int validate(struct validator *v, uint32_t n_maps)
{
	const struct ebpf_insn *insns = v->insns;
	uint32_t pc;

	/* First pass: instruction boundaries, so jumps into a 64-bit load can be refused. */
	for (pc = 0; pc < v->n; pc++) {
		if (ebpf_insn_is_lddw(&insns[pc]) && pc + 1 < v->n)
			v->is_lddw_tail[++pc] = 1;
	}
	for (pc = 0; pc < v->n; pc++) {
		const struct ebpf_insn *in = &insns[pc];
		char why[160];
		uint8_t cls = EBPF_CLASS(in->code);

		if (ebpf_insn_check(in, v->n - pc, n_maps, why, sizeof(why)))
			FAIL(v, pc, "%s", why);
		if (ebpf_insn_is_lddw(in))
			pc++;
		else if (cls == EBPF_JMP || cls == EBPF_JMP32) {
			int rc = check_flow(v, pc, in);
			if (rc)
				return rc;
		}
	}
	{
		const struct ebpf_insn *last = &insns[v->n - 1];
		int is_exit = last->code == (EBPF_JMP | EBPF_EXIT);
		int is_ja =
		    last->code == (EBPF_JMP | EBPF_JA) || last->code == (EBPF_JMP32 | EBPF_JA);
		if (v->is_lddw_tail[v->n - 1] || (!is_exit && !is_ja))
			FAIL(v, v->n - 1,
			     "last instruction must be exit or ja (falls off the end)");
	}
	return 0;
}

static int add_implicit_region(struct ebpf_exec *prog, uint64_t base, uint64_t size, uint32_t perms)
{
	struct ebpf_region *r;
	uint32_t i;

	for (i = 0; i < prog->n_implicit_regions; i++)
		if (prog->implicit_regions[i].base == base)
			return 0;
	r = realloc(prog->implicit_regions, (prog->n_implicit_regions + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	prog->implicit_regions = r;
	r[prog->n_implicit_regions++] = (struct ebpf_region){base, size, perms};
	return 0;
}

/* Rewrites EBPF_PSEUDO_MAP_* loads in the private copy into plain 64-bit immediates. */
static int resolve_maps(struct ebpf_exec *prog, char *err, size_t err_len)
{
	uint32_t pc;

	for (pc = 0; pc + 1 < prog->n_insns; pc++) {
		struct ebpf_insn *in = &prog->insns[pc];
		struct ebpf_map *map;
		uint64_t val;

		if (!ebpf_insn_is_lddw(in))
			continue;
		if (in->src_reg == EBPF_PSEUDO_MAP_FD) {
			map = prog->maps[in->imm];
			if (!map) {
				ebpf_errf(err, err_len, "insn %u: map %d is NULL", pc, in->imm);
				return -EINVAL;
			}
			val = (uint64_t)(uintptr_t)map;
		} else if (in->src_reg == EBPF_PSEUDO_MAP_VALUE) {
			uint32_t off = (uint32_t)in[1].imm, vsize;
			uint8_t *value;
			int rc;

			map = prog->maps[in->imm];
			if (!map) {
				ebpf_errf(err, err_len, "insn %u: map %d is NULL", pc, in->imm);
				return -EINVAL;
			}
			if (ebpf_map__type(map) != EBPF_MAP_TYPE_ARRAY ||
			    (ebpf_map__flags(map) & EBPF_MAP_F_PER_COMM)) {
				ebpf_errf(
				    err, err_len,
				    "insn %u: direct value access needs an array map that is not "
				    "per-communicator (map '%s')",
				    pc, ebpf_map__name(map));
				return -EINVAL;
			}
			vsize = ebpf_map__value_size(map);
			if (off >= vsize) {
				ebpf_errf(
				    err, err_len,
				    "insn %u: value offset %u out of range (map '%s' value size "
				    "%u)",
				    pc, off, ebpf_map__name(map), vsize);
				return -EINVAL;
			}
			value = ebpf_map__lookup_elem(map, &(uint32_t){0});
			if (!value) {
				ebpf_errf(err, err_len, "insn %u: map '%s' has no element 0", pc,
					  ebpf_map__name(map));
				return -EINVAL;
			}
			rc = add_implicit_region(
			    prog, (uint64_t)(uintptr_t)value, vsize,
			    EBPF_REGION_READ | ((ebpf_map__flags(map) & EBPF_MAP_F_RDONLY_PROG)
						    ? 0
						    : EBPF_REGION_WRITE));
			if (rc) {
				ebpf_errf(err, err_len, "out of memory");
				return rc;
			}
			val = (uint64_t)(uintptr_t)value + off;
		} else {
			pc++;
			continue;
		}
		in->src_reg = 0;
		in->imm = (int32_t)(uint32_t)val;
		in[1].imm = (int32_t)(uint32_t)(val >> 32);
		pc++;
	}
	return 0;
}

/* Rewrites opts->f32_loads into EBPF_INTERNAL_LDX_F32 (exec_internal.h) after checking that each
 * is an 8-byte load of an element of the field and the conversion is one the JIT can do. */
static int convert_loads(struct ebpf_exec *prog, const struct ebpf_exec_opts *opts, char *err,
			 size_t err_len)
{
	const struct ebpf_ctx_from_f32 *c = OPT(opts, from_f32, NULL);
	const struct ebpf_exec_ctx_load *l = OPT(opts, f32_loads, NULL);
	uint32_t n = l ? OPT(opts, n_f32_loads, 0) : 0;
	if (!n)
		return 0;
	/* |v * scale| + 0.5 stays below 2^62 for every v in [lo, hi): the truncation is exact */
	const double big = 4611686018427387904.0;
	if (!c || c->src_off % 8 || !(c->lo < c->hi) ||
	    !((double)c->lo * c->scale > -big && (double)c->lo * c->scale < big &&
	      (double)c->hi * c->scale > -big && (double)c->hi * c->scale < big)) {
		ebpf_errf(err, err_len, "invalid context conversion");
		return -1;
	}
	for (uint32_t k = 0; k < n; k++) {
		struct ebpf_insn *in = l[k].insn < prog->n_insns ? &prog->insns[l[k].insn] : NULL;
		int64_t rel = (int64_t)l[k].ctx_off - c->field_off;
		/* src + insn.off is the context plus ctx_off: the context starts at src + insn.off
		 * - ctx_off */
		int64_t disp = in ? (int64_t)in->off - l[k].ctx_off + c->src_off : 0;
		if (!in || in->code != (EBPF_LDX | EBPF_MEM | EBPF_DW) || rel < 0 || rel % 8 ||
		    rel / 8 >= c->n || disp < INT16_MIN || disp > INT16_MAX) {
			ebpf_errf(err, err_len,
				  "insn %u: not an 8-byte load of an element to convert",
				  l[k].insn);
			return -1;
		}
		in->code = EBPF_INTERNAL_LDX_F32;
		in->off = (int16_t)disp;
		in->imm = (int32_t)(rel / 8 * 4);
	}
	prog->from_f32 = *c;
	prog->n_f32_loads = n;
	return 0;
}

struct ebpf_exec *ebpf_exec__new(const struct ebpf_insn *insns, uint32_t n_insns,
				 const struct ebpf_exec_opts *opts, char *err, size_t err_len)
{
	const char *name = OPT(opts, name, NULL);
	struct ebpf_map *const *maps = OPT(opts, maps, NULL);
	uint32_t n_maps = maps ? OPT(opts, n_maps, 0) : 0;
	struct validator v = {
	    .insns = insns,
	    .n = n_insns,
	    .helpers = OPT(opts, helpers, NULL),
	    .err = err,
	    .err_len = err_len,
	};
	struct ebpf_exec *prog;

	if (err && err_len)
		err[0] = 0;
	if (!insns || n_insns == 0) {
		ebpf_errf(err, err_len, "empty program");
		return NULL;
	}
	if (n_insns > EBPF_MAX_INSNS) {
		ebpf_errf(err, err_len, "program too large (%u insns, limit %u)", n_insns,
			  EBPF_MAX_INSNS);
		return NULL;
	}
	v.is_lddw_tail = calloc(n_insns, 1);
	if (!v.is_lddw_tail) {
		ebpf_errf(err, err_len, "out of memory");
		return NULL;
	}
	if (validate(&v, n_maps)) {
		free(v.is_lddw_tail);
		return NULL;
	}
	free(v.is_lddw_tail);

	prog = calloc(1, sizeof(*prog));
	if (!prog)
		goto oom;
	snprintf(prog->name, sizeof(prog->name), "%s", name ? name : "");
	prog->n_insns = n_insns;
	prog->helpers = v.helpers;
	prog->insns = malloc((size_t)n_insns * sizeof(*insns));
	if (!prog->insns)
		goto oom;
	memcpy(prog->insns, insns, (size_t)n_insns * sizeof(*insns));
	if (n_maps) {
		prog->maps = malloc(n_maps * sizeof(*prog->maps));
		if (!prog->maps)
			goto oom;
		memcpy(prog->maps, maps, n_maps * sizeof(*prog->maps));
		prog->n_maps = n_maps;
	}
	if (resolve_maps(prog, err, err_len)) {
		ebpf_exec__free(prog);
		return NULL;
	}
	if (convert_loads(prog, opts, err, err_len)) {
		ebpf_exec__free(prog);
		return NULL;
	}
	prog->interp_insns = calloc(n_insns, sizeof(*prog->interp_insns));
	if (!prog->interp_insns)
		goto oom;
	for (uint32_t i = 0; i < n_insns; i++) {
		const struct ebpf_insn *in = &prog->insns[i];
		prog->interp_insns[i] = (struct ebpf_interp_insn){.code = in->code,
								  .dst = in->dst_reg,
								  .src = in->src_reg,
								  .off = in->off,
								  .imm = in->imm};
	}
	return prog;
oom:
	ebpf_errf(err, err_len, "out of memory");
	ebpf_exec__free(prog);
	return NULL;
}

void ebpf_exec__free(struct ebpf_exec *prog)
{
	if (!prog)
		return;
	/* Contract with jit/ (exec_internal.h): jit_mem is an mmap()ed mapping. */
	if (prog->jit_mem)
		munmap(prog->jit_mem, prog->jit_mem_size);
	free(prog->insns);
	free(prog->interp_insns);
	free(prog->maps);
	free(prog->implicit_regions);
	free(prog);
}

uint32_t ebpf_exec__insn_cnt(const struct ebpf_exec *prog)
{
	return prog ? prog->n_insns : 0;
}

const struct ebpf_insn *ebpf_exec__insns(const struct ebpf_exec *prog)
{
	return prog ? prog->insns : NULL;
}

const char *ebpf_exec__name(const struct ebpf_exec *prog)
{
	return prog ? prog->name : NULL;
}
