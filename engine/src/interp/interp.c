/* ebpf_interp__run: picks the interpreter variant, and the out-of-line code of the
 * bounds-checking variant (memory checks, helper argument and return bookkeeping). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "interp_internal.h"
#include "ebpf/maps.h"

#define OPT(opts, field, dflt)                                                                     \
	((opts) && (opts)->sz >= offsetof(typeof(*(opts)), field) + sizeof((opts)->field)          \
	     ? (opts)->field                                                                       \
	     : (dflt))

int interp_fault(struct ebpf_fault *f, int kind, uint32_t pc, uint64_t addr, uint32_t size,
		 const char *fmt, ...)
{
	va_list ap;

	if (!f)
		return -EFAULT;
	f->kind = kind;
	f->pc = pc;
	f->addr = addr;
	f->size = size;
	va_start(ap, fmt);
	ebpf_verrf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	return -EFAULT;
}

int ebpf_interp__run(const struct ebpf_exec *prog, uint64_t r1, uint64_t r2,
		     const struct ebpf_run_opts *opts, uint64_t *r0)
{
	static const struct ebpf_run_opts defaults = {.sz = sizeof(defaults)};
	struct ebpf_run_opts o = {.sz = sizeof(o)};
	struct ebpf_fault scratch, *fault;
	uint64_t res = 0;
	int rc;

	/* Hot path: no options, so nothing to copy and no fault record to fill. */
	if (!opts && prog && r0)
		return interp_run_fast(prog, r1, r2, &defaults, NULL, r0);
	o.checked = OPT(opts, checked, 0);
	o.regions = OPT(opts, regions, NULL);
	o.n_regions = OPT(opts, n_regions, 0);
	o.insn_limit = OPT(opts, insn_limit, 0);
	o.flags = OPT(opts, flags, 0);
	fault = OPT(opts, fault, NULL);
	if (!fault)
		fault = &scratch;
	fault->kind = EBPF_FAULT_NONE;
	fault->msg[0] = 0;
	if (!prog)
		return -EINVAL;
	if (o.checked)
		rc = interp_run_checked(prog, r1, r2, &o, fault, &res);
	else if (o.insn_limit)
		rc = interp_run_limited(prog, r1, r2, &o, fault, &res);
	else
		rc = interp_run_fast(prog, r1, r2, &o, fault, &res);
	if (rc == 0 && r0)
		*r0 = res;
	return rc;
}

/* [addr, addr+size) inside r (size > 0, addr+size does not wrap). */
static inline int contains(const struct ebpf_region *r, uint64_t addr, uint64_t size)
{
	return addr >= r->base && size <= r->size && addr - r->base <= r->size - size;
}

static const char *acc_name(uint32_t acc)
{
	return (acc & INTERP_ACC_WRITE) ? ((acc & INTERP_ACC_READ) ? "atomic access" : "write")
					: "read";
}

/* Looks for a region containing the access. 1: allowed, 0: none, -1: found but the
 * permission is missing (*r_out says which). */
static int find_region(const struct interp_cstate *cs, uint64_t addr, uint32_t size, uint32_t acc,
		       const struct ebpf_region **r_out)
{
	const struct ebpf_region *lists[2] = {cs->regions, cs->prog->implicit_regions};
	uint32_t counts[2] = {cs->n_regions, cs->prog->n_implicit_regions};
	const struct ebpf_region *denied = NULL;
	uint32_t l, i;

	for (l = 0; l < 2; l++) {
		for (i = 0; i < counts[l]; i++) {
			const struct ebpf_region *r = &lists[l][i];
			if (!contains(r, addr, size))
				continue;
			if ((r->perms & acc) == acc)
				return 1;
			denied = r;
		}
	}
	for (i = 0; i < cs->n_dyn; i++) {
		const struct ebpf_region *r = &cs->dyn[i].r;
		if (!contains(r, addr, size))
			continue;
		if ((r->perms & acc) == acc)
			return 1;
		denied = r;
	}
	*r_out = denied;
	return denied ? -1 : 0;
}

int interp_check_mem(struct interp_cstate *cs, uint64_t fp, uint64_t addr, uint32_t size,
		     uint32_t acc, struct ebpf_fault *f, uint32_t pc)
{
	uint64_t end = addr + size;
	uint64_t frame_lo = fp - EBPF_STACK_SIZE;
	const struct ebpf_region *denied = NULL;
	int rc;

	if (end < addr)
		return interp_fault(f, EBPF_FAULT_OUT_OF_BOUNDS, pc, addr, size,
				    "insn %u: %s of %u bytes at 0x%llx wraps around", pc,
				    acc_name(acc), size, (unsigned long long)addr);
	if (addr < cs->stack_top && end > cs->stack_base) {
		uint8_t *sh;
		uint32_t i;

		if (addr < frame_lo || end > cs->stack_top)
			return interp_fault(f, EBPF_FAULT_OUT_OF_BOUNDS, pc, addr, size,
					    "insn %u: %s of %u bytes at fp%+lld outside the stack "
					    "(frame is fp-%d..fp)",
					    pc, acc_name(acc), size, (long long)(addr - fp),
					    EBPF_STACK_SIZE);
		sh = cs->init + (addr - cs->stack_base);
		if (acc & INTERP_ACC_READ) {
			for (i = 0; i < size; i++)
				if (!sh[i])
					return interp_fault(
					    f, EBPF_FAULT_UNINIT_STACK, pc, addr, size,
					    "insn %u: %s of %u bytes at fp%+lld reads "
					    "uninitialised stack byte fp%+lld",
					    pc, acc_name(acc), size, (long long)(addr - fp),
					    (long long)(addr + i - fp));
		}
		if (acc & INTERP_ACC_WRITE)
			memset(sh, 1, size);
		return 0;
	}
	rc = find_region(cs, addr, size, acc, &denied);
	if (rc > 0)
		return 0;
	if (rc < 0)
		return interp_fault(
		    f, EBPF_FAULT_OUT_OF_BOUNDS, pc, addr, size,
		    "insn %u: %s of %u bytes at 0x%llx denied: region 0x%llx+%llu "
		    "is %s",
		    pc, acc_name(acc), size, (unsigned long long)addr,
		    (unsigned long long)denied->base, (unsigned long long)denied->size,
		    (denied->perms & INTERP_ACC_WRITE) ? "write only" : "read only");
	return interp_fault(f, EBPF_FAULT_OUT_OF_BOUNDS, pc, addr, size,
			    "insn %u: %s of %u bytes at 0x%llx outside any region", pc,
			    acc_name(acc), size, (unsigned long long)addr);
}

