/* Architecture-neutral half of the JIT: program analysis shared by every backend (executable
 * memory is jit_mem.c's), statistics, and ebpf_exec__run, the one entry point that picks JIT or
 * interpreter.
 *
 * Analysis establishes what a backend may rely on beyond ebpf_exec__new's structural checks:
 * functions are contiguous ranges that start at the entry or a call target, no jump leaves its
 * function, and every function ends in exit or ja (so none falls into the next). The Linux
 * verifier enforces the same; programs outside it fall back to the interpreter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "../insn_regs.h"
#include "jit_backend.h"
#include "ebpf/maps.h"

#define HELPER_MAP_LOOKUP 1 /* Linux's BPF_FUNC_map_lookup_elem */

int ebpf_jit_available(void)
{
#ifdef NCCLBPF_HAVE_JIT
	return 1;
#else
	return 0;
#endif
}

/* --- Analysis ------------------------------------------------------------------------------- */

static int is_jump(const struct ebpf_insn *in)
{
	uint8_t cls = EBPF_CLASS(in->code), op = EBPF_OP(in->code);

	return (cls == EBPF_JMP || cls == EBPF_JMP32) && op != EBPF_CALL && op != EBPF_EXIT;
}

static int64_t jump_target(const struct ebpf_insn *in, uint32_t pc)
{
	/* JMP32 | JA carries a 32-bit offset in imm (v4). */
	if (in->code == (EBPF_JMP32 | EBPF_JA))
		return (int64_t)pc + 1 + in->imm;
	return (int64_t)pc + 1 + in->off;
}

/* Registers an instruction reads or writes (as a bit set); src_reg counts only where it names
 * a register. */
static uint16_t insn_regs(const struct ebpf_insn *in)
{
	uint8_t cls = EBPF_CLASS(in->code), op = EBPF_OP(in->code);
	uint16_t r = 0;

	switch (cls) {
	case EBPF_ALU:
	case EBPF_ALU64:
		r |= 1u << in->dst_reg;
		if (EBPF_SRC(in->code) == EBPF_X && op != EBPF_END && op != EBPF_NEG)
			r |= 1u << in->src_reg;
		break;
	case EBPF_JMP:
	case EBPF_JMP32:
		if (op == EBPF_CALL)
			r |= 0x3f; /* r0-r5 */
		else if (op == EBPF_EXIT)
			r |= 1u;
		else if (op != EBPF_JA) {
			r |= 1u << in->dst_reg;
			if (EBPF_SRC(in->code) == EBPF_X)
				r |= 1u << in->src_reg;
		}
		break;
	case EBPF_LD:
		r |= 1u << in->dst_reg;
		break;
	case EBPF_LDX:
	case EBPF_STX:
		r |= (1u << in->dst_reg) | (1u << in->src_reg);
		if (cls == EBPF_STX && EBPF_MODE(in->code) == EBPF_ATOMIC)
			r |= 1u; /* cmpxchg uses r0 */
		break;
	case EBPF_ST:
		r |= 1u << in->dst_reg;
		break;
	}
	return r;
}

/* Does the instruction write register reg? (conservatively yes for anything unusual) */
static int insn_writes(const struct ebpf_insn *in, unsigned reg)
{
	uint8_t cls = EBPF_CLASS(in->code);

	switch (cls) {
	case EBPF_ALU:
	case EBPF_ALU64:
	case EBPF_LD:
	case EBPF_LDX:
		return in->dst_reg == reg;
	case EBPF_ST:
		return 0;
	case EBPF_STX:
		if (EBPF_MODE(in->code) != EBPF_ATOMIC)
			return 0;
		if (in->imm == EBPF_CMPXCHG)
			return reg == 0;
		return (in->imm & EBPF_FETCH) && in->src_reg == reg;
	default:
		return 1;
	}
}

/* For the helper call at pc: the map r1 holds if it is provably a constant map handle loaded in
 * the same basic block, else NULL. */
