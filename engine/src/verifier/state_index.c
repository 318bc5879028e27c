/* Stored states by (instruction, signature). A visit compares only the stored states that could
 * equal it: those of its instruction with its signature (prune.c state_sig). Each entry keeps
 * two lists: the states still being explored (compared exactly, for an infinite loop) and the
 * complete ones (compared for subsumption), the most recently completed first.
 *
 * Why: a visit used to scan every state of its instruction. In a loop, each iteration stores a
 * state where its paths meet, and the iteration's side branches, explored after every later
 * iteration, passed over all later iterations' states to reach their own: quadratic in the trip
 * count (4,378 comparisons per verification of policies/tuned_table.c, 64 iterations). That
 * cost was why an instruction kept at most 64 states, and with that cap a loop of more than 64
 * iterations lost its pruning: a first-fit scan of 256 rows, or a scan of a 256-entry array
 * map, ran into the 1,000,000-instruction budget. Now the side branches meet their own
 * iteration's state first (it completed just before they are explored), and what is capped is
 * the states of one entry still being explored (MAX_ACTIVE, memory for a loop that never ends)
 * and the states one visit walks (prune.c). */
#include <string.h>

#include "state.h"

/* States of one (instruction, signature) being explored at once: a loop that stores one state
 * per iteration there stops storing after this many iterations (and a loop that never ends
 * runs into the complexity budget, as before). A loop that fits the 4,096 executed
 * instructions every program type allows runs about 1,000 iterations at most (a body of 4
 * instructions). */
#define MAX_ACTIVE 1024

static uint32_t hash(uint32_t pc, uint64_t sig, uint32_t mask)
{
	/* the signature is well mixed in its high half (state_sig) */
	return (uint32_t)((sig ^ pc * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* The table's slot of (pc, sig): the entry, or the empty slot where it would go. */
static struct sig_entry **find(const struct env *env, uint32_t pc, uint64_t sig)
{
	uint32_t mask = env->sig_cap - 1;

	for (uint32_t i = hash(pc, sig, mask);; i = (i + 1) & mask) {
		struct sig_entry **e = &env->sig_tab[i];
		if (!*e || ((*e)->sig == sig && (*e)->pc == pc))
			return e;
	}
}

static struct sig_entry *lookup(const struct env *env, uint32_t pc, uint64_t sig)
{
	struct sig_entry *e = env->aux[pc].entry;

	if (!e || e->sig == sig)
		return e;
	return env->sig_cap ? *find(env, pc, sig) : NULL;
}

void index_lookup(const struct env *env, uint32_t pc, uint64_t sig, struct checkpoint **done,
		  struct checkpoint **active)
{
	const struct sig_entry *e = lookup(env, pc, sig);

	*done = e ? e->done : NULL;
	*active = e ? e->active : NULL;
}

/* Adds e to the table; false when out of memory. */
static bool table_add(struct env *env, struct sig_entry *e)
{
	if ((env->sig_used + 1) * 2 > env->sig_cap) { /* at most half full */
		struct sig_entry **old = env->sig_tab;
		uint32_t old_cap = env->sig_cap, cap = old_cap ? old_cap * 2 : 64;
		size_t bytes;
		struct sig_entry **t = arena_block(&env->arena, cap * sizeof(*t), &bytes);
		if (!t)
			return false;
		memset(t, 0, cap * sizeof(*t));
		env->sig_tab = t;
		env->sig_cap = cap;
		for (uint32_t i = 0; i < old_cap; i++)
			if (old[i])
				*find(env, old[i]->pc, old[i]->sig) = old[i];
		arena_unblock(&env->arena, old, old_cap * sizeof(*old));
	}
	*find(env, e->pc, e->sig) = e;
	env->sig_used++;
	return true;
}

struct sig_entry *index_entry(struct env *env, uint32_t pc, uint64_t sig)
{
	struct sig_entry *e = lookup(env, pc, sig);

	if (e)
		return e;
	e = arena_zalloc(&env->arena, sizeof(*e));
	if (!e)
		return NULL;
	e->sig = sig;
	e->pc = pc;
	if (!env->aux[pc].entry)
		env->aux[pc].entry = e;
	else if (!table_add(env, e))
		return NULL;
	return e;
}

bool index_has_room(const struct sig_entry *e)
{
	return e->n_active < MAX_ACTIVE;
}

/* cp joins the list at *head, as its first. */
static void push(struct checkpoint **head, struct checkpoint *cp)
{
	cp->newer = NULL;
	cp->older = *head;
	if (*head)
		(*head)->newer = cp;
	*head = cp;
}

/* cp leaves the list at *head. */
static void unlink_from(struct checkpoint **head, struct checkpoint *cp)
{
	if (cp->newer)
		cp->newer->older = cp->older;
	else
		*head = cp->older;
	if (cp->older)
		cp->older->newer = cp->newer;
	cp->newer = cp->older = NULL;
}

void index_add(struct sig_entry *e, struct checkpoint *cp)
{
	cp->entry = e;
	push(&e->active, cp);
	e->n_active++;
}

void index_complete(struct checkpoint *cp)
{
	unlink_from(&cp->entry->active, cp);
	cp->entry->n_active--;
	push(&cp->entry->done, cp);
}

void index_forget(struct checkpoint *cp)
{
	unlink_from(&cp->entry->done, cp);
}
