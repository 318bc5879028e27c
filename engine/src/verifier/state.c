/* Allocation, copying and freeing of abstract states. Frames keep only the stack slots in use,
 * so stored states of small programs stay small. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

struct frame *frame_new(uint32_t callsite, uint32_t subprog)
{
	struct frame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	for (int i = 0; i < EBPF_NREGS; i++)
		reg_mark_not_init(&f->regs[i]);
	f->callsite = callsite;
	f->subprog = subprog;
	return f;
}

int frame_grow(struct frame *f, uint32_t nslots)
{
	struct slot *s;

	if (nslots <= f->nslots)
		return 0;
	s = realloc(f->slots, nslots * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s + f->nslots, 0, (nslots - f->nslots) * sizeof(*s));
	f->slots = s;
	f->nslots = (uint16_t)nslots;
	return 0;
}

static void frame_free(struct frame *f)
{
	if (f) {
		free(f->slots);
		free(f);
	}
}

static struct frame *frame_dup(const struct frame *src)
{
	struct frame *f = malloc(sizeof(*f));

	if (!f)
		return NULL;
	*f = *src;
	f->slots = NULL;
	if (src->nslots) {
		f->slots = malloc(src->nslots * sizeof(*f->slots));
		if (!f->slots) {
			free(f);
			return NULL;
		}
		memcpy(f->slots, src->slots, src->nslots * sizeof(*f->slots));
	}
	return f;
}

void state_free(struct vstate *st)
{
	free(st->hist);
	st->hist = NULL;
	st->n_hist = st->cap_hist = 0;
	for (uint32_t i = 0; i < EBPF_MAX_FRAMES; i++) {
		frame_free(st->frames[i]);
		st->frames[i] = NULL;
	}
}

int state_copy(struct vstate *dst, const struct vstate *src)
{
	struct vstate tmp = *src;

	memset(tmp.frames, 0, sizeof(tmp.frames));
	tmp.hist = NULL;
	tmp.cap_hist = 0;
	if (src->n_hist) {
		tmp.hist = malloc(src->n_hist * sizeof(*tmp.hist));
		if (!tmp.hist)
			return -ENOMEM;
		memcpy(tmp.hist, src->hist, src->n_hist * sizeof(*tmp.hist));
		tmp.cap_hist = src->n_hist;
	}
	for (uint32_t i = 0; i <= src->curframe; i++) {
		tmp.frames[i] = frame_dup(src->frames[i]);
		if (!tmp.frames[i]) {
			state_free(&tmp);
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
	f = frame_new(UINT32_MAX, 0);
	if (!f)
		return -ENOMEM;
	st->frames[0] = f;
	/* r1 = ctx, r10 = frame pointer; both pointers with a zero variable offset */
	reg_mark_const(&f->regs[EBPF_REG_1], 0);
	f->regs[EBPF_REG_1].type = PTR_TO_CTX;
	reg_mark_const(&f->regs[EBPF_REG_10], 0);
	f->regs[EBPF_REG_10].type = PTR_TO_STACK;
	(void)env;
	return 0;
}