static struct ebpf_map *const_map_in_r1(const struct ebpf_exec *prog, const uint8_t *flags,
					uint32_t pc)
{
	uint32_t j = pc;

	while (j > 0) {
		const struct ebpf_insn *in;

		if (flags[j] & (JIT_INSN_TARGET | JIT_INSN_FUNC_START))
			return NULL; /* another path may reach the call with another r1 */
		j--;
		if (flags[j] & JIT_INSN_LDDW_TAIL)
			continue;
		in = &prog->insns[j];
		if (EBPF_CLASS(in->code) == EBPF_JMP || EBPF_CLASS(in->code) == EBPF_JMP32)
			return NULL;
		if (!insn_writes(in, EBPF_REG_1))
			continue;
		if (ebpf_insn_is_lddw(in) && in->dst_reg == EBPF_REG_1) {
			uint64_t v = (uint32_t)in[0].imm | ((uint64_t)(uint32_t)in[1].imm << 32);

			for (uint32_t k = 0; k < prog->n_maps; k++)
				if (prog->maps[k] && (uint64_t)(uintptr_t)prog->maps[k] == v)
					return prog->maps[k];
		}
		return NULL;
	}
	return NULL;
}

/* An ARRAY map's values are one preallocated block: learn its base and stride by looking up
 * the first, second and last element, and refuse to inline unless they line up. */
static int array_layout(struct ebpf_map *map, struct jit_inline *out)
{
	uint32_t max = ebpf_map__max_entries(map), vs = ebpf_map__value_size(map);
	uint32_t k0 = 0, k1 = 1, kl, kend;
	uint8_t *p0, *p1, *pl;
	uintptr_t stride;

	/* a per-communicator template's values are not the bound instance's */
	if (ebpf_map__type(map) != EBPF_MAP_TYPE_ARRAY || ebpf_map__key_size(map) != 4 || !max ||
	    !vs || (ebpf_map__flags(map) & EBPF_MAP_F_PER_COMM))
		return -1;
	kl = max - 1;
	kend = max;
	p0 = ebpf_map__lookup_elem(map, &k0);
	if (!p0)
		return -1;
	if (max == 1) {
		stride = vs;
	} else {
		p1 = ebpf_map__lookup_elem(map, &k1);
		pl = ebpf_map__lookup_elem(map, &kl);
		if (!p1 || !pl || p1 <= p0)
			return -1;
		stride = (uintptr_t)(p1 - p0);
		if (stride < vs || stride > INT32_MAX ||
		    (uintptr_t)(pl - p0) != stride * (uintptr_t)kl)
			return -1;
	}
	if (kend && ebpf_map__lookup_elem(map, &kend))
		return -1;
	out->base = (uint64_t)(uintptr_t)p0;
	out->stride = (uint32_t)stride;
	out->max_entries = max;
	return 0;
}

static int helper_is_map_lookup(const struct ebpf_exec *prog)
{
	const struct ebpf_helper_proto *p;

	if (!prog->helpers || !(p = prog->helpers->by_id[HELPER_MAP_LOOKUP]))
		return 0;
	return p->ret == EBPF_RET_MAP_VALUE_OR_NULL && p->args[0] == EBPF_ARG_CONST_MAP &&
	       p->args[1] == EBPF_ARG_PTR_TO_KEY;
}

/* Registers instruction i reads (use) and writes (def) for the liveness below: the shared
 * rule, narrowed for helper calls to the arguments the prototype declares, and widened for
 * bpf-to-bpf calls (which may read anything). */
static void use_def(const struct ebpf_exec *prog, const struct ebpf_insn *in, uint16_t *use,
		    uint16_t *def)
{
	ebpf_insn_use_def(in, use, def);
	if (in->code != (EBPF_JMP | EBPF_CALL))
		return;
	if (in->src_reg == EBPF_PSEUDO_CALL) {
		*use = 0x3ff;
		return;
	}
	const struct ebpf_helper_proto *p = NULL;
	if (prog->helpers && in->imm >= 0 && in->imm < EBPF_MAX_HELPERS)
		p = prog->helpers->by_id[in->imm];
	*use = 0;
	for (int k = 0; k < 5; k++)
		if (!p || p->args[k] != EBPF_ARG_NONE)
			*use |= (uint16_t)(2u << k);
}

/* Backward liveness over each function, to a fixpoint: bit k of live[i] when register rk can be
 * read before any write on some path from instruction i (within its function; an exit reads r0
 * only, a bpf-to-bpf call anything). NULL when out of memory. */
