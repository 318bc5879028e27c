/* State pruning: explored states are stored at prune points (jump targets, branch fall-throughs,
 * returns from calls); a new state that is subsumed by a fully explored one needs no further
 * analysis. A new state exactly equal to one still being explored on the same path is an
 * infinite loop. Stored states also carry the longest remaining path, which makes the
 * worst-case cost bound survive pruning. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

#define MAX_CHECKPOINTS	 65536
#define CHECKPOINT_EVERY 8
/* The memory this verification allocated (arena.c) past which no more states are stored: the
 * analysis goes on without them, and a program that would need more runs into the complexity
 * budget. Without it, a loop whose paths carry many distinct values (a count whose range
 * decides a branch) stored states up to MAX_CHECKPOINTS: 116 MB before the budget rejected the
 * program. A loop of 1,000 iterations that stores 4 states each needs about 6 MB. (Not the
 * arena's size, which holds what the last verification left: a verdict must not depend on
 * what the process verified before.) */
#define STORE_MEMORY (16u << 20)
/* The most stored states one visit compares in each of its walks (prune_visit). */
#define MAX_WALK 64

struct idmap {
	uint32_t n;
	uint32_t old[64], cur[64];
};

/* The same old id must always meet the same current id (old correlations must hold in cur). */
static bool check_ids(struct idmap *m, uint32_t old_id, uint32_t cur_id)
{
	if (!old_id)
		return true;
	if (!cur_id)
		return false;
	for (uint32_t i = 0; i < m->n; i++)
		if (m->old[i] == old_id)
			return m->cur[i] == cur_id;
	if (m->n == 64)
		return false;
	m->old[m->n] = old_id;
	m->cur[m->n++] = cur_id;
	return true;
}

static bool range_within(const struct reg *o, const struct reg *c)
{
	return o->umin <= c->umin && c->umax <= o->umax && o->smin <= c->smin &&
	       c->smax <= o->smax && o->u32_min <= c->u32_min && c->u32_max <= o->u32_max &&
	       o->s32_min <= c->s32_min && c->s32_max <= o->s32_max &&
	       tnum_in(o->var_off, c->var_off);
}

static bool range_equal(const struct reg *o, const struct reg *c)
{
	return o->umin == c->umin && c->umax == o->umax && o->smin == c->smin &&
	       c->smax == o->smax && o->u32_min == c->u32_min && c->u32_max == o->u32_max &&
	       o->s32_min == c->s32_min && c->s32_max == o->s32_max &&
	       o->var_off.value == c->var_off.value && o->var_off.mask == c->var_off.mask;
}

static bool regsafe(const struct reg *o, const struct reg *c, struct idmap *m, bool exact,
		    bool precise)
{
	if (o->type == NOT_INIT)
		return !exact || c->type == NOT_INIT;
	if (o->type != c->type)
		return false;
	if (exact ? o->local != c->local : (c->local && !o->local))
		return false;
	if (o->type == SCALAR && !exact && !precise)
		return true; /* its range never mattered to the paths explored from old */
	if (!(exact ? range_equal(o, c) : range_within(o, c)))
		return false;
	switch (o->type) {
	case SCALAR:
		/* copies refined together in old must be copies in cur too */
		return check_ids(m, o->id, c->id);
	case PTR_TO_CTX:
		return o->off == c->off;
	case PTR_TO_STACK:
		return o->off == c->off && o->frameno == c->frameno;
	case CONST_PTR_TO_MAP:
		return o->map_idx == c->map_idx;
	case PTR_TO_MAP_VALUE:
		return o->off == c->off && o->map_idx == c->map_idx;
	case PTR_TO_MAP_VALUE_OR_NULL:
		return o->off == c->off && o->map_idx == c->map_idx && check_ids(m, o->id, c->id);
	case PTR_TO_MEM:
	case PTR_TO_MEM_OR_NULL:
		return o->off == c->off && o->mem_size == c->mem_size &&
		       check_ids(m, o->id, c->id) && check_ids(m, o->ref_id, c->ref_id);
	default:
		return false;
	}
}

/* Byte b of cur slot cs as a known value, if it is one. */
static bool byte_value(uint8_t cb, const struct slot *cs, int b, uint8_t *v)
{
	if (STACK_KIND(cb) == STACK_CONST) {
		*v = cs->val[b];
		return true;
	}
	if (STACK_KIND(cb) == STACK_SPILL && cs->spill.type == SCALAR &&
	    scalar_is_const(&cs->spill)) {
		*v = (uint8_t)(cs->spill.var_off.value >> (8 * b));
		return true;
	}
	return false;
}

