/* Calls and returns: helper calls checked against their prototypes (allow-list per program
 * type, argument kinds, map key/value sizes, memory sizes proven by ranges, ring buffer
 * reservations), bpf-to-bpf calls with a new frame, and exits (return value range, pointer
 * leaks, unreleased reservations, dangling stack pointers). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/maps.h"
#include "state.h"

static bool has_arg(const struct ebpf_helper_proto *p, uint8_t kind)
{
	for (int a = 0; a < 5; a++)
		if (p->args[a] == kind)
			return true;
	return false;
}

static int release_ref(struct env *env, uint32_t ref)
{
	struct vstate *st = &env->cur;

	for (uint32_t i = 0; i < st->n_refs; i++) {
		if (st->refs[i] != ref)
			continue;
		st->refs[i] = st->refs[st->n_refs - 1];
		st->ref_insn[i] = st->ref_insn[st->n_refs - 1];
		st->n_refs--;
		/* every copy of the record pointer is dead now */
		for (uint32_t f = 0; f <= st->curframe; f++) {
			struct frame *fr = st->frames[f];
			for (int r = 0; r < EBPF_NREGS; r++)
				if (reg_is_ptr(&fr->regs[r]) && fr->regs[r].ref_id == ref)
					reg_mark_unknown(&fr->regs[r]);
			for (uint32_t s = 0; s < fr->nslots; s++)
				if (STACK_KIND(fr->slots[s].bytes[0]) == STACK_SPILL &&
				    reg_is_ptr(&fr->slots[s].spill) &&
				    fr->slots[s].spill.ref_id == ref)
					reg_mark_unknown(&fr->slots[s].spill);
		}
		return 0;
	}
	return -ENOENT;
}

