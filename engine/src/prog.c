/* ebpf_prog__new: structural validation of raw instructions and resolution of map references.
 *
 * Everything the interpreter and the JITs rely on without re-checking is established here:
 * every opcode is one RFC 9669 (v1-v4) defines, with its reserved fields zero; registers exist
 * and r10 is never written; every jump and local call lands on an instruction start inside the
 * program; helper ids exist in the table; the program cannot fall off its end. Semantic safety
 * (types, bounds, termination) is the verifier's job, not this file's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "err.h"
#include "ncclbpf/maps.h"
#include "prog_internal.h"

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
		char _m[128];                                                                      \
		snprintf(_m, sizeof(_m), __VA_ARGS__);                                             \
		ebpf_errf((v)->err, (v)->err_len, "insn %u: %s", (unsigned)(pc), _m);              \
		return -EINVAL;                                                                    \
	} while (0)

static int check_alu(struct validator *v, uint32_t pc, const struct ebpf_insn *in)
{
	int is64 = EBPF_CLASS(in->code) == EBPF_ALU64;
	uint8_t op = EBPF_OP(in->code);
	int is_x = EBPF_SRC(in->code) == EBPF_X;

	if (in->dst_reg == EBPF_REG_10)
		FAIL(v, pc, "frame pointer r10 is read only");
	switch (op) {
	case EBPF_NEG:
		if (is_x || in->src_reg || in->off || in->imm)
			FAIL(v, pc, "neg uses reserved fields (code 0x%02x)", in->code);
		return 0;
	case EBPF_END:
		if (is64 && is_x)
			FAIL(v, pc, "unknown opcode 0x%02x", in->code);
		if (in->src_reg || in->off)
			FAIL(v, pc, "byte swap uses reserved fields");
		if (in->imm != 16 && in->imm != 32 && in->imm != 64)
			FAIL(v, pc, "invalid byte swap width %d (must be 16, 32 or 64)", in->imm);
		return 0;
	case EBPF_DIV:
	case EBPF_MOD:
		if (in->off != 0 && in->off != 1)
			FAIL(v, pc, "invalid offset %d for %s (0: unsigned, 1: signed)", in->off,
			     op == EBPF_DIV ? "div" : "mod");
		break;
	case EBPF_MOV:
		if (in->off) {
			int ok = is_x && (in->off == 8 || in->off == 16 || (is64 && in->off == 32));
			if (!ok)
				FAIL(v, pc, "invalid sign-extension width %d for mov%s", in->off,
				     is64 ? "" : "32");
		}
		break;
	case EBPF_ADD:
	case EBPF_SUB:
	case EBPF_MUL:
	case EBPF_OR:
	case EBPF_AND:
	case EBPF_LSH:
	case EBPF_RSH:
	case EBPF_XOR:
	case EBPF_ARSH:
		if (in->off)
			FAIL(v, pc, "alu uses reserved field off=%d", in->off);
		break;
	default:
		FAIL(v, pc, "unknown opcode 0x%02x", in->code);
	}
	if (is_x && in->imm)
		FAIL(v, pc, "alu with register source uses reserved field imm=%d", in->imm);
	if (!is_x && in->src_reg)
		FAIL(v, pc, "alu with immediate source uses reserved field src_reg=%u",
		     in->src_reg);
	return 0;
}

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

static int check_jmp(struct validator *v, uint32_t pc, const struct ebpf_insn *in)
{
	int is32 = EBPF_CLASS(in->code) == EBPF_JMP32;
	uint8_t op = EBPF_OP(in->code);
	int is_x = EBPF_SRC(in->code) == EBPF_X;

	switch (op) {
	case EBPF_JA:
		if (is_x || in->dst_reg || in->src_reg)
			FAIL(v, pc, "ja uses reserved fields (code 0x%02x)", in->code);
		if (is32) {
			if (in->off)
				FAIL(v, pc, "gotol uses reserved field off=%d", in->off);
			return check_target(v, pc, (int64_t)pc + 1 + in->imm, "jump");
		}
		if (in->imm)
			FAIL(v, pc, "ja uses reserved field imm=%d", in->imm);
		return check_target(v, pc, (int64_t)pc + 1 + in->off, "jump");
	case EBPF_CALL:
		if (is32 || is_x)
			FAIL(v, pc, "unknown opcode 0x%02x", in->code);
		if (in->dst_reg || in->off)
			FAIL(v, pc, "call uses reserved fields");
		if (in->src_reg == EBPF_PSEUDO_HELPER) {
			uint32_t id = (uint32_t)in->imm;
			if (id >= EBPF_MAX_HELPERS || !v->helpers || !v->helpers->by_id[id] ||
			    !v->helpers->by_id[id]->fn)
				FAIL(v, pc, "call to unknown helper %d", in->imm);
			return 0;
		}
		if (in->src_reg == EBPF_PSEUDO_CALL)
			return check_target(v, pc, (int64_t)pc + 1 + in->imm, "call");
		if (in->src_reg == EBPF_PSEUDO_KFUNC)
			FAIL(v, pc, "kfunc calls are not supported");
		FAIL(v, pc, "call with unknown src_reg %u", in->src_reg);
	case EBPF_EXIT:
		if (is32 || is_x)
			FAIL(v, pc, "unknown opcode 0x%02x", in->code);
		if (in->dst_reg || in->src_reg || in->off || in->imm)
			FAIL(v, pc, "exit uses reserved fields");
		return 0;
	case EBPF_JEQ:
	case EBPF_JGT:
	case EBPF_JGE:
	case EBPF_JSET:
	case EBPF_JNE:
	case EBPF_JSGT:
	case EBPF_JSGE:
	case EBPF_JLT:
	case EBPF_JLE:
	case EBPF_JSLT:
	case EBPF_JSLE:
		if (is_x && in->imm)
			FAIL(v, pc, "jump with register source uses reserved field imm=%d",
			     in->imm);
		if (!is_x && in->src_reg)
			FAIL(v, pc, "jump with immediate source uses reserved field src_reg=%u",
			     in->src_reg);
		return check_target(v, pc, (int64_t)pc + 1 + in->off, "jump");
	default:
		FAIL(v, pc, "unknown opcode 0x%02x", in->code);
	}
}

static int check_mem(struct validator *v, uint32_t pc, const struct ebpf_insn *in)
{
	uint8_t cls = EBPF_CLASS(in->code), mode = EBPF_MODE(in->code);
	uint8_t size = EBPF_SIZE(in->code);

	switch (cls) {
	case EBPF_LDX:
		if (mode != EBPF_MEM && !(mode == EBPF_MEMSX && size != EBPF_DW))
			FAIL(v, pc, "unknown opcode 0x%02x", in->code);
		if (in->imm)
			FAIL(v, pc, "load uses reserved field imm=%d", in->imm);
		if (in->dst_reg == EBPF_REG_10)
			FAIL(v, pc, "frame pointer r10 is read only");
		return 0;
	case EBPF_ST:
		if (mode != EBPF_MEM)
			FAIL(v, pc, "unknown opcode 0x%02x", in->code);
		if (in->src_reg)
			FAIL(v, pc, "store of immediate uses reserved field src_reg=%u",
			     in->src_reg);
		return 0;
	case EBPF_STX:
		if (mode == EBPF_MEM) {
			if (in->imm)
				FAIL(v, pc, "store uses reserved field imm=%d", in->imm);
			return 0;
		}
		if (mode != EBPF_ATOMIC || (size != EBPF_W && size != EBPF_DW))
			FAIL(v, pc, "unknown opcode 0x%02x", in->code);
		switch (in->imm) {
		case EBPF_ATOMIC_ADD:
		case EBPF_ATOMIC_OR:
		case EBPF_ATOMIC_AND:
		case EBPF_ATOMIC_XOR:
			return 0;
		case EBPF_ATOMIC_ADD | EBPF_FETCH:
		case EBPF_ATOMIC_OR | EBPF_FETCH:
		case EBPF_ATOMIC_AND | EBPF_FETCH:
		case EBPF_ATOMIC_XOR | EBPF_FETCH:
		case EBPF_XCHG:
			if (in->src_reg == EBPF_REG_10)
				FAIL(v, pc, "atomic fetch would write frame pointer r10");
			return 0;
		case EBPF_CMPXCHG:
			return 0;
		default:
			FAIL(v, pc, "unknown atomic operation 0x%x", (unsigned)in->imm);
		}
	}
	FAIL(v, pc, "unknown opcode 0x%02x", in->code);
}

static int check_lddw(struct validator *v, uint32_t pc, const struct ebpf_insn *in, uint32_t n_maps)
{
	const struct ebpf_insn *next = in + 1;

	if (pc + 1 >= v->n)
		FAIL(v, pc, "truncated 64-bit immediate load at end of program");
	if (in->off)
		FAIL(v, pc, "64-bit immediate load uses reserved field off=%d", in->off);
	if (in->dst_reg == EBPF_REG_10)
		FAIL(v, pc, "frame pointer r10 is read only");
	if (next->code || next->dst_reg || next->src_reg || next->off)
		FAIL(v, pc, "second half of 64-bit immediate load has reserved fields set");
	switch (in->src_reg) {
	case 0:
		return 0;
	case EBPF_PSEUDO_MAP_FD:
		if (next->imm)
			FAIL(v, pc, "map reference uses reserved second imm=%d", next->imm);
		/* fallthrough */
	case EBPF_PSEUDO_MAP_VALUE:
		if (in->imm < 0 || (uint32_t)in->imm >= n_maps)
			FAIL(v, pc, "map index %d out of range (program has %u maps)", in->imm,
			     n_maps);
		return 0;
	case EBPF_PSEUDO_FUNC:
		FAIL(v, pc, "function pointers (ld_imm64 src=4) are not supported");
	default:
		FAIL(v, pc, "64-bit immediate load with unsupported src_reg %u", in->src_reg);
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
		int rc = 0;

		if (in->dst_reg > EBPF_REG_10 || in->src_reg > EBPF_REG_10) {
			/* src_reg of lddw/call is a pseudo kind, checked below. */
			if (in->dst_reg > EBPF_REG_10)
				FAIL(v, pc, "invalid register r%u", in->dst_reg);
			if (!ebpf_insn_is_lddw(in) && in->code != (EBPF_JMP | EBPF_CALL))
				FAIL(v, pc, "invalid register r%u", in->src_reg);
		}
		switch (EBPF_CLASS(in->code)) {
		case EBPF_ALU:
		case EBPF_ALU64:
			rc = check_alu(v, pc, in);
			break;
		case EBPF_JMP:
		case EBPF_JMP32:
			rc = check_jmp(v, pc, in);
			break;
		case EBPF_LDX:
		case EBPF_ST:
		case EBPF_STX:
			rc = check_mem(v, pc, in);
			break;
		case EBPF_LD:
			if (EBPF_MODE(in->code) == EBPF_ABS || EBPF_MODE(in->code) == EBPF_IND)
				FAIL(v, pc,
				     "legacy packet access (LD_ABS/LD_IND) is not supported");
			if (!ebpf_insn_is_lddw(in))
				FAIL(v, pc, "unknown opcode 0x%02x", in->code);
			rc = check_lddw(v, pc, in, n_maps);
			pc++;
			break;
		}
		if (rc)
			return rc;
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

