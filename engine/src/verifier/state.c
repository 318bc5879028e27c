/* Allocation, copying and freeing of abstract states. Frames keep only the stack slots in use,
 * so stored states of small programs stay small. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

#define POOL_FRAMES 256

static struct frame *frame_alloc(struct env *env)
{
	struct frame *f = env->free_frames;

	if (f) {
		env->free_frames = f->next_free;
		env->n_free_frames--;
		return f;
	}
	return calloc(1, sizeof(*f));
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

int frame_grow(struct frame *f, uint32_t nslots)
{
	struct slot *s;

	if (nslots <= f->nslots)
		return 0;
	if (nslots > f->cap_slots) {
		s = realloc(f->slots, nslots * sizeof(*s));
		if (!s)
			return -ENOMEM;
		f->slots = s;
		f->cap_slots = (uint16_t)nslots;
	}
	memset(f->slots + f->nslots, 0, (nslots - f->nslots) * sizeof(*f->slots));
	f->nslots = (uint16_t)nslots;
	return 0;
}

void frame_free(struct env *env, struct frame *f)
{
	if (!f)
		return;
	if (env->n_free_frames < POOL_FRAMES) {
		f->next_free = env->free_frames;
		env->free_frames = f;
		env->n_free_frames++;
		return;
	}
	free(f->slots);
	free(f);
}

static struct frame *frame_dup(struct env *env, const struct frame *src)
{
	struct frame *f = frame_alloc(env);
	struct slot *slots;
	uint16_t cap;

	if (!f)
		return NULL;
	slots = f->slots;
	cap = f->cap_slots;
	if (src->nslots > cap) {
		slots = realloc(slots, src->nslots * sizeof(*slots));
		if (!slots) {
			frame_free(env, f);
			return NULL;
		}
		cap = src->nslots;
	}
	*f = *src;
	f->slots = slots;
	f->cap_slots = cap;
	if (src->nslots)
		memcpy(f->slots, src->slots, src->nslots * sizeof(*f->slots));
	return f;
}

static uint64_t *hist_alloc(struct env *env, uint32_t n, uint32_t *cap)
{
	for (uint32_t i = env->n_free_hist; i-- > 0;) {
		if (env->free_hist_cap[i] < n)
			continue;
		uint64_t *h = env->free_hist[i];
		*cap = env->free_hist_cap[i];
		env->n_free_hist--;
		env->free_hist[i] = env->free_hist[env->n_free_hist];
		env->free_hist_cap[i] = env->free_hist_cap[env->n_free_hist];
		return h;
	}
	*cap = n < 32 ? 32 : n;
	return malloc(*cap * sizeof(uint64_t));
}

void state_free(struct env *env, struct vstate *st)
{
	if (st->hist && env->n_free_hist < 64) {
		env->free_hist[env->n_free_hist] = st->hist;
		env->free_hist_cap[env->n_free_hist++] = st->cap_hist;
	} else {
		free(st->hist);
	}
	st->hist = NULL;
	st->n_hist = st->cap_hist = 0;
	for (uint32_t i = 0; i < EBPF_MAX_FRAMES; i++) {
		frame_free(env, st->frames[i]);
		st->frames[i] = NULL;
	}
}

void state_pool_free(struct env *env)
{
	while (env->free_frames) {
		struct frame *f = env->free_frames;
		env->free_frames = f->next_free;
		free(f->slots);
		free(f);
	}
	env->n_free_frames = 0;
	while (env->n_free_hist)
		free(env->free_hist[--env->n_free_hist]);
}

int state_copy(struct env *env, struct vstate *dst, const struct vstate *src)
{
	struct vstate tmp = *src;

	memset(tmp.frames, 0, sizeof(tmp.frames));
	tmp.hist = NULL;
	tmp.cap_hist = 0;
	if (src->n_hist) {
		tmp.hist = hist_alloc(env, src->n_hist, &tmp.cap_hist);
		if (!tmp.hist)
			return -ENOMEM;
		memcpy(tmp.hist, src->hist, src->n_hist * sizeof(*tmp.hist));
	}
	for (uint32_t i = 0; i <= src->curframe; i++) {
		tmp.frames[i] = frame_dup(env, src->frames[i]);
		if (!tmp.frames[i]) {
			state_free(env, &tmp);
			return -ENOMEM;
		}
	}
	*dst = tmp;
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