static bool byte_safe(uint8_t ob, uint8_t cb, const struct slot *os, const struct slot *cs, int b,
		      bool exact, bool precise)
{
	uint8_t ok = STACK_KIND(ob), ck = STACK_KIND(cb), v;
	bool init_data = ck == STACK_MISC || ck == STACK_CONST ||
			 (ck == STACK_SPILL && cs->spill.type == SCALAR);

	if (exact)
		return ob == cb && (ok != STACK_CONST || os->val[b] == cs->val[b]);
	if ((cb & STACK_LOCAL) && !(ob & STACK_LOCAL) && ok != STACK_INVALID)
		return false;
	switch (ok) {
	case STACK_INVALID:
		return true;
	case STACK_MISC:
		return init_data;
	case STACK_CONST:
		/* a known byte whose value never mattered reads like any initialised byte
		 * (fills and narrow loads of the slot are traced by precision tracking) */
		if (!precise)
			return init_data;
		return byte_value(cb, cs, b, &v) && v == os->val[b];
	default:
		/* an imprecise spilled scalar reads like any initialised bytes */
		if (!precise && os->spill.type == SCALAR)
			return init_data;
		return ck == STACK_SPILL;
	}
}

static bool stacksafe(const struct frame *o, const struct frame *c, struct idmap *m, bool exact,
		      uint64_t precise)
{
	static const struct slot empty;
	uint32_t n = o->nslots > c->nslots ? o->nslots : c->nslots;

	for (uint32_t i = 0; i < n; i++) {
		const struct slot *os = i < o->nslots ? &o->slots[i] : &empty;
		const struct slot *cs = i < c->nslots ? &c->slots[i] : &empty;
		bool p = i >= 64 || ((precise >> i) & 1);
		for (int b = 0; b < 8; b++)
			if (!byte_safe(os->bytes[b], cs->bytes[b], os, cs, b, exact, p))
				return false;
		if (STACK_KIND(os->bytes[0]) == STACK_SPILL &&
		    STACK_KIND(cs->bytes[0]) == STACK_SPILL &&
		    !regsafe(&os->spill, &cs->spill, m, exact, p))
			return false;
	}
	return true;
}

/* Live registers of frame f of st (what states_equal compares). */
static uint16_t live_regs(const struct env *env, const struct vstate *st, uint32_t f)
{
	if (f == st->curframe)
		return env->aux[st->insn].live_in;
	return env->aux[st->frames[f + 1]->callsite + 1].live_in & ~0x3f;
}

static bool states_equal(struct env *env, const struct checkpoint *cp, const struct vstate *c,
			 bool exact)
{
	const struct vstate *o = &cp->st;
	struct idmap m;

	m.n = 0;
	if (o->curframe != c->curframe || o->n_refs != c->n_refs)
		return false;
	if (exact || c->n_taint) {
		if (o->n_taint != c->n_taint)
			return false;
		for (uint32_t i = 0; i < o->n_taint; i++)
			if (o->taint[i].until != c->taint[i].until ||
			    o->taint[i].frameno != c->taint[i].frameno)
				return false;
	}
	for (uint32_t f = 0; f <= o->curframe; f++) {
		const struct frame *of = o->frames[f], *cf = c->frames[f];
		uint16_t live;
		if (of->callsite != cf->callsite)
			return false;
		live = live_regs(env, o, f);
		uint16_t precise = cp->all_precise ? 0xffff : cp->precise[f];
		for (int r = 0; r < EBPF_REG_10; r++)
			if ((live >> r) & 1 &&
			    !regsafe(&of->regs[r], &cf->regs[r], &m, exact, (precise >> r) & 1))
				return false;
		if (!stacksafe(of, cf, &m, exact, cp->all_precise ? ~0ull : cp->precise_slots[f]))
			return false;
	}
	for (uint32_t i = 0; i < o->n_refs; i++)
		if (!check_ids(&m, o->refs[i], c->refs[i]))
			return false;
	return true;
}

/* Mixes one value into a key. */
static uint64_t key_mix(uint64_t h, uint64_t v, uint64_t where)
{
	h = (h ^ v ^ where << 48) * 0x100000001b3ull;
	return h ^ h >> 29;
}