int check_helper_call(struct env *env, const struct ebpf_insn *insn, uint32_t pc)
{
	const struct ebpf_helper_proto *p = NULL;
	struct reg *regs = cur_regs(env);
	int32_t id = insn->imm;
	int64_t map = -1;
	int memreg = -1;
	bool local = false, writes_map;
	uint32_t origin = pc;
	int err;

	if (id >= 0 && id < EBPF_MAX_HELPERS && env->opts->helpers)
		p = env->opts->helpers->by_id[id];
	if (!p)
		return verr(env, pc, -EACCES, "invalid func unknown#%d", id);
	if (env->type && !((env->type->helper_allow[id / 64] >> (id % 64)) & 1))
		return verr(env, pc, -EACCES, "helper %s#%d is not allowed in %s programs",
			    p->name ? p->name : "?", id, env->type->name);
	writes_map = has_arg(p, EBPF_ARG_PTR_TO_KEY) && p->ret != EBPF_RET_MAP_VALUE_OR_NULL;

	for (int a = 0; a < 5; a++) {
		uint32_t regno = (uint32_t)a + 1;
		struct reg *r = &regs[regno];
		uint8_t kind = p->args[a];

		if (kind == EBPF_ARG_NONE)
			continue;
		if (r->type == NOT_INIT)
			return verr(env, pc, -EACCES, "R%u !read_ok (argument %d of %s)", regno,
				    a + 1, p->name);
		switch (kind) {
		case EBPF_ARG_ANYTHING:
			if (reg_is_ptr(r))
				return verr(env, pc, -EACCES,
					    "R%u leaks addr into helper function %s", regno,
					    p->name);
			if (r->local) {
				local = true;
				origin = r->taint;
			}
			break;
		case EBPF_ARG_CONST_MAP: {
			bool rb;
			if (r->type != CONST_PTR_TO_MAP)
				return verr(env, pc, -EACCES, "R%u type=%s expected=map_ptr", regno,
					    reg_type_str(r->type));
			map = r->map_idx;
			rb = map_is_ringbuf(env, r->map_idx);
			if (rb == (has_arg(p, EBPF_ARG_PTR_TO_KEY) ||
				   p->ret == EBPF_RET_MAP_VALUE_OR_NULL))
				return verr(env, pc, -EACCES,
					    "cannot pass map_type %u into func %s#%d",
					    ebpf_map__type(env_map(env, r->map_idx)), p->name, id);
			break;
		}
		case EBPF_ARG_PTR_TO_KEY:
		case EBPF_ARG_PTR_TO_VALUE: {
			struct ebpf_map *m;
			bool l = false;
			if (map < 0)
				return verr(env, pc, -EACCES, "invalid map_ptr to access map->%s",
					    kind == EBPF_ARG_PTR_TO_KEY ? "key" : "value");
			m = env_map(env, (uint32_t)map);
			err =
			    check_helper_mem(env, pc, regno,
					     kind == EBPF_ARG_PTR_TO_KEY ? ebpf_map__key_size(m)
									 : ebpf_map__value_size(m),
					     &l);
			if (err)
				return err;
			if (l || r->local) {
				local = true;
				origin = r->local ? r->taint : pc;
			}
			break;
		}
		case EBPF_ARG_PTR_TO_MEM:
			memreg = (int)regno;
			break;
		case EBPF_ARG_CONST_SIZE: {
			bool l = false;
			if (r->type != SCALAR)
				return verr(env, pc, -EACCES, "R%u type=%s expected=scalar", regno,
					    reg_type_str(r->type));
			if (memreg < 0)
				return verr(env, pc, -EINVAL, "%s: size argument without memory",
					    p->name);
			precise_mark(env, (uint16_t)(1u << regno), true);
			if (r->umax > EBPF_STACK_SIZE * 128ull)
				return verr(env, pc, -EACCES,
					    "R%u unbounded memory access, use 'var &= const' or "
					    "'if (var < const)'",
					    regno);
			if (r->umin == 0)
				return verr(env, pc, -EACCES,
					    "R%u invalid zero-sized read: size may be 0 (range "
					    "[%llu, %llu])",
					    regno, (unsigned long long)r->umin,
					    (unsigned long long)r->umax);
			err = check_helper_mem(env, pc, (uint32_t)memreg, r->umax, &l);
			if (err)
				return err;
			break;
		}
		case EBPF_ARG_PTR_TO_ALLOC_MEM:
			if (r->type != PTR_TO_MEM || !r->ref_id)
				return r->type == PTR_TO_MEM_OR_NULL
					   ? verr(env, pc, -EACCES,
						  "R%u type=mem_or_null expected=mem: check the "
						  "ring buffer reservation for NULL first",
						  regno)
					   : verr(env, pc, -EACCES,
						  "R%u type=%s expected=ringbuf_mem", regno,
						  reg_type_str(r->type));
			if (r->off || !tnum_equals_const(r->var_off, 0))
				return verr(env, pc, -EACCES,
					    "R%u must point to the start of the ring buffer record "
					    "(off=%d)",
					    regno, r->off);
			if (release_ref(env, r->ref_id))
				return verr(env, pc, -EACCES,
					    "R%u ring buffer record already released", regno);
			break;
		default:
			return verr(env, pc, -EINVAL, "%s: unknown argument kind %u", p->name,
				    kind);
		}
	}

	if (writes_map && map >= 0) {
		struct reg v;
		if (map_is_rdonly(env, (uint32_t)map))
			return verr(env, pc, -EACCES,
				    "write into map forbidden: map %lld (%s) is read-only",
				    (long long)map, ebpf_map__name(env_map(env, (uint32_t)map)));
		map_mark_written(env, (uint32_t)map, pc);
		reg_mark_unknown(&v);
		v.local = local;
		v.taint = origin;
		err = taint_check_map_write(env, pc, (uint32_t)map, &v, NULL);
		if (err)
			return err;
	}

	/* the return value */
	switch (p->ret) {
	case EBPF_RET_INTEGER:
		reg_mark_unknown(&regs[0]);
		/* whether an update or delete succeeds depends on what the map holds */
		if (map >= 0 && map_is_local(env, (uint32_t)map)) {
			char what[48];
			snprintf(what, sizeof(what), "result of %s() on rank-local map", p->name);
			taint_source_map(env, pc, (uint32_t)map, what);
			regs[0].local = 1;
			regs[0].taint = pc;
		}
		break;
	case EBPF_RET_VOID:
		reg_mark_not_init(&regs[0]);
		break;
	case EBPF_RET_MAP_VALUE_OR_NULL:
		if (map < 0)
			return verr(env, pc, -EINVAL, "%s: returns a map value without a map",
				    p->name);
		reg_mark_const(&regs[0], 0);
		regs[0].type = PTR_TO_MAP_VALUE_OR_NULL;
		regs[0].map_idx = (uint32_t)map;
		regs[0].id = ++env->next_id;
		regs[0].origin = pc;
		/* Whether the element exists: in a hash map, what it holds decides, which may
		 * differ between ranks; every key below max_entries of an array exists, so there
		 * only the key decides (the values read through the pointer are still rank-local,
		 * mem.c). A key known to be in range cannot miss at all. */
		if (map_is_local(env, (uint32_t)map) && !map_presence_fixed(env, (uint32_t)map)) {
			taint_source_map(env, pc, (uint32_t)map, "lookup in rank-local map");
			regs[0].local = 1;
			regs[0].taint = pc;
		}
		if (local) {
			regs[0].local = 1;
			regs[0].taint = origin;
		}
		break;
	case EBPF_RET_ALLOC_MEM_OR_NULL: {
		struct reg *sz = &regs[2];
		struct vstate *st = &env->cur;
		precise_mark(env, 1u << 2, true);
		if (map < 0 || sz->type != SCALAR || !scalar_is_const(sz))
			return verr(env, pc, -EACCES,
				    "R2 is not a known constant (ring buffer reserve size)");
		if (sz->var_off.value == 0 ||
		    sz->var_off.value > ebpf_map__max_entries(env_map(env, (uint32_t)map)))
			return verr(env, pc, -EACCES, "invalid ring buffer reserve size %llu",
				    (unsigned long long)sz->var_off.value);
		if (st->n_refs == MAX_REFS)
			return verr(env, pc, -EACCES,
				    "too many ring buffer reservations held at once");
		{
			uint32_t size = (uint32_t)sz->var_off.value;
			reg_mark_const(&regs[0], 0);
			regs[0].type = PTR_TO_MEM_OR_NULL;
			regs[0].mem_size = size;
			regs[0].id = regs[0].ref_id = ++env->next_id;
			regs[0].origin = pc;
			st->refs[st->n_refs] = regs[0].ref_id;
			st->ref_insn[st->n_refs++] = pc;
		}
		break;
	}
	default:
		return verr(env, pc, -EINVAL, "%s: unknown return kind %u", p->name, p->ret);
	}
	if ((p->flags & EBPF_HELPER_RANK_LOCAL) && regs[0].type != NOT_INIT && !regs[0].local) {
		/* the result differs between ranks (clock, random, ring buffer space) */
		taint_source(env, pc, "%s()", p->name);
		regs[0].local = 1;
		regs[0].taint = pc;
	}
	taint_reg_write(env, &regs[0]);
	for (int r = 1; r <= 5; r++)
		reg_mark_not_init(&regs[r]);
	return 0;
}

