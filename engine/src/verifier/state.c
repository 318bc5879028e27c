/* Allocation, copying and freeing of abstract states (in the verification's arena). Frames keep
 * only the stack slots in use, so stored states of small programs stay small. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

static struct frame *frame_alloc(struct env *env)
{
	struct frame *f = env->free_frames;

	if (f) {
		env->free_frames = f->next_free;
		return f;
	}
	f = arena_alloc(&env->arena, sizeof(*f));
	if (f) {
		f->slots = NULL;
		f->cap_slots = 0;
	}
	return f;
}

struct frame *frame_new(struct env *env, uint32_t callsite, uint32_t subprog)
{
	struct frame *f = frame_alloc(env);

	if (!f)
		return NULL;
	for (int i = 0; i < EBPF_NREGS; i++)
		reg_mark_not_init(&f->regs[i]);
	f->callsite = callsite;
	f->subprog = subprog;
	f->nslots = 0;
	return f;
}

/* Room for nslots slots in f, keeping the first `keep` of them. */
static int slots_reserve(struct env *env, struct frame *f, uint32_t nslots, uint32_t keep)
{
	struct slot *s;
	size_t cap;

	if (nslots <= f->cap_slots)
		return 0;
	s = arena_regrow(&env->arena, f->slots, f->cap_slots * sizeof(*s), keep * sizeof(*s),
			 nslots * sizeof(*s), &cap);
	if (!s)
		return -ENOMEM;
	f->slots = s;
	f->cap_slots = (uint16_t)(cap / sizeof(*s));
	return 0;
}

int frame_grow(struct env *env, struct frame *f, uint32_t nslots)
{
	if (nslots <= f->nslots)
		return 0;
	if (slots_reserve(env, f, nslots, f->nslots))
		return -ENOMEM;
	memset(f->slots + f->nslots, 0, (nslots - f->nslots) * sizeof(*f->slots));
	f->nslots = (uint16_t)nslots;
	return 0;
}

/* Its slots stay with it: a frame taken from the list again has room for them. */
void frame_free(struct env *env, struct frame *f)
{
	if (!f)
		return;
	f->next_free = env->free_frames;
	env->free_frames = f;
}

static struct frame *frame_dup(struct env *env, const struct frame *src)
{
	struct frame *f = frame_alloc(env);
	struct slot *slots;
	uint16_t cap;

	if (!f)
		return NULL;
	if (slots_reserve(env, f, src->nslots, 0)) {
		frame_free(env, f);
		return NULL;
	}
	slots = f->slots;
	cap = f->cap_slots;
	*f = *src;
	f->slots = slots;
	f->cap_slots = cap;
	if (src->nslots)
		memcpy(f->slots, src->slots, src->nslots * sizeof(*f->slots));
	return f;
}

void state_free(struct env *env, struct vstate *st)
{
	arena_unblock(&env->arena, st->hist, st->cap_hist * sizeof(*st->hist));
	st->hist = NULL;
	st->n_hist = st->cap_hist = 0;
	for (uint32_t i = 0; i < EBPF_MAX_FRAMES; i++) {
		frame_free(env, st->frames[i]);
		st->frames[i] = NULL;
	}
}

/* dst is written in place (no state of its own to keep): on failure it holds nothing. */
int state_copy(struct env *env, struct vstate *dst, const struct vstate *src)
{
	*dst = *src;
	memset(dst->frames, 0, sizeof(dst->frames));
	dst->hist = NULL;
	dst->cap_hist = 0;
	if (src->n_hist) {
		size_t cap;
		dst->hist = arena_block(&env->arena, src->n_hist * sizeof(*dst->hist), &cap);
		if (!dst->hist)
			return -ENOMEM;
		dst->cap_hist = (uint32_t)(cap / sizeof(*dst->hist));
		memcpy(dst->hist, src->hist, src->n_hist * sizeof(*dst->hist));
	}
	for (uint32_t i = 0; i <= src->curframe; i++) {
		dst->frames[i] = frame_dup(env, src->frames[i]);
		if (!dst->frames[i]) {
			state_free(env, dst);
			return -ENOMEM;
		}
	}
	return 0;
}

int state_init(struct env *env, struct vstate *st)
{
	struct frame *f;

	memset(st, 0, sizeof(*st));
	f = frame_new(env, UINT32_MAX, 0);
	if (!f)
		return -ENOMEM;
	st->frames[0] = f;
	/* r1 = ctx, r10 = frame pointer; both pointers with a zero variable offset */
	reg_mark_const(&f->regs[EBPF_REG_1], 0);
	f->regs[EBPF_REG_1].type = PTR_TO_CTX;
	reg_mark_const(&f->regs[EBPF_REG_10], 0);
	f->regs[EBPF_REG_10].type = PTR_TO_STACK;
	return 0;
}