/* The key of a state by its precise scalars: the values the places of mask hold in st, hashed;
 * false when one of them does not hold a known value. A stored state whose precise scalars all
 * hold known values subsumes only states holding the same values there (regsafe, byte_safe),
 * so a visit finds the states it could meet by its own key under each of its entry's masks
 * (state_index.c). */
static bool state_key(const struct vstate *st, const struct key_mask *mask, uint64_t *key)
{
	uint64_t h = 0x84222325cbf29ce4ull;

	for (uint32_t f = 0; f <= st->curframe; f++) {
		for (uint32_t m = mask->regs[f]; m; m &= m - 1) {
			int r = __builtin_ctz(m);
			const struct reg *x = &st->frames[f]->regs[r];
			if (x->type != SCALAR || !scalar_is_const(x))
				return false;
			h = key_mix(h, x->var_off.value, f << 4 | r);
		}
	}
	for (uint32_t i = 0; i < mask->n_slots; i++) {
		const struct frame *fr = st->frames[mask->slots[i].frame];
		uint32_t k = mask->slots[i].slot, where = 0x800 | mask->slots[i].frame << 6 | k;
		const struct slot *sl;
		uint8_t v;
		if (k >= fr->nslots)
			return false; /* never written: no known value */
		sl = &fr->slots[k];
		if (mask->slots[i].spill) {
			for (int b = 0; b < 8; b++)
				if (STACK_KIND(sl->bytes[b]) != STACK_SPILL)
					return false;
			if (sl->spill.type != SCALAR || !scalar_is_const(&sl->spill))
				return false;
			h = key_mix(h, sl->spill.var_off.value, where);
		}
		for (uint32_t m = mask->slots[i].const_bytes; m; m &= m - 1) {
			int b = __builtin_ctz(m);
			if (!byte_value(sl->bytes[b], sl, b, &v))
				return false;
			h = key_mix(h, v, where << 3 | (uint32_t)b);
		}
	}
	*key = (h ^ h >> 32) * 0x9e3779b97f4a7c15ull; /* every input in the high half */
	return true;
}

/* The places of cp's precise scalars that a value keys (false: a precise one holds a range,
 * or there are more slots than a mask has room for). Precise registers that are not scalars, or
 * not initialised, and precise stack bytes that are neither a spilled scalar nor of known value,
 * constrain nothing by value (regsafe, byte_safe). */
static bool key_places(const struct env *env, const struct checkpoint *cp, struct key_mask *mask)
{
	const struct vstate *st = &cp->st;

	memset(mask, 0, sizeof(*mask)); /* padding too: masks are compared whole */
	for (uint32_t f = 0; f <= st->curframe; f++) {
		const struct frame *fr = st->frames[f];
		uint32_t m = cp->precise[f] & live_regs(env, st, f) & ((1u << EBPF_REG_10) - 1);
		for (; m; m &= m - 1) {
			int r = __builtin_ctz(m);
			if (fr->regs[r].type == SCALAR)
				mask->regs[f] |= (uint16_t)(1u << r);
		}
		for (uint64_t p = cp->precise_slots[f]; p; p &= p - 1) {
			uint32_t k = (uint32_t)__builtin_ctzll(p);
			const struct slot *sl;
			uint8_t const_bytes = 0, spill = 0;
			if (k >= fr->nslots)
				break; /* this slot and the ones above were never written */
			sl = &fr->slots[k];
			if (STACK_KIND(sl->bytes[0]) == STACK_SPILL) {
				if (sl->spill.type != SCALAR)
					continue;
				if (!scalar_is_const(&sl->spill))
					return false;
				spill = 1;
			} else {
				for (int b = 0; b < 8; b++)
					if (STACK_KIND(sl->bytes[b]) == STACK_CONST)
						const_bytes |= (uint8_t)(1u << b);
				if (!const_bytes)
					continue;
			}
			if (mask->n_slots == KEY_SLOTS)
				return false;
			mask->slots[mask->n_slots].frame = (uint8_t)f;
			mask->slots[mask->n_slots].slot = (uint8_t)k;
			mask->slots[mask->n_slots].const_bytes = const_bytes;
			mask->slots[mask->n_slots++].spill = spill;
		}
	}
	return true;
}

/* Complete state cp joins the states of its entry found by the values of its precise scalars
 * when each holds a known value (its precise marks are final: only the checkpoints of the path
 * being explored gain marks). */
static void key_state(struct env *env, struct checkpoint *cp)
{
	struct key_mask mask;
	uint64_t key;

	if (!cp->all_precise && key_places(env, cp, &mask) && state_key(&cp->st, &mask, &key))
		index_key(env, cp, &mask, key);
}