static uint16_t *live_in(const struct ebpf_exec *prog, const struct jit_analysis *an)
{
	uint16_t *live = calloc(an->n_insns + 1, sizeof(*live));

	if (!live)
		return NULL;
	for (uint32_t fi = 0; fi < an->n_funcs; fi++) {
		const struct jit_func *f = &an->funcs[fi];
		int changed = 1;

		while (changed) {
			changed = 0;
			for (uint32_t i = f->end; i-- > f->start;) {
				const struct ebpf_insn *in = &prog->insns[i];
				uint8_t cls = EBPF_CLASS(in->code), op = EBPF_OP(in->code);
				uint16_t use, def, out = 0, v;

				if (an->insn_flags[i] & JIT_INSN_LDDW_TAIL)
					continue;
				use_def(prog, in, &use, &def);
				if (is_jump(in)) {
					out |= live[jump_target(in, i)];
					if (op != EBPF_JA && i + 1 < f->end)
						out |= live[i + 1];
				} else if (!(cls == EBPF_JMP && op == EBPF_EXIT)) {
					uint32_t next = i + (ebpf_insn_is_lddw(in) ? 2 : 1);

					if (next < f->end)
						out |= live[next];
				}
				v = (uint16_t)(use | (out & ~def));
				if (v != live[i]) {
					live[i] = v;
					changed = 1;
				}
			}
		}
	}
	return live;
}

/* 1 when instruction i may stand between a converted load and its jump (JIT_INSN_F32_GAP): an
 * ALU instruction on registers only that the backend emits without branches or scratch
 * registers (no division, shift by a register or byte swap), that touches no register in dst
 * (the load's destination) and writes none in src (its base), and no jump target (only the
 * load reaches it). Emitted before the load, it computes the same: it does not read what the
 * load writes, and the load reads nothing it writes. */
static int f32_gap_insn(const struct ebpf_exec *prog, const struct jit_analysis *an, uint32_t i,
			uint16_t dst, uint16_t src)
{
	const struct ebpf_insn *in = &prog->insns[i];
	uint8_t cls = EBPF_CLASS(in->code), op = EBPF_OP(in->code);
	uint16_t use, def;

	if ((cls != EBPF_ALU && cls != EBPF_ALU64) ||
	    (an->insn_flags[i] & (JIT_INSN_TARGET | JIT_INSN_FUNC_START)))
		return 0;
	switch (op) {
	case EBPF_MOV:
	case EBPF_ADD:
	case EBPF_SUB:
	case EBPF_AND:
	case EBPF_OR:
	case EBPF_XOR:
	case EBPF_NEG:
		break;
	case EBPF_LSH:
	case EBPF_RSH:
	case EBPF_ARSH:
		if (EBPF_SRC(in->code) != EBPF_K)
			return 0;
		break;
	default:
		return 0;
	}
	ebpf_insn_use_def(in, &use, &def);
	return !((use | def) & dst) && !(def & src);
}

/* Marks converted loads (EBPF_INTERNAL_LDX_F32) whose value nothing reads but a 64-bit "if dst ==
 * none" or "if dst != none" on the conversion's `none`, the next instruction or after a gap
 * (f32_gap_insn): no element in range converts to none (its results lie between those of lo and
 * hi, the operations being monotonic), so the range test alone decides the jump, and the backend
 * emits only that (no conversion). The jump must be no target itself, so that only the load
 * reaches it. */
static void mark_f32_tests(const struct ebpf_exec *prog, struct jit_analysis *an,
			   const uint16_t *live)
{
	const struct ebpf_ctx_from_f32 *c = &prog->from_f32;

	if (!prog->n_f32_loads)
		return;
	/* the conversion's results at the ends of [lo, hi), in its own operations (exec.c checked
	 * that both are far inside int64) */
	int64_t a = (int64_t)((double)c->lo * c->scale + 0.5);
	int64_t b = (int64_t)((double)c->hi * c->scale + 0.5);
	int64_t none = (int64_t)c->none;

	if (none >= (a < b ? a : b) && none <= (a < b ? b : a))
		return;
	for (uint32_t i = 0; i + 1 < an->n_insns; i++) {
		const struct ebpf_insn *in = &prog->insns[i];
		uint16_t d = (uint16_t)(1u << in->dst_reg);
		uint32_t gap = 0;

		if (in->code != EBPF_INTERNAL_LDX_F32)
			continue;
		while (gap < JIT_F32_GAP_MAX && i + 1 + gap + 1 < an->n_insns &&
		       f32_gap_insn(prog, an, i + 1 + gap, d, (uint16_t)(1u << in->src_reg)))
			gap++;
		uint32_t at = i + 1 + gap; /* the jump */
		const struct ebpf_insn *jmp = &prog->insns[at];
		uint8_t op = EBPF_OP(jmp->code);

		if (at >= an->n_insns || EBPF_CLASS(jmp->code) != EBPF_JMP ||
		    EBPF_SRC(jmp->code) != EBPF_K || (op != EBPF_JEQ && op != EBPF_JNE) ||
		    jmp->dst_reg != in->dst_reg || (int64_t)jmp->imm != none ||
		    (an->insn_flags[at] & (JIT_INSN_TARGET | JIT_INSN_FUNC_START)))
			continue;
		int64_t t = jump_target(jmp, at);

		if (!(live[t] & d) && (at + 1 >= an->n_insns || !(live[at + 1] & d)))
			an->insn_flags[i] |= JIT_INSN_F32_TEST | JIT_INSN_F32_GAP(gap);
	}
}

