/* Structural checks before the abstract interpretation: opcodes and reserved fields (through
 * insn_rules.c, the table ebpf_exec__new checks through too), jump and call targets, 64-bit
 * immediate loads, subprogram boundaries, reachability, recursion. Also
 * computes per-instruction register liveness (for pruning) and the immediate post-dominator of
 * every conditional jump (where control dependence on a rank-local value ends). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/maps.h"
#include "state.h"
#include "../insn_regs.h"
#include "../insn_rules.h"

#define NONE UINT32_MAX

static bool is_jmp_class(uint8_t cls)
{
	return cls == EBPF_JMP || cls == EBPF_JMP32;
}

static bool is_cond_jmp(const struct ebpf_insn *i)
{
	uint8_t op = EBPF_OP(i->code);

	return is_jmp_class(EBPF_CLASS(i->code)) && op != EBPF_JA && op != EBPF_CALL &&
	       op != EBPF_EXIT;
}

static bool is_uncond_ja(const struct ebpf_insn *i)
{
	return is_jmp_class(EBPF_CLASS(i->code)) && EBPF_OP(i->code) == EBPF_JA;
}

/* Target of a jump at pc. */
static int64_t jmp_target(const struct ebpf_insn *i, uint32_t pc)
{
	if (EBPF_CLASS(i->code) == EBPF_JMP32 && EBPF_OP(i->code) == EBPF_JA)
		return (int64_t)pc + 1 + i->imm;
	return (int64_t)pc + 1 + i->off;
}

/* What the verifier adds to the encoding rules of insn_rules.c: constant operands that can
 * never be right, and the maps behind a 64-bit immediate load. */
static int check_alu(struct env *env, const struct ebpf_insn *i, uint32_t pc)
{
	uint8_t op = EBPF_OP(i->code);

	if (EBPF_SRC(i->code) == EBPF_X)
		return 0;
	if ((op == EBPF_DIV || op == EBPF_MOD) && i->imm == 0)
		return verr(env, pc, -EACCES, "division by zero");
	if ((op == EBPF_LSH || op == EBPF_RSH || op == EBPF_ARSH) &&
	    (i->imm < 0 || i->imm >= (EBPF_CLASS(i->code) == EBPF_ALU64 ? 64 : 32)))
		return verr(env, pc, -EACCES, "invalid shift %d", i->imm);
	return 0;
}