/* A walk of e's done list passed this many states without a match: from then on e's complete
 * states are keyed. Most entries never get there (a loop's side branches meet their own
 * iteration's state at the head of the list), and keying costs a hash and a list per key. */
#define KEY_AFTER 4

static void key_entry(struct env *env, struct sig_entry *e)
{
	struct checkpoint *cp, *next;

	e->keyed = true;
	for (cp = e->done; cp; cp = next) {
		next = cp->older;
		key_state(env, cp);
	}
}

static void complete(struct env *env, struct checkpoint *cp)
{
	index_complete(cp);
	if (cp->entry->keyed)
		key_state(env, cp);
}

/* cp's longest remaining path is at least rem. */
static void rem_raise(struct checkpoint *cp, uint64_t rem)
{
	if (!cp->rem_set || rem > cp->max_rem) {
		cp->max_rem = rem;
		cp->rem_set = true;
	}
}

/* The current path ended. Each checkpoint it completes (no path through it left to explore)
 * hands its longest remaining path to its parent checkpoint, so a checkpoint's bound is
 * complete when it is (the only time it is read: states are pruned against complete
 * checkpoints only). Raising every ancestor at every exit instead walked the whole chain of
 * a loop's checkpoints at each exit of a later iteration. */
static void path_end(struct env *env)
{
	for (struct checkpoint *cp = env->cur.parent; cp; cp = cp->st.parent) {
		struct checkpoint *up = cp->st.parent;
		if (--cp->branches)
			break;
		complete(env, cp);
		if (up && cp->rem_set)
			rem_raise(up, cp->st.cost - up->st.cost + cp->max_rem);
	}
}

void prune_path_done(struct env *env, uint64_t exit_cost)
{
	if (exit_cost > env->worst_cost)
		env->worst_cost = exit_cost;
	if (env->cur.parent)
		rem_raise(env->cur.parent, exit_cost - env->cur.parent->st.cost);
	path_end(env);
}

void prune_path_dead(struct env *env)
{
	path_end(env);
}

/* What two states must share to be equal: frames, call sites, and for every live register its
 * type and, for pointers, where it points. Comparing this hash first rejects most stored states
 * of a loop (whose pointers advance every iteration) without walking them. Bit 0 is
 * SIG_EXACT_ONLY: st has a live uninitialised register, which a non-exact comparison lets match
 * anything (so for such a stored state the signature only filters exact comparisons). The bit
 * is a function of the hashed register types, so equal states still have equal signatures. */
#define SIG_EXACT_ONLY 1ull
static uint64_t state_sig(const struct env *env, const struct vstate *st)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ st->curframe;
	bool exact_only = false;

	for (uint32_t f = 0; f <= st->curframe; f++) {
		const struct frame *fr = st->frames[f];
		uint32_t live = live_regs(env, st, f) & ((1u << EBPF_REG_10) - 1);
		h = (h ^ fr->callsite) * 0x100000001b3ull;
		for (; live; live &= live - 1) {
			int r = __builtin_ctz(live);
			const struct reg *x = &fr->regs[r];
			uint64_t v;
			if (x->type == NOT_INIT)
				exact_only = true;
			v = x->type;
			if (reg_is_ptr(x))
				v |= (uint64_t)(uint32_t)x->off << 8 ^ (uint64_t)x->map_idx << 40 ^
				     (uint64_t)x->frameno << 56 ^ (uint64_t)x->mem_size << 20;
			h = (h ^ v ^ (uint64_t)r << 60) * 0x100000001b3ull;
			h ^= h >> 29;
		}
	}
	/* mixed once more so that every input reaches the high half (state_index.c hashes it) */
	h = (h ^ h >> 32) * 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	return (h & ~SIG_EXACT_ONLY) | (exact_only ? SIG_EXACT_ONLY : 0);
}

/* 1: the current state is subsumed by complete state cp (pruned), 0: not, <0: an infinite
 * loop (cp is on the current path and the state repeats exactly). */
static int visit_one(struct env *env, uint32_t pc, struct checkpoint *cp, uint64_t sig)
{
	if (cp->branches) {
		if (cp->entry->sig == sig &&
		    cp->st.frames[cp->st.curframe]->callsite ==
			env->cur.frames[env->cur.curframe]->callsite &&
		    states_equal(env, cp, &env->cur, true))
			return verr(
			    env, pc, -EACCES,
			    "infinite loop detected at insn %u: the loop state repeats exactly",
			    pc);
		return 0;
	}
	if (!states_equal(env, cp, &env->cur, false))
		return 0;
	cp->hits++;
	/* what mattered from old matters here too: mark it in our checkpoints */
	precise_from(env, cp);
	prune_path_done(env, env->cur.cost + cp->max_rem);
	return 1;
}

