/* Stored states by (instruction, signature). A visit compares only the stored states that could
 * equal it: those of its instruction with its signature (prune.c state_sig). Each entry keeps
 * the states still being explored (compared exactly, for an infinite loop) apart from the
 * complete ones (compared for subsumption), and among the complete ones those whose precise
 * scalars all hold known values (a loop counter, a count) are found by those values.
 *
 * Why: a visit used to scan every state of its instruction. In a loop, each iteration stores a
 * state where its paths meet, and the iteration's side branches, explored after every later
 * iteration, passed over all later iterations' states to reach their own: quadratic in the trip
 * count (4,378 comparisons per verification of policies/tuned_table.c, 64 iterations). That
 * cost was why an instruction kept at most 64 states, and with that cap a loop of more than 64
 * iterations lost its pruning: a first-fit scan of 256 rows, or a scan of a 256-entry array
 * map, ran into the 1,000,000-instruction budget. The complete states are walked most recently
 * completed first (a side branch meets its own iteration's state first), at most 64 a visit.
 * That still failed a loop whose paths carry a count that decides a branch after it: its states
 * of one instruction differ by the count as well as the iteration (the iteration's states times
 * the counts reached by then), the one a path could meet was rarely among the first 64, and the
 * states the walk passed over failed to match so often that they were dropped from it (prune.c);
 * the loop of tests/verifier/bpf/prec_counter_loop.c ran into the budget from 12 iterations. A
 * value precise in a stored state must be the same value in a state it subsumes, so states keyed
 * by those values meet only the states they could prune. prune.c keys an entry's complete states
 * once a walk of them passes a few without a match (keying costs a hash and a list a key). */
#include <string.h>

#include "state.h"

/* States of one (instruction, signature) being explored at once: a loop that stores one state
 * per iteration there stops storing after this many iterations (and a loop that never ends
 * runs into the complexity budget, as before). A loop that fits the 4,096 executed
 * instructions every program type allows runs about 1,000 iterations at most (a body of 4
 * instructions). */
#define MAX_ACTIVE 1024

/* The states of one entry with one set of precise scalars holding values that hash to key.
 * owner: the entry's address plus the index of the set in its masks (entries are 16-byte
 * aligned arena blocks and an entry has at most INDEX_MASKS sets, so owners never collide). */
struct key_list {
	union {
		struct index_node id;
		struct {
			uint64_t key;
			uint64_t owner;
		};
	};
	struct checkpoint *head;
};
_Static_assert(INDEX_MASKS <= 16,
	       "a key list's owner adds the set's index to a 16-byte aligned address");

static uint32_t hash(uint64_t a, uint64_t b, uint32_t mask)
{
	/* a (a signature or a key) is well mixed in its high half (prune.c) */
	return (uint32_t)((a ^ b * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* The table's slot of (a, b): the node, or the empty slot where it would go. */
static struct index_node **find(const struct node_table *t, uint64_t a, uint64_t b)
{
	uint32_t mask = t->cap - 1;

	for (uint32_t i = hash(a, b, mask);; i = (i + 1) & mask) {
		struct index_node **n = &t->slots[i];
		if (!*n || ((*n)->a == a && (*n)->b == b))
			return n;
	}
}

static struct index_node *table_get(const struct node_table *t, uint64_t a, uint64_t b)
{
	return t->cap ? *find(t, a, b) : NULL;
}

/* Adds node n to t; false when out of memory. */
static bool table_add(struct env *env, struct node_table *t, struct index_node *n)
{
	if ((t->used + 1) * 2 > t->cap) { /* at most half full */
		struct node_table old = *t;
		size_t bytes;
		uint32_t cap = old.cap ? old.cap * 2 : 64;
		struct index_node **s = arena_block(&env->arena, cap * sizeof(*s), &bytes);
		if (!s)
			return false;
		memset(s, 0, cap * sizeof(*s));
		t->slots = s;
		t->cap = cap;
		for (uint32_t i = 0; i < old.cap; i++)
			if (old.slots[i])
				*find(t, old.slots[i]->a, old.slots[i]->b) = old.slots[i];
		arena_unblock(&env->arena, old.slots, old.cap * sizeof(*old.slots));
	}
	*find(t, n->a, n->b) = n;
	t->used++;
	return true;
}

struct sig_entry *index_find(const struct env *env, uint32_t pc, uint64_t sig)
{
	struct sig_entry *e = env->aux[pc].entry;

	if (!e || e->sig == sig)
		return e;
	return (struct sig_entry *)table_get(&env->sig_tab, sig, pc);
}

struct checkpoint *index_keyed(const struct env *env, const struct sig_entry *e, uint32_t k,
			       uint64_t key)
{
	const struct key_list *l =
	    (const struct key_list *)table_get(&env->key_tab, key, (uintptr_t)e + k);

	return l ? l->head : NULL;
}

struct sig_entry *index_entry(struct env *env, uint32_t pc, uint64_t sig)
{
	struct sig_entry *e = index_find(env, pc, sig);

	if (e)
		return e;
	e = arena_zalloc(&env->arena, sizeof(*e));
	if (!e)
		return NULL;
	e->sig = sig;
	e->pc = pc;
	if (!env->aux[pc].entry)
		env->aux[pc].entry = e;
	else if (!table_add(env, &env->sig_tab, &e->id))
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
	cp->list = head;
	cp->newer = NULL;
	cp->older = *head;
	if (*head)
		(*head)->newer = cp;
	*head = cp;
}

/* cp leaves its list. */
static void unlink_cp(struct checkpoint *cp)
{
	if (cp->newer)
		cp->newer->older = cp->older;
	else
		*cp->list = cp->older;
	if (cp->older)
		cp->older->newer = cp->newer;
	cp->newer = cp->older = NULL;
	cp->list = NULL;
}

void index_add(struct sig_entry *e, struct checkpoint *cp)
{
	cp->entry = e;
	push(&e->active, cp);
	e->n_active++;
}

/* The list of e's states keyed by key under mask, made when missing; NULL when e has no room
 * for another mask or out of memory. */
static struct key_list *key_list(struct env *env, struct sig_entry *e, const struct key_mask *mask,
				 uint64_t key)
{
	size_t bytes = sizeof(e->masks[0]);
	struct key_list *l;
	uint32_t k;

	for (k = 0; k < e->n_masks && memcmp(&e->masks[k], mask, bytes); k++)
		;
	if (k == INDEX_MASKS)
		return NULL;
	l = (struct key_list *)table_get(&env->key_tab, key, (uintptr_t)e + k);
	if (l)
		return l;
	l = arena_zalloc(&env->arena, sizeof(*l));
	if (!l)
		return NULL;
	l->key = key;
	l->owner = (uintptr_t)e + k;
	if (!table_add(env, &env->key_tab, &l->id))
		return NULL;
	if (k == e->n_masks)
		memcpy(&e->masks[e->n_masks++], mask, bytes);
	return l;
}

void index_complete(struct checkpoint *cp)
{
	unlink_cp(cp);
	cp->entry->n_active--;
	push(&cp->entry->done, cp);
}

bool index_key(struct env *env, struct checkpoint *cp, const struct key_mask *mask, uint64_t key)
{
	struct key_list *l = key_list(env, cp->entry, mask, key);

	if (!l)
		return false;
	unlink_cp(cp);
	push(&l->head, cp);
	return true;
}

void index_forget(struct checkpoint *cp)
{
	unlink_cp(cp);
}