static void analysis_free(struct jit_analysis *an)
{
	free(an->inl); /* the start of the one block */
	memset(an, 0, sizeof(*an));
}

static int analyse(const struct ebpf_exec *prog, uint32_t opt_flags, struct jit_analysis *an,
		   char *err, size_t err_len)
{
	uint32_t n = prog->n_insns, f = 0, i;
	const struct ebpf_insn *insns = prog->insns;
	size_t sz_flags = (n + 7) & ~(size_t)7;
	uint8_t *block;
	int inline_ok;

	memset(an, 0, sizeof(*an));
	an->prog = prog;
	an->n_insns = n;
	an->flags = opt_flags;
	if (!n) {
		ebpf_errf(err, err_len, "empty program");
		return -EINVAL;
	}
	/* One allocation for every per-instruction array, the 8-byte aligned ones first. */
	block = calloc(1, (size_t)n * (sizeof(struct jit_inline) + sizeof(struct jit_func) +
				       2 * sizeof(uint32_t)) +
			      sz_flags);
	if (!block) {
		ebpf_errf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	an->inl = (struct jit_inline *)block;
	an->funcs = (struct jit_func *)(an->inl + n);
	an->insn_func = (uint32_t *)(an->funcs + n);
	an->insn_inline = an->insn_func + n;
	an->insn_flags = (uint8_t *)(an->insn_inline + n);

	an->insn_flags[0] |= JIT_INSN_FUNC_START;
	for (i = 0; i < n; i++) {
		const struct ebpf_insn *in = &insns[i];

		if (ebpf_insn_is_lddw(in)) {
			if (i + 1 < n)
				an->insn_flags[i + 1] |= JIT_INSN_LDDW_TAIL;
			i++;
			continue;
		}
		if (in->code == (EBPF_JMP | EBPF_CALL) && in->src_reg == EBPF_PSEUDO_CALL) {
			int64_t t = (int64_t)i + 1 + in->imm;

			if (t < 0 || t >= n)
				goto bad_target;
			/* The entry frame anchors the call-depth count, so re-entering it would
			 * reset the count and recurse until the native stack overflows. Only
			 * recursion can call the entry, and the verifier rejects recursion: refuse,
			 * the interpreter (which counts frames) remains. */
			if (t == 0) {
				ebpf_errf(err, err_len,
					  "insn %u: call to the entry function (recursion) is not "
					  "compiled; use the interpreter",
					  i);
				analysis_free(an);
				return -EOPNOTSUPP;
			}
			an->insn_flags[t] |= JIT_INSN_FUNC_START;
			an->has_bpf_calls = 1;
		} else if (is_jump(in)) {
			int64_t t = jump_target(in, i);

			if (t < 0 || t >= n)
				goto bad_target;
			an->insn_flags[t] |= JIT_INSN_TARGET;
		}
		continue;
	bad_target:
		ebpf_errf(err, err_len, "insn %u: jump or call out of range", i);
		analysis_free(an);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if ((an->insn_flags[i] & (JIT_INSN_FUNC_START | JIT_INSN_LDDW_TAIL)) ==
		    (JIT_INSN_FUNC_START | JIT_INSN_LDDW_TAIL)) {
			ebpf_errf(err, err_len, "insn %u: call into the middle of lddw", i);
			analysis_free(an);
			return -EINVAL;
		}
		if (an->insn_flags[i] & JIT_INSN_FUNC_START) {
			if (i)
				an->funcs[f - 1].end = i;
			an->funcs[f].start = i;
			f++;
		}
		an->insn_func[i] = f - 1;
	}
	an->funcs[f - 1].end = n;
	an->n_funcs = f;

	inline_ok = !(opt_flags & EBPF_JIT_F_NO_INLINE) && helper_is_map_lookup(prog);
	for (i = 0; i < n; i++) {
		const struct ebpf_insn *in = &insns[i];
		struct jit_func *fn = &an->funcs[an->insn_func[i]];
		uint16_t regs;

		if (an->insn_flags[i] & JIT_INSN_LDDW_TAIL)
			continue;
		regs = insn_regs(in);
		fn->regs_used |= regs;
		if (regs & (1u << EBPF_REG_10))
			fn->uses_stack = 1;
		if (in->code == (EBPF_JMP | EBPF_CALL)) {
			if (in->src_reg == EBPF_PSEUDO_HELPER && in->imm == HELPER_MAP_LOOKUP &&
			    inline_ok) {
				struct ebpf_map *m = const_map_in_r1(prog, an->insn_flags, i);

				if (m && !array_layout(m, &an->inl[an->n_inl])) {
					an->insn_flags[i] |= JIT_INSN_INLINE_ARRAY;
					an->insn_inline[i] = an->n_inl++;
				}
			}
			/* An inlined lookup calls nothing: no stack alignment needed for it. */
			if (!(an->insn_flags[i] & JIT_INSN_INLINE_ARRAY))
				fn->calls = 1;
		}
		if (is_jump(in)) {
			int64_t t = jump_target(in, i);

			if (an->insn_func[t] != an->insn_func[i]) {
				ebpf_errf(err, err_len,
					  "insn %u: jump to insn %lld leaves its function", i,
					  (long long)t);
				analysis_free(an);
				return -EINVAL;
			}
		}
	}
	{
		uint16_t *live = live_in(prog, an);

		/* r0, r3-r9 the entry may read before writing them (r1, r2 are arguments and r10
		 * the frame); all of them when that is not known */
		an->entry_zero = live ? live[an->funcs[0].start] & 0x3f9 : 0x3f9;
		if (live)
			mark_f32_tests(prog, an, live);
		free(live);
	}
	for (f = 0; f < an->n_funcs; f++) {
		uint32_t last = an->funcs[f].end - 1;
		uint8_t code = insns[last].code;

		if ((an->insn_flags[last] & JIT_INSN_LDDW_TAIL) ||
		    (code != (EBPF_JMP | EBPF_EXIT) && code != (EBPF_JMP | EBPF_JA) &&
		     code != (EBPF_JMP32 | EBPF_JA))) {
			ebpf_errf(
			    err, err_len,
			    "insn %u: function ends without exit or jump (falls into the next)",
			    last);
			analysis_free(an);
			return -EINVAL;
		}
	}
	return 0;
}

/* --- Public API ----------------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ebpf_exec__jit_opts(struct ebpf_exec *prog, const struct ebpf_jit_opts *opts,
			struct ebpf_jit_stats *stats, char *err, size_t err_len)
{
	uint32_t flags = 0;
	uint64_t t0 = now_ns();

	if (!prog) {
		ebpf_errf(err, err_len, "no program");
		return -EINVAL;
	}
	if (opts && opts->sz >= offsetof(struct ebpf_jit_opts, flags) + sizeof(opts->flags))
		flags = opts->flags;
	if (prog->jit_fn) {
		if (stats)
			*stats = ebpf_exec__jit_stats(prog);
		return 0;
	}
#ifdef NCCLBPF_HAVE_JIT
	{
		struct jit_analysis an;
		struct jit_image img = {0};
		int ret;

		ret = analyse(prog, flags, &an, err, err_len);
		if (ret)
			return ret;
		an.fault_counter = &prog->jit_stats.faults;
		ret = jit_arch_compile(&an, &img, err, err_len);
		if (!ret) {
			prog->jit_stats.n_inlined = an.n_inl;
			prog->jit_stats.may_abort = an.has_bpf_calls;
			prog->jit_stats.keeps_regs = img.keeps_regs;
			ret = jit_mem_seal(img.mem, img.mapped);
			if (ret) {
				ebpf_errf(err, err_len, "mprotect of JIT code failed");
				jit_mem_free(img.mem, img.mapped);
			}
		}
		analysis_free(&an);
		if (ret)
			return ret;
		prog->jit_mem = img.mem;
		prog->jit_mem_size = img.mapped;
		prog->jit_stats.code_size = img.code_size;
		prog->jit_stats.compile_ns = now_ns() - t0;
		__atomic_store_n(&prog->jit_stats.faults, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&prog->jit_fn, img.entry, __ATOMIC_RELEASE);
		if (!prog->jit_stats.may_abort)
			__atomic_store_n(&prog->hot.fast_fn, img.entry, __ATOMIC_RELEASE);
		if (stats)
			*stats = ebpf_exec__jit_stats(prog);
		return 0;
	}
#else
	(void)t0;
	(void)analyse;
	ebpf_errf(err, err_len, "no JIT backend for this architecture (the interpreter runs)");
	return -ENOTSUP;
#endif
}

int ebpf_exec__jit(struct ebpf_exec *prog, struct ebpf_jit_stats *stats, char *err, size_t err_len)
{
	return ebpf_exec__jit_opts(prog, NULL, stats, err, err_len);
}

ebpf_jit_fn ebpf_exec__jit_fn(const struct ebpf_exec *prog)
{
	return prog ? __atomic_load_n(&prog->jit_fn, __ATOMIC_ACQUIRE) : NULL;
}

struct ebpf_jit_stats ebpf_exec__jit_stats(const struct ebpf_exec *prog)
{
	struct ebpf_jit_stats s = {0};

	if (prog && prog->jit_fn) {
		s = prog->jit_stats;
		s.faults = ebpf_exec__jit_faults(prog);
	}
	return s;
}

uint64_t ebpf_exec__jit_faults(const struct ebpf_exec *prog)
{
	return prog ? __atomic_load_n(&prog->jit_stats.faults, __ATOMIC_RELAXED) : 0;
}

/* Slow half of ebpf_exec__run: option parsing, the interpreter, fault reporting. */
static int run_slow(const struct ebpf_exec *prog, enum ebpf_engine engine, uint64_t r1, uint64_t r2,
		    const struct ebpf_run_opts *opts, uint64_t *r0)
{
	ebpf_jit_fn fn = ebpf_exec__jit_fn(prog);
	int interp_only = 0;
	uint64_t faults, ret;

	if (opts) {
		if (opts->sz >= offsetof(struct ebpf_run_opts, checked) + sizeof(opts->checked) &&
		    opts->checked)
			interp_only = 1;
		if (opts->sz >=
			offsetof(struct ebpf_run_opts, insn_limit) + sizeof(opts->insn_limit) &&
		    opts->insn_limit)
			interp_only = 1;
		if (opts->sz >= offsetof(struct ebpf_run_opts, flags) + sizeof(opts->flags) &&
		    (opts->flags & EBPF_RUN_F_UNINIT_REGS))
			interp_only = 1;
	}
	switch (engine) {
	case EBPF_ENGINE_INTERP:
		return ebpf_interp__run(prog, r1, r2, opts, r0);
	case EBPF_ENGINE_JIT:
		if (interp_only)
			return -EOPNOTSUPP;
		if (!fn)
			return -ENOEXEC;
		break;
	case EBPF_ENGINE_DEFAULT:
		if (interp_only || !fn)
			return ebpf_interp__run(prog, r1, r2, opts, r0);
		break;
	default:
		return -EINVAL;
	}
	/* A run aborted on call-depth overflow returns EBPF_JIT_FAULT_R0 and bumps the counter;
	 * another thread's fault at the same moment can only be misattributed when this run also
	 * returned that value. */
	faults = ebpf_exec__jit_faults(prog);
	ret = fn(r1, r2);
	*r0 = ret;
	if (ret == EBPF_JIT_FAULT_R0 && ebpf_exec__jit_faults(prog) != faults) {
		struct ebpf_fault *fault = NULL;

		if (opts && opts->sz >= offsetof(struct ebpf_run_opts, fault) + sizeof(opts->fault))
			fault = opts->fault;
		if (fault) {
			memset(fault, 0, sizeof(*fault));
			fault->kind = EBPF_FAULT_CALL_DEPTH;
			snprintf(fault->msg, sizeof(fault->msg),
				 "call depth exceeds %d frames (JIT run aborted)", EBPF_MAX_FRAMES);
		}
		return -EFAULT;
	}
	return 0;
}

int ebpf_exec__run_full(const struct ebpf_exec *prog, enum ebpf_engine engine, uint64_t r1,
			uint64_t r2, const struct ebpf_run_opts *opts, uint64_t *r0)
{
	if (!prog || !r0)
		return -EINVAL;
	return run_slow(prog, engine, r1, r2, opts, r0);
}