/* Compares the current state with the complete states of the list at head, most recently
 * completed first, at most MAX_WALK of them: 1 pruned, 0 not, <0 an error. *passed: how many
 * it compared without a match. */
static int walk_complete(struct env *env, uint32_t pc, struct checkpoint *head, uint64_t sig,
			 uint32_t *passed)
{
	struct checkpoint *cp, *next;
	uint32_t n;
	int err;

	for (n = 0, cp = head; cp && n < MAX_WALK; cp = next, n++) {
		next = cp->older;
		if ((err = visit_one(env, pc, cp, sig)))
			return err;
		/* a complete state that keeps failing to match is compared no more (Linux's
		 * rule): the walk stays with the states that prune */
		if (++cp->misses > 3 * cp->hits + 3)
			index_forget(cp);
	}
	*passed = n;
	return 0;
}

int prune_visit(struct env *env, uint32_t pc)
{
	struct insn_aux *aux = &env->aux[pc];
	struct checkpoint *cp;
	bool store;
	uint64_t sig, key;
	struct sig_entry *e, *entry;
	uint32_t n, passed;
	int err;

	if (!aux->prune_point)
		return 0;
	store =
	    (env->cur.since_checkpoint >= CHECKPOINT_EVERY || (aux->prune_point & PRUNE_JOIN)) &&
	    env->n_checkpoints < MAX_CHECKPOINTS && env->arena.allocated < STORE_MEMORY;
	if (!aux->n_states && !store)
		return 0; /* nothing to compare with, nothing to store */
	sig = state_sig(env, &env->cur);
	/* A different signature rules out equality, exact or not, unless the stored state's
	 * uninitialised registers would have matched anything. Compared: the complete states of
	 * this signature that hold the current state's values in their precise scalars (under
	 * each set of precise scalars the entry's states have), then the other complete ones,
	 * most recently completed first (a loop iteration's side branches meet their own
	 * iteration's state there, completed just before them), then those still being explored,
	 * newest first, for an exact repeat (an infinite loop), then the states that match any
	 * signature. Each walk is capped: a state past the caps is only not used. */
	e = index_find(env, pc, sig);
	if (e) {
		for (uint32_t k = 0; k < e->n_masks; k++)
			if (state_key(&env->cur, &e->masks[k], &key) &&
			    (err =
				 walk_complete(env, pc, index_keyed(env, e, k, key), sig, &passed)))
				return err;
		if ((err = walk_complete(env, pc, e->done, sig, &passed)))
			return err;
		if (passed >= KEY_AFTER && !e->keyed)
			key_entry(env, e);
		for (n = 0, cp = e->active; cp && n < MAX_WALK; cp = cp->older, n++)
			if ((err = visit_one(env, pc, cp, sig)))
				return err;
	}
	for (cp = aux->exact_only; cp; cp = cp->prev_exact_only)
		if (cp->entry->sig != sig && (err = visit_one(env, pc, cp, sig)))
			return err;
	if (!store || ((sig & SIG_EXACT_ONLY) && aux->n_exact_only >= MAX_WALK))
		return 0;
	entry = index_entry(env, pc, sig);
	if (!entry)
		return verr(env, pc, -ENOMEM, "out of memory storing states");
	if (!index_has_room(entry))
		return 0;
	cp = arena_zalloc(&env->arena, sizeof(*cp));
	if (!cp || state_copy(env, &cp->st, &env->cur))
		return verr(env, pc, -ENOMEM, "out of memory storing states");
	cp->branches = 1;
	index_add(entry, cp);
	aux->n_states++;
	if (sig & SIG_EXACT_ONLY) {
		cp->prev_exact_only = aux->exact_only;
		aux->exact_only = cp;
		aux->n_exact_only++;
	}
	env->cur.parent = cp;
	env->cur.since_checkpoint = 0;
	env->cur.n_hist = 0; /* the history up to here now belongs to the checkpoint */
	env->cur.hist_overflow = false;
	if (++env->n_checkpoints + env->n_stack > env->peak_states)
		env->peak_states = env->n_checkpoints + env->n_stack;
	return 0;
}