static int check_lddw(struct env *env, const struct ebpf_insn *i, uint32_t pc)
{
	const struct ebpf_insn *n = i + 1;
	struct ebpf_map *map;

	if (!i->src_reg)
		return 0;
	map = env->opts->maps[i->imm];
	if (!map)
		return verr(env, pc, -EINVAL, "lddw: map %d is NULL", i->imm);
	if (i->src_reg != EBPF_PSEUDO_MAP_VALUE)
		return 0;
	/* Only an array's element 0 has a fixed address to load (ebpf_exec__new resolves
	 * nothing else), as in Linux. */
	if (ebpf_map__type(map) != EBPF_MAP_TYPE_ARRAY)
		return verr(env, pc, -EACCES, "direct value access needs an array map (map '%s')",
			    ebpf_map__name(map));
	if ((uint32_t)n->imm >= ebpf_map__value_size(map) || map_is_ringbuf(env, (uint32_t)i->imm))
		return verr(env, pc, -EACCES,
			    "invalid access to map value pointer, value_size=%u off=%u",
			    ebpf_map__value_size(map), (uint32_t)n->imm);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Per-instruction pass: encodings and subprogram starts. */
static int scan(struct env *env, uint32_t **starts_out, uint32_t *n_starts)
{
	uint32_t *starts = malloc(sizeof(*starts) * (env->n + 1)), ns = 0;
	int err = 0;

	if (!starts)
		return -ENOMEM;
	starts[ns++] = 0;
	for (uint32_t pc = 0; pc < env->n && !err; pc++) {
		const struct ebpf_insn *i = &env->insns[pc];
		uint32_t n_maps = env->opts->maps ? env->opts->n_maps : 0;
		char why[160];

		if (ebpf_insn_check(i, env->n - pc, n_maps, why, sizeof(why))) {
			err = verr(env, pc, -EINVAL, "%s", why);
			break;
		}
		switch (EBPF_CLASS(i->code)) {
		case EBPF_ALU:
		case EBPF_ALU64:
			err = check_alu(env, i, pc);
			break;
		case EBPF_LDX:
		case EBPF_ST:
		case EBPF_STX:
			break;
		case EBPF_LD:
			err = check_lddw(env, i, pc);
			pc++;
			break;
		default:
			/* unknown helpers are rejected even where no path reaches them, as the
			 * program could not be created anyway */
			if (EBPF_OP(i->code) == EBPF_CALL && i->src_reg == EBPF_PSEUDO_HELPER &&
			    (i->imm < 0 || i->imm >= EBPF_MAX_HELPERS || !env->opts->helpers ||
			     !env->opts->helpers->by_id[i->imm]))
				err = verr(env, pc, -EACCES, "invalid func unknown#%d", i->imm);
			if (!err && EBPF_OP(i->code) == EBPF_CALL &&
			    i->src_reg == EBPF_PSEUDO_CALL) {
				int64_t t = (int64_t)pc + 1 + i->imm;
				if (t < 0 || t >= env->n)
					err =
					    verr(env, pc, -EINVAL,
						 "call to invalid destination %lld", (long long)t);
				else
					starts[ns++] = (uint32_t)t;
			}
			break;
		}
	}
	if (err) {
		free(starts);
		return err;
	}
	qsort(starts, ns, sizeof(*starts), cmp_u32);
	{
		uint32_t k = 0;
		for (uint32_t j = 0; j < ns; j++)
			if (!k || starts[k - 1] != starts[j])
				starts[k++] = starts[j];
		ns = k;
	}
	*starts_out = starts;
	*n_starts = ns;
	return 0;
}

/* Successors of pc inside its subprogram (calls fall through). Returns the count. */
static int successors(const struct env *env, uint32_t pc, uint32_t out[2])
{
	const struct ebpf_insn *i = &env->insns[pc];
	uint8_t cls = EBPF_CLASS(i->code);

	if (ebpf_insn_is_lddw(i)) {
		out[0] = pc + 2;
		return 1;
	}
	if (!is_jmp_class(cls)) {
		out[0] = pc + 1;
		return 1;
	}
	switch (EBPF_OP(i->code)) {
	case EBPF_EXIT:
		return 0;
	case EBPF_CALL:
		out[0] = pc + 1;
		return 1;
	case EBPF_JA:
		out[0] = (uint32_t)jmp_target(i, pc);
		return 1;
	default:
		out[0] = pc + 1;
		out[1] = (uint32_t)jmp_target(i, pc);
		return out[1] == out[0] ? 1 : 2;
	}
}

static int check_targets(struct env *env)
{
	for (uint32_t s = 0; s < env->n_subprogs; s++) {
		struct subprog *sp = &env->subprogs[s];
		const struct ebpf_insn *last = &env->insns[sp->end - 1];

		if (sp->end - 1 > sp->start && ebpf_insn_is_lddw(&env->insns[sp->end - 2]))
			return verr(env, sp->end - 1, -EINVAL, "last insn is not an exit or jmp");
		if (!(is_jmp_class(EBPF_CLASS(last->code)) &&
		      (EBPF_OP(last->code) == EBPF_EXIT || EBPF_OP(last->code) == EBPF_JA)))
			return verr(env, sp->end - 1, -EINVAL, "last insn is not an exit or jmp");
		for (uint32_t pc = sp->start; pc < sp->end; pc++) {
			const struct ebpf_insn *i = &env->insns[pc];
			env->aux[pc].subprog = s;
			if (ebpf_insn_is_lddw(i)) {
				if (pc + 1 < env->n)
					env->aux[pc + 1].subprog = s;
				pc++;
				continue;
			}
			if (is_jmp_class(EBPF_CLASS(i->code)) &&
			    (is_cond_jmp(i) || is_uncond_ja(i))) {
				int64_t t = jmp_target(i, pc);
				if (t < sp->start || t >= sp->end)
					return verr(env, pc, -EINVAL,
						    "jump out of range from insn %u to %lld", pc,
						    (long long)t);
				env->aux[t].prune_point |= PRUNE_POINT | PRUNE_JOIN;
				env->aux[pc + 1].prune_point |= PRUNE_POINT;
			}
		}
	}
	return 0;
}

/* Marks second halves of 64-bit immediate loads and rejects jumps into them. */
static int check_lddw_targets(struct env *env, uint8_t *half)
{
	for (uint32_t pc = 0; pc < env->n; pc++)
		if (ebpf_insn_is_lddw(&env->insns[pc]))
			half[++pc] = 1;
	for (uint32_t pc = 0; pc < env->n; pc++) {
		const struct ebpf_insn *i = &env->insns[pc];
		if (half[pc])
			continue;
		if (is_cond_jmp(i) || is_uncond_ja(i)) {
			int64_t t = jmp_target(i, pc);
			if (t < 0 || t >= env->n)
				return verr(env, pc, -EINVAL,
					    "jump out of range from insn %u to %lld", pc,
					    (long long)t);
			if (half[t])
				return verr(env, pc, -EINVAL,
					    "jump into the middle of ldimm64 insn %lld",
					    (long long)t - 1);
		}
		if (is_jmp_class(EBPF_CLASS(i->code)) && EBPF_OP(i->code) == EBPF_CALL &&
		    i->src_reg == EBPF_PSEUDO_CALL && half[pc + 1 + i->imm])
			return verr(env, pc, -EINVAL, "call into the middle of ldimm64 insn");
	}
	return 0;
}

/* Depth-first reachability from the entry; subprograms become reachable through calls.
 * Also detects recursion (a call to a subprogram already on the static call chain). */
static int reach(struct env *env, const uint8_t *half)
{
	uint32_t *work = malloc(sizeof(*work) * (env->n + 1)), nw = 0;
	int err = 0;

	if (!work)
		return -ENOMEM;
	env->aux[0].seen = 1;
	work[nw++] = 0;
	env->subprogs[0].called = true;
	while (nw) {
		uint32_t pc = work[--nw], succ[2];
		const struct ebpf_insn *i = &env->insns[pc];
		int ns = successors(env, pc, succ);

		if (is_jmp_class(EBPF_CLASS(i->code)) && EBPF_OP(i->code) == EBPF_CALL &&
		    i->src_reg == EBPF_PSEUDO_CALL) {
			uint32_t t = pc + 1 + (uint32_t)i->imm;
			env->subprogs[env->aux[t].subprog].called = true;
			env->aux[pc + 1].prune_point |= PRUNE_POINT;
			if (!env->aux[t].seen) {
				env->aux[t].seen = 1;
				work[nw++] = t;
			}
		}
		for (int k = 0; k < ns; k++) {
			if (succ[k] >= env->n) {
				err = verr(env, pc, -EINVAL, "jump out of range from insn %u to %u",
					   pc, succ[k]);
				goto out;
			}
			if (!env->aux[succ[k]].seen) {
				env->aux[succ[k]].seen = 1;
				work[nw++] = succ[k];
			}
		}
	}
	for (uint32_t pc = 0; pc < env->n; pc++) {
		if (!env->aux[pc].seen && !half[pc]) {
			err = verr(env, pc, -EINVAL, "unreachable insn %u", pc);
			goto out;
		}
	}
out:
	free(work);
	return err;
}

/* Static call graph, memoised depth-first: no recursion, at most EBPF_MAX_FRAMES deep, and
 * (with use_stack) the combined stack of any call chain within EBPF_STACK_SIZE. Linux rounds each
 * frame to 32 bytes; so do we. mark: 0 new, 1 on the current chain, 2 done. */
static int call_graph(struct env *env, uint32_t s, uint8_t *mark, uint32_t *frames, uint32_t *stack,
		      bool use_stack)
{
	uint32_t best_f = 0, best_s = 0;
	int err;

	mark[s] = 1;
	for (uint32_t pc = env->subprogs[s].start; pc < env->subprogs[s].end; pc++) {
		const struct ebpf_insn *i = &env->insns[pc];
		uint32_t t;
		if (ebpf_insn_is_lddw(i)) {
			pc++;
			continue;
		}
		if (!(EBPF_CLASS(i->code) == EBPF_JMP && EBPF_OP(i->code) == EBPF_CALL &&
		      i->src_reg == EBPF_PSEUDO_CALL))
			continue;
		t = env->aux[pc + 1 + (uint32_t)i->imm].subprog;
		if (mark[t] == 1)
			return verr(env, pc, -EACCES, "recursive call from insn %u to insn %u", pc,
				    env->subprogs[t].start);
		if (mark[t] == 0) {
			err = call_graph(env, t, mark, frames, stack, use_stack);
			if (err)
				return err;
		}
		if (frames[t] > best_f)
			best_f = frames[t];
		if (stack[t] > best_s)
			best_s = stack[t];
		if (best_f + 1 > EBPF_MAX_FRAMES)
			return verr(env, pc, -EACCES, "the call stack of %u frames is too deep",
				    best_f + 1);
	}
	mark[s] = 2;
	frames[s] = best_f + 1;
	stack[s] = best_s + ((env->subprogs[s].stack_depth + 31) & ~31u);
	if (use_stack && stack[s] > EBPF_STACK_SIZE)
		return verr(env, env->subprogs[s].start, -EACCES,
			    "combined stack size of %u calls is %u bytes, too large (limit %u)",
			    frames[s], stack[s], EBPF_STACK_SIZE);
	return 0;
}

int cfg_check_calls(struct env *env, bool use_stack)
{
	uint32_t ns = env->n_subprogs;
	uint8_t *mark = calloc(ns, 1);
	uint32_t *frames = calloc(ns, sizeof(uint32_t)), *stack = calloc(ns, sizeof(uint32_t));
	int err = -ENOMEM;

	if (mark && frames && stack)
		err = call_graph(env, 0, mark, frames, stack, use_stack);
	free(mark);
	free(frames);
	free(stack);
	return err;
}

/* The registers a helper call reads: its prototype's arguments (all of r1-r5 for a helper
 * the verifier will reject anyway). Taking every call to read r1-r5 left registers a program
 * never set live across the calls of a loop body: every stored state there then had a live
 * uninitialised register, which matches any state, so none could be told apart by signature
 * (a 128-entry array map scan took 42,889 processed instructions instead of 2,057). */
static uint16_t helper_reads(const struct env *env, const struct ebpf_insn *insn)
{
	const struct ebpf_helper_proto *p = NULL;
	uint16_t use = 0;

	if (insn->imm >= 0 && insn->imm < EBPF_MAX_HELPERS && env->opts->helpers)
		p = env->opts->helpers->by_id[insn->imm];
	if (!p)
		return 0x3e;
	for (int a = 0; a < 5; a++)
		if (p->args[a] != EBPF_ARG_NONE)
			use |= (uint16_t)(1u << (a + 1));
	return use;
}

static void liveness(struct env *env, const uint8_t *half)
{
	bool changed = true;

	while (changed) {
		changed = false;
		for (uint32_t k = env->n; k-- > 0;) {
			uint32_t succ[2];
			uint16_t use, def, out = 0, in;
			int ns;

			if (half[k])
				continue;
			ns = successors(env, k, succ);
			for (int j = 0; j < ns; j++)
				out |= env->aux[succ[j]].live_in;
			ebpf_insn_use_def(&env->insns[k], &use, &def);
			if (env->insns[k].code == (EBPF_JMP | EBPF_CALL) &&
			    env->insns[k].src_reg == 0)
				use = helper_reads(env, &env->insns[k]);
			in = (uint16_t)(use | (out & ~def)) | (1u << EBPF_REG_10);
			if (in != env->aux[k].live_in) {
				env->aux[k].live_in = in;
				changed = true;
			}
		}
	}
}

/* The edges of the reverse control-flow graph: k -> p for each successor k of p, and X -> p
 * (X = n, the virtual exit node) for each p without successors. Counts them into cnt[k]; with
 * preds also stores p at preds[pidx[k] + cnt[k]] (the second pass, pidx from the counts).
 * Returns the number of edges. */
static uint32_t reverse_edges(const struct env *env, const uint8_t *half, uint32_t *cnt,
			      uint32_t *preds, const uint32_t *pidx)
{
	uint32_t total = 0;

	for (uint32_t p = 0; p < env->n; p++) {
		uint32_t succ[2];
		int ns;
		if (half[p])
			continue;
		ns = successors(env, p, succ);
		if (!ns)
			succ[ns++] = env->n;
		for (int j = 0; j < ns; j++) {
			if (preds)
				preds[pidx[succ[j]] + cnt[succ[j]]] = p;
			cnt[succ[j]]++;
		}
		total += (uint32_t)ns;
	}
	return total;
}

/* Immediate post-dominators of conditional jumps (Cooper, Harvey and Kennedy's iterative
 * dominator algorithm on the reversed control-flow graph of each subprogram). */
static int post_dominators(struct env *env, const uint8_t *half)
{
	uint32_t n = env->n, X = n; /* virtual exit node */
	uint32_t *npred = calloc(n + 2, sizeof(uint32_t)), *pidx = NULL, *preds = NULL;
	uint32_t *po = NULL, *order = NULL, *idom = NULL, *stack = NULL;
	uint8_t *vis = NULL;
	uint32_t total = 0, cnt = 0;
	int err = -ENOMEM;

	if (!npred)
		return -ENOMEM;
	/* forward predecessors = successors in the reverse graph */
	total = reverse_edges(env, half, npred, NULL, NULL);
	pidx = calloc(n + 2, sizeof(uint32_t));
	preds = malloc(sizeof(uint32_t) * (total + 1));
	po = malloc(sizeof(uint32_t) * (n + 1));
	order = malloc(sizeof(uint32_t) * (n + 1));
	idom = malloc(sizeof(uint32_t) * (n + 1));
	stack = malloc(sizeof(uint32_t) * 2 * (n + 1));
	vis = calloc(n + 1, 1);
	if (!pidx || !preds || !po || !order || !idom || !stack || !vis)
		goto out;
	for (uint32_t k = 0; k <= n; k++)
		pidx[k + 1] = pidx[k] + npred[k];
	memset(npred, 0, (n + 2) * sizeof(uint32_t));
	reverse_edges(env, half, npred, preds, pidx);
	/* iterative DFS postorder from X over the reverse graph */
	{
		uint32_t sp = 0;
		stack[sp++] = X;
		stack[sp++] = 0;
		vis[X] = 1;
		while (sp) {
			uint32_t v = stack[sp - 2], *it = &stack[sp - 1];
			if (*it < npred[v]) {
				uint32_t w = preds[pidx[v] + (*it)++];
				if (!vis[w]) {
					vis[w] = 1;
					stack[sp++] = w;
					stack[sp++] = 0;
				}
			} else {
				po[v] = cnt;
				order[cnt++] = v;
				sp -= 2;
			}
		}
	}
	for (uint32_t k = 0; k <= n; k++)
		idom[k] = NONE;
	idom[X] = X;
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t r = cnt - 1; r-- > 0;) { /* reverse postorder, root excluded */
			uint32_t b = order[r], nid = NONE, succ[2];
			int ns = successors(env, b, succ);
			uint32_t cand[3], nc = 0;
			if (!ns)
				cand[nc++] = X;
			for (int j = 0; j < ns; j++)
				cand[nc++] = succ[j];
			for (uint32_t j = 0; j < nc; j++) {
				uint32_t p = cand[j];
				if (idom[p] == NONE)
					continue;
				if (nid == NONE) {
					nid = p;
					continue;
				}
				uint32_t f1 = p, f2 = nid;
				while (f1 != f2) {
					while (po[f1] < po[f2])
						f1 = idom[f1];
					while (po[f2] < po[f1])
						f2 = idom[f2];
				}
				nid = f1;
			}
			if (nid != idom[b]) {
				idom[b] = nid;
				changed = true;
			}
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		if (half[k] || !is_cond_jmp(&env->insns[k]))
			continue;
		env->aux[k].ipdom = (idom[k] == NONE || idom[k] == X) ? NONE : idom[k];
	}
	err = 0;
out:
	free(npred);
	free(pidx);
	free(preds);
	free(po);
	free(order);
	free(idom);
	free(stack);
	free(vis);
	return err;
}

int cfg_check(struct env *env)
{
	uint32_t *starts = NULL, ns = 0;
	uint8_t *half = NULL;
	int err;

	err = scan(env, &starts, &ns);
	if (err)
		return err;
	env->subprogs = calloc(ns, sizeof(*env->subprogs));
	half = calloc(env->n + 1, 1);
	if (!env->subprogs || !half) {
		err = -ENOMEM;
		goto out;
	}
	env->n_subprogs = ns;
	for (uint32_t s = 0; s < ns; s++) {
		env->subprogs[s].start = starts[s];
		env->subprogs[s].end = s + 1 < ns ? starts[s + 1] : env->n;
	}
	err = check_lddw_targets(env, half);
	if (!err)
		for (uint32_t s = 1; s < ns && !err; s++)
			if (half[starts[s]])
				err = verr(env, starts[s], -EINVAL,
					   "call into the middle of ldimm64 insn");
	if (!err)
		err = check_targets(env);
	if (!err)
		err = reach(env, half);
	if (!err)
		err = cfg_check_calls(env, false);
	if (err)
		goto out;
	liveness(env, half);
	if (env->rank_check)
		err = post_dominators(env, half);
out:
	free(starts);
	free(half);
	return err;
}