int check_subprog_call(struct env *env, const struct ebpf_insn *insn, uint32_t pc)
{
	struct vstate *st = &env->cur;
	uint32_t target = pc + 1 + (uint32_t)insn->imm;
	struct frame *caller = cur_frame(env), *f;

	if (st->curframe + 1 >= EBPF_MAX_FRAMES)
		return verr(env, pc, -EACCES, "the call stack of %u frames is too deep",
			    st->curframe + 2);
	f = frame_new(env, pc, env->aux[target].subprog);
	if (!f)
		return verr(env, pc, -ENOMEM, "out of memory");
	for (int r = 1; r <= 5; r++)
		f->regs[r] = caller->regs[r];
	reg_mark_const(&f->regs[EBPF_REG_10], 0);
	f->regs[EBPF_REG_10].type = PTR_TO_STACK;
	f->regs[EBPF_REG_10].frameno = (uint8_t)(st->curframe + 1);
	st->frames[++st->curframe] = f;
	st->insn = target;
	return 0;
}

static bool points_into(const struct reg *r, uint32_t frameno)
{
	return r->type == PTR_TO_STACK && r->frameno == frameno;
}

int check_exit(struct env *env, uint32_t pc)
{
	struct vstate *st = &env->cur;
	struct reg *r0 = &cur_regs(env)[0];
	char d[192];

	/* A subprogram may return nothing (a `void` function): the caller then finds R0
	 * uninitialised and may not read it. The program itself must return a value. */
	if (r0->type == NOT_INIT && !st->curframe)
		return verr(env, pc, -EACCES, "R0 !read_ok: no return value set");
	if (st->curframe) {
		uint32_t me = st->curframe;
		struct frame *callee = st->frames[me], *caller;
		struct reg ret = *r0;
		uint32_t ret_pc = callee->callsite + 1;

		if (points_into(r0, me))
			return verr(env, pc, -EACCES, "cannot return stack pointer to the caller");
		for (uint32_t f = 0; f < me; f++) {
			struct frame *fr = st->frames[f];
			for (uint32_t s = 0; s < fr->nslots; s++)
				if (STACK_KIND(fr->slots[s].bytes[0]) == STACK_SPILL &&
				    points_into(&fr->slots[s].spill, me))
					return verr(env, pc, -EACCES,
						    "pointer to the returning function's stack "
						    "left at fp-%u of frame %u",
						    8 * (s + 1), f);
		}
		taint_frame_exit(env);
		caller = st->frames[me - 1];
		frame_free(env, callee);
		st->frames[me] = NULL;
		st->curframe--;
		for (int r = 1; r <= 5; r++)
			reg_mark_not_init(&caller->regs[r]);
		caller->regs[0] = ret;
		st->insn = ret_pc;
		return 0;
	}
	if (st->n_refs) {
		char at[32];
		return verr(env, pc, -EACCES,
			    "Unreleased reference id=%u alloc_insn=%u: ring buffer record reserved "
			    "at %s is never submitted or discarded on this path",
			    st->refs[0], st->ref_insn[0],
			    insn_line_prefix(env, st->ref_insn[0], at, sizeof(at)));
	}
	if (env->type)
		precise_mark(env, 1, true); /* the return range is checked */
	if (reg_is_ptr(r0))
		return verr(env, pc, -EACCES, "R0 leaks addr as return value (R0=%s)",
			    (reg_describe(r0, d, sizeof(d)), d));
	if (env->type && (r0->smin < env->type->ret_min || r0->smax > env->type->ret_max ||
			  (env->type->ret_min >= 0 && r0->umax > (uint64_t)env->type->ret_max))) {
		reg_describe(r0, d, sizeof(d));
		return verr(env, pc, -EACCES,
			    "At program exit the register R0 has %s should have been in [%lld, "
			    "%lld] for %s programs",
			    d, (long long)env->type->ret_min, (long long)env->type->ret_max,
			    env->type->name);
	}
	return 1;
}