static int add_implicit_region(struct ebpf_prog *prog, uint64_t base, uint64_t size, uint32_t perms)
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
static int resolve_maps(struct ebpf_prog *prog, char *err, size_t err_len)
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

struct ebpf_prog *ebpf_prog__new(const struct ebpf_insn *insns, uint32_t n_insns,
				 const struct ebpf_prog_opts *opts, char *err, size_t err_len)
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
	struct ebpf_prog *prog;

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
		ebpf_prog__free(prog);
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
	ebpf_prog__free(prog);
	return NULL;
}

void ebpf_prog__free(struct ebpf_prog *prog)
{
	if (!prog)
		return;
	/* Contract with jit/ (prog_internal.h): jit_mem is an mmap()ed mapping. */
	if (prog->jit_mem)
		munmap(prog->jit_mem, prog->jit_mem_size);
	free(prog->insns);
	free(prog->interp_insns);
	free(prog->maps);
	free(prog->implicit_regions);
	free(prog);
}

uint32_t ebpf_prog__insn_cnt(const struct ebpf_prog *prog)
{
	return prog ? prog->n_insns : 0;
}

const struct ebpf_insn *ebpf_prog__insns(const struct ebpf_prog *prog)
{
	return prog ? prog->insns : NULL;
}

const char *ebpf_prog__name(const struct ebpf_prog *prog)
{
	return prog ? prog->name : NULL;
}
