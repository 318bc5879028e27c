/* Rank consistency (docs/design.md §4.2): values carry a rank-local label (data dependence, in
 * struct reg and stack bytes); branches on rank-local values make everything written until the
 * paths meet again rank-local (control dependence, the ctrl_taint stack of a state). Tuner
 * decisions and per-communicator maps must never receive a rank-local value. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ebpf/maps.h"
#include "state.h"

bool taint_active(const struct env *env, uint32_t *origin)
{
	if (!env->cur.n_taint)
		return false;
	*origin = env->cur.taint[env->cur.n_taint - 1].origin;
	return true;
}

void taint_reg_write(struct env *env, struct reg *r)
{
	uint32_t origin;

	if (!r->local && taint_active(env, &origin)) {
		r->local = 1;
		r->taint = origin;
	}
}

void taint_branch(struct env *env, uint32_t pc, uint32_t origin)
{
	struct vstate *st = &env->cur;
	uint32_t until = env->aux[pc].ipdom;

	if (!env->rank_check)
		return;
	for (uint32_t i = 0; i < st->n_taint; i++)
		if (st->taint[i].until == until && st->taint[i].frameno == st->curframe)
			return;
	if (st->n_taint == MAX_CTRL_TAINT) {
		/* too deep: keep the frame tainted until it returns (more conservative) */
		until = UINT32_MAX;
		st->n_taint--;
	}
	st->taint[st->n_taint++] = (struct ctrl_taint){
	    .until = until, .frameno = (uint16_t)st->curframe, .origin = origin, .branch = pc};
}

static void taint_remove_if(struct vstate *st, uint32_t pc, bool frame_exit)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < st->n_taint; i++) {
		const struct ctrl_taint *t = &st->taint[i];
		bool drop = t->frameno == st->curframe && (frame_exit || t->until == pc);
		if (!drop)
			st->taint[k++] = *t;
	}
	st->n_taint = k;
}

void taint_at_insn(struct env *env, uint32_t pc)
{
	if (env->cur.n_taint)
		taint_remove_if(&env->cur, pc, false);
}

void taint_frame_exit(struct env *env)
{
	if (env->cur.n_taint)
		taint_remove_if(&env->cur, 0, true);
}

/* "ctx->reg_buff at line 12" */
static const char *origin_str(const struct env *env, uint32_t origin, char *buf, size_t len)
{
	char where[32];
	const char *what = origin < env->n && env->aux[origin].taint_src
			       ? env->aux[origin].taint_src
			       : "a rank-local source";

	snprintf(buf, len, "%s at %s", what, insn_line_prefix(env, origin, where, sizeof(where)));
	return buf;
}

/* What to do about the source of a rank-local value: for a map, why its contents differ between
 * ranks and the fix (ebpf_verify_opts.map_why); for the clock and random numbers, the uniform
 * input that usually serves the purpose. "" when there is nothing to add. */
static const char *origin_fix(const struct env *env, uint32_t origin)
{
	const struct insn_aux *a = origin < env->n ? &env->aux[origin] : NULL;

	if (a && a->taint_map && env->opts->map_why && env->opts->map_why[a->taint_map - 1])
		return env->opts->map_why[a->taint_map - 1];
	if (a && a->taint_src && !strcmp(a->taint_src, "ktime_get_ns()"))
		return "to vary a decision over time, decide from ctx->seq (the same call number "
		       "on every rank)";
	if (a && a->taint_src && !strcmp(a->taint_src, "get_prandom_u32()"))
		return "to explore, derive the choice from ctx->seq and ctx->comm_id (the same on "
		       "every rank)";
	return "";
}

int taint_check_decision(struct env *env, uint32_t pc, const struct reg *val, const char *field)
{
	char o[160];
	uint32_t origin;
	const char *fix;

	if (!env->rank_check)
		return 0;
	/* control dependence first: a constant written under the branch is labelled too, and
	 * the branch is what the author has to change */
	if (taint_active(env, &origin)) {
		fix = origin_fix(env, origin);
		return verr(env, pc, -EACCES,
			    "tuner decision `%s` is written under a branch on a rank-local value "
			    "(%s); ranks could disagree and hang the collective%s%s",
			    field, origin_str(env, origin, o, sizeof(o)), *fix ? ": " : "", fix);
	}
	if (val && val->local) {
		fix = origin_fix(env, val->taint);
		return verr(env, pc, -EACCES,
			    "tuner decision `%s` depends on a rank-local value (%s); ranks could "
			    "disagree and hang the collective%s%s",
			    field, origin_str(env, val->taint, o, sizeof(o)), *fix ? ": " : "",
			    fix);
	}
	return 0;
}

/* Only per-communicator maps need the check: every other map a program writes is rank-local
 * for decisions (the loader flags it), so what it holds cannot reach one. */
int taint_check_map_write(struct env *env, uint32_t pc, uint32_t map_idx, const struct reg *val,
			  const struct reg *ptr)
{
	char o[160];
	uint32_t origin;
	const char *name = ebpf_map__name(env_map(env, map_idx));

	if (!env->rank_check || !map_is_per_comm(env, map_idx))
		return 0;
	/* control dependence first, as for decisions */
	if (taint_active(env, &origin))
		return verr(
		    env, pc, -EACCES,
		    "per-communicator map `%s` written under a branch on a rank-local value "
		    "(%s), but decisions read it as the same on every rank",
		    name ? name : "?", origin_str(env, origin, o, sizeof(o)));
	if (val && val->local)
		return verr(env, pc, -EACCES,
			    "rank-local value (%s) stored into per-communicator map `%s`, which "
			    "decisions read as the same on every rank",
			    origin_str(env, val->taint, o, sizeof(o)), name ? name : "?");
	/* where the bytes go: an element or offset chosen from a rank-local value */
	if (ptr && ptr->local)
		return verr(
		    env, pc, -EACCES,
		    "per-communicator map `%s` written where a rank-local value (%s) points, "
		    "but decisions read it as the same on every rank",
		    name ? name : "?", origin_str(env, ptr->taint, o, sizeof(o)));
	return 0;
}

void taint_source_map(struct env *env, uint32_t pc, uint32_t idx, const char *what)
{
	const char *name = ebpf_map__name(env_map(env, idx));

	if (pc >= env->n || env->aux[pc].taint_src)
		return;
	taint_source(env, pc, "%s `%s`", what, name ? name : "?");
	env->aux[pc].taint_map = idx + 1;
}

void taint_source(struct env *env, uint32_t pc, const char *fmt, ...)
{
	va_list ap;

	if (pc >= env->n || env->aux[pc].taint_src)
		return;
	va_start(ap, fmt);
	vsnprintf(env->aux[pc].taint_buf, sizeof(env->aux[pc].taint_buf), fmt, ap);
	va_end(ap);
	env->aux[pc].taint_src = env->aux[pc].taint_buf;
}