static struct ebpf_map *prog_map(const struct interp_cstate *cs, uint64_t handle)
{
	uint32_t i;

	for (i = 0; i < cs->prog->n_maps; i++)
		if ((uint64_t)(uintptr_t)cs->prog->maps[i] == handle)
			return cs->prog->maps[i];
	return NULL;
}

int interp_check_helper_args(struct interp_cstate *cs, const struct ebpf_helper_proto *p,
			     const uint64_t *reg, struct ebpf_fault *f, uint32_t pc)
{
	struct ebpf_map *map = NULL;
	int i;

	for (i = 0; i < 5; i++) {
		uint64_t v = reg[1 + i];
		uint64_t size = 0;

		switch (p->args[i]) {
		case EBPF_ARG_CONST_MAP:
			map = prog_map(cs, v);
			if (!map)
				return interp_fault(f, EBPF_FAULT_BAD_HELPER, pc, v, 0,
						    "insn %u: %s arg%d 0x%llx is not a map of the "
						    "program",
						    pc, p->name ? p->name : "helper", i + 1,
						    (unsigned long long)v);
			continue;
		case EBPF_ARG_PTR_TO_KEY:
			size = map ? ebpf_map__key_size(map) : 0;
			break;
		case EBPF_ARG_PTR_TO_VALUE:
			size = map ? ebpf_map__value_size(map) : 0;
			break;
		case EBPF_ARG_PTR_TO_MEM:
			size = i < 4 ? reg[2 + i] : 0;
			break;
		case EBPF_ARG_PTR_TO_ALLOC_MEM: {
			uint32_t k;
			for (k = 0; k < cs->n_dyn; k++)
				if (cs->dyn[k].alloc && cs->dyn[k].r.base == v)
					break;
			if (k == cs->n_dyn)
				return interp_fault(f, EBPF_FAULT_OUT_OF_BOUNDS, pc, v, 0,
						    "insn %u: %s arg%d 0x%llx is not a reserved "
						    "record",
						    pc, p->name ? p->name : "helper", i + 1,
						    (unsigned long long)v);
			/* Submitted or discarded: the record is gone after the call. */
			cs->dyn[k] = cs->dyn[--cs->n_dyn];
			cs->next_dyn = cs->n_dyn;
			continue;
		}
		default:
			continue;
		}
		if (size && size <= UINT32_MAX &&
		    interp_check_mem(cs, reg[EBPF_REG_10], v, (uint32_t)size, INTERP_ACC_READ, f,
				     pc))
			return -EFAULT;
		if (size > UINT32_MAX)
			return interp_fault(f, EBPF_FAULT_OUT_OF_BOUNDS, pc, v, 0,
					    "insn %u: %s arg%d size %llu too large", pc,
					    p->name ? p->name : "helper", i + 1,
					    (unsigned long long)size);
	}
	return 0;
}

static void add_dyn(struct interp_cstate *cs, uint64_t base, uint64_t size, uint32_t perms,
		    int alloc)
{
	uint32_t i;

	for (i = 0; i < cs->n_dyn; i++) {
		if (cs->dyn[i].r.base == base) {
			cs->dyn[i] = (struct interp_dyn_region){{base, size, perms}, alloc};
			return;
		}
	}
	/* Full: replace the oldest-added slot (round robin). */
	if (cs->n_dyn < INTERP_MAX_DYN)
		i = cs->n_dyn++;
	else
		i = cs->next_dyn++ % INTERP_MAX_DYN;
	cs->dyn[i] = (struct interp_dyn_region){{base, size, perms}, alloc};
}

void interp_note_helper_ret(struct interp_cstate *cs, const struct ebpf_helper_proto *p,
			    uint64_t r1, uint64_t r2, uint64_t r0)
{
	struct ebpf_map *map;

	if (!r0)
		return;
	switch (p->ret) {
	case EBPF_RET_MAP_VALUE_OR_NULL:
		map = prog_map(cs, r1);
		if (map)
			add_dyn(cs, r0, ebpf_map__value_size(map),
				EBPF_REGION_READ | ((ebpf_map__flags(map) & EBPF_MAP_F_RDONLY_PROG)
							? 0
							: EBPF_REGION_WRITE),
				0);
		break;
	case EBPF_RET_ALLOC_MEM_OR_NULL:
		if (r2)
			add_dyn(cs, r0, r2, EBPF_REGION_READ | EBPF_REGION_WRITE, 1);
		break;
	default:
		break;
	}
}
