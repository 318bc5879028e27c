/* Memory accesses: loads, stores and atomics through context, stack, map value and ring buffer
 * pointers, each checked against its region; stack bytes tracked (spills keep their register,
 * initialised bytes, partial overwrites); no pointer ever stored outside the stack. */
#include <errno.h>
#include <string.h>

#include "ebpf/maps.h"
#include "state.h"

static const int size_bytes[4] = {4, 2, 1, 8};

static uint32_t pc_of(const struct env *env, const struct ebpf_insn *insn)
{
	return (uint32_t)(insn - env->insns);
}

/* What a load of `size` bytes (1, 2, 4, 8) yields: an unknown value of that width, sign- or
 * zero-extended. Its bounds take two rounds of syncing to derive, so each kind is derived once
 * per verification and copied after that (a loop's analysis loads on every iteration). */
static void mark_loaded(struct env *env, struct reg *r, int size, bool sx)
{
	struct reg *t = &env->loaded[__builtin_ctz((unsigned)size)][sx];

	if (t->type == NOT_INIT) {
		if (size == 8) {
			reg_mark_unknown(t);
		} else if (sx) {
			reg_mark_range(t, 0, U64_MAX);
			t->smin = -(1ll << (size * 8 - 1));
			t->smax = (1ll << (size * 8 - 1)) - 1;
			scalar_sync(t);
		} else {
			reg_mark_range(t, 0, (1ull << (size * 8)) - 1);
		}
	}
	*r = *t;
}

static void set_label(struct env *env, struct reg *r, bool local, uint32_t origin)
{
	if (local) {
		r->local = 1;
		r->taint = origin;
	}
	taint_reg_write(env, r);
}

static const char *null_source(const struct reg *r)
{
	return r->type == PTR_TO_MAP_VALUE_OR_NULL ? "map lookup" : "ring buffer reserve";
}

/* Rejects an access through a register that is not a pointer to memory. */
static int bad_ptr(struct env *env, uint32_t pc, uint32_t regno, const struct reg *r, bool write)
{
	char at[64];

	if (r->type == NOT_INIT)
		return verr(env, pc, -EACCES, "R%u !read_ok", regno);
	if (r->type == PTR_TO_MAP_VALUE_OR_NULL || r->type == PTR_TO_MEM_OR_NULL)
		return verr(env, pc, -EACCES,
			    "R%u invalid mem access '%s': %s through R%u which may be NULL (%s at "
			    "%s not checked)",
			    regno, reg_type_str(r->type), write ? "writes" : "reads", regno,
			    null_source(r), insn_line_prefix(env, r->origin, at, sizeof(at)));
	return verr(env, pc, -EACCES, "R%u invalid mem access '%s'", regno, reg_type_str(r->type));
}

/* --- context ------------------------------------------------------------------------------ */

static const struct ebpf_ctx_field *ctx_field(const struct env *env, int64_t off, int size)
{
	if (!env->type)
		return NULL;
	for (uint32_t i = 0; i < env->type->n_fields; i++) {
		const struct ebpf_ctx_field *f = &env->type->fields[i];
		if (off >= f->off && off + size <= (int64_t)f->off + f->size)
			return f;
	}
	return NULL;
}

/* The field that starts at off and ends at or before end (whole inside the access), or NULL. */
static const struct ebpf_ctx_field *ctx_field_at(const struct env *env, int64_t off, int64_t end)
{
	for (uint32_t i = 0; env->type && i < env->type->n_fields; i++) {
		const struct ebpf_ctx_field *f = &env->type->fields[i];
		if (f->off == off && (int64_t)f->off + f->size <= end &&
		    !(f->flags & EBPF_CTX_BYTES))
			return f;
	}
	return NULL;
}

/* Adds to *words the context words an access of size bytes at offset o >= 0 may touch
 * (ebpf_verify_stats.ctx_words, ctx_written). */
static void note_words(uint64_t *words, int64_t o, int size)
{
	for (int64_t w = o / 8; w <= (o + size - 1) / 8; w++)
		*words |= 1ull << (w < 63 ? w : 63);
}

/* An aligned access that covers several whole fields back to back, as clang emits for
 * `ctx->algorithm = A; ctx->protocol = P;` (one 8-byte store). Every field must allow the
 * access; each is then checked as if accessed alone. Returns 1 when [o, o + size) is not such a
 * run of fields (the caller reports the access as invalid), 0 or a rejection otherwise. */
static int ctx_span(struct env *env, uint32_t pc, int64_t o, int size, bool write, bool sx,
		    const struct reg *val, struct reg *dst)
{
	const struct ebpf_ctx_field *fs[8];
	int n = 0;
	bool local = false;
	uint32_t origin = pc;

	if (o < 0 || o % size)
		return 1;
	for (int64_t c = o; c < o + size; c += fs[n++]->size)
		if (!(fs[n] = ctx_field_at(env, c, o + size)))
			return 1;
	for (int k = 0; k < n; k++) {
		const struct ebpf_ctx_field *f = fs[k];
		if (write && !(f->flags & EBPF_CTX_WRITE))
			return verr(env, pc, -EACCES,
				    "write to read-only context field `%s` (off=%lld size=%d)",
				    f->name, (long long)o, size);
		if (!write && !(f->flags & EBPF_CTX_READ))
			return verr(env, pc, -EACCES, "read of write-only context field `%s`",
				    f->name);
	}
	for (int k = 0; k < n; k++) {
		const struct ebpf_ctx_field *f = fs[k];
		uint32_t idx = (uint32_t)(f - env->type->fields);
		int err = 0;
		if (write && val && reg_is_ptr(val))
			return verr(env, pc, -EACCES, "leaks addr into ctx field `%s`", f->name);
		if (write && (f->flags & EBPF_CTX_DECISION))
			err = taint_check_decision(env, pc, val, f->name);
		if (err)
			return err;
		if (write)
			continue;
		env->ctx_read |= 1ull << (idx < 63 ? idx : 63);
		if ((f->flags & EBPF_CTX_RANK_LOCAL) && !local) {
			taint_source(env, pc, "ctx->%s", f->name);
			local = true;
		}
	}
	if (!write) {
		note_words(&env->ctx_words, o, size);
		mark_loaded(env, dst, size, sx);
		set_label(env, dst, local, origin);
	}
	return 0;
}

static int ctx_access(struct env *env, uint32_t pc, uint32_t regno, int16_t off, int size,
		      bool write, bool sx, const struct reg *val, struct reg *dst)
{
	const struct reg *p = &cur_regs(env)[regno];
	const struct ebpf_ctx_field *f;
	uint32_t idx;
	int64_t o;

	if (!tnum_is_const(p->var_off))
		return verr(
		    env, pc, -EACCES, "variable ctx access var_off=(0x%llx; 0x%llx) disallowed",
		    (unsigned long long)p->var_off.value, (unsigned long long)p->var_off.mask);
	o = (int64_t)p->off + (int64_t)p->var_off.value + off;
	/* Every store is seen, as every read below: noted before the checks, which reject the
	 * whole program if they reject it. */
	if (write && o >= 0)
		note_words(&env->ctx_written, o, size);
	f = ctx_field(env, o, size);
	if (!f && env->type) {
		int r = ctx_span(env, pc, o, size, write, sx, val, dst);
		if (r <= 0)
			return r;
	}
	if (!f || o < 0)
		return verr(env, pc, -EACCES, "invalid bpf_context access off=%lld size=%d%s",
			    (long long)o, size,
			    env->type && o + size > (int64_t)env->type->ctx_size
				? " (past the end of the context)"
				: "");
	if (o % size && !(f->flags & EBPF_CTX_BYTES))
		return verr(env, pc, -EACCES, "misaligned context access off=%lld size=%d",
			    (long long)o, size);
	if (write && (f->flags & EBPF_CTX_BYTES) && (f->flags & EBPF_CTX_WRITE)) {
		if (val && reg_is_ptr(val))
			return verr(env, pc, -EACCES, "leaks addr into ctx field `%s`", f->name);
		return 0;
	}
	if (write) {
		if (!(f->flags & EBPF_CTX_WRITE))
			return verr(env, pc, -EACCES,
				    "write to read-only context field `%s` (off=%lld size=%d)",
				    f->name, (long long)o, size);
		if (o != f->off || size != f->size)
			return verr(env, pc, -EACCES,
				    "invalid bpf_context write off=%lld size=%d: field `%s` is "
				    "written whole (%u bytes)",
				    (long long)o, size, f->name, f->size);
		if (val && reg_is_ptr(val))
			return verr(env, pc, -EACCES, "leaks addr into ctx field `%s`", f->name);
		if (f->flags & EBPF_CTX_DECISION)
			return taint_check_decision(env, pc, val, f->name);
		return 0;
	}
	if (!(f->flags & EBPF_CTX_READ))
		return verr(env, pc, -EACCES, "read of write-only context field `%s`", f->name);
	/* Every read is seen: pruning skips a path only after an equivalent state (same ctx
	 * offset) went on from the same instruction, so its reads are already recorded. */
	idx = (uint32_t)(f - env->type->fields);
	env->ctx_read |= 1ull << (idx < 63 ? idx : 63);
	note_words(&env->ctx_words, o, size);
	mark_loaded(env, dst, size, sx);
	if (f->flags & EBPF_CTX_RANK_LOCAL)
		taint_source(env, pc, "ctx->%s", f->name);
	set_label(env, dst, !!(f->flags & EBPF_CTX_RANK_LOCAL), pc);
	return 0;
}

/* --- stack -------------------------------------------------------------------------------- */

static void note_depth(struct env *env, uint32_t frameno, int64_t off)
{
	struct frame *f = env->cur.frames[frameno];
	struct subprog *sp = &env->subprogs[f->subprog];

	if ((uint64_t)-off > sp->stack_depth)
		sp->stack_depth = (uint32_t)-off;
}

static uint8_t *stack_byte(struct frame *f, int64_t o, uint32_t *slot)
{
	uint32_t idx = (uint32_t)((-o - 1) / 8);

	*slot = idx;
	if (idx >= f->nslots)
		return NULL;
	return &f->slots[idx].bytes[o + 8 * (int64_t)idx + 8];
}

/* Fixed-offset stack write of `size` bytes at frame offset o. val NULL: imm store of `imm`. */
static int stack_write(struct env *env, uint32_t pc, struct frame *f, int64_t o, int size,
		       const struct reg *val, int32_t imm)
{
	uint32_t idx = (uint32_t)((-o - 1) / 8);
	struct slot *s;
	uint32_t origin = 0;
	bool local, konst;
	struct reg v;

	if (frame_grow(env, f, idx + 1))
		return verr(env, pc, -ENOMEM, "out of memory");
	s = &f->slots[idx];
	if (val) {
		v = *val;
	} else {
		reg_mark_const(&v, (uint64_t)(int64_t)imm);
	}
	if (taint_active(env, &origin) && !v.local) {
		v.local = 1;
		v.taint = origin;
	}
	local = v.local;
	if (size == 8) { /* aligned: a spill, the register keeps its type and bounds */
		s->spill = v;
		for (int b = 0; b < 8; b++)
			s->bytes[b] = STACK_SPILL | (local ? STACK_LOCAL : 0);
		s->taint = v.taint;
		return 0;
	}
	if (reg_is_ptr(&v))
		return verr(env, pc, -EACCES,
			    "invalid size of register spill (%d bytes of a %s pointer)", size,
			    reg_type_str(v.type));
	if (STACK_KIND(s->bytes[0]) == STACK_SPILL) {
		if (reg_is_ptr(&s->spill))
			return verr(env, pc, -EACCES,
				    "attempt to corrupt spilled pointer on stack");
		/* the rest of the spilled scalar stays initialised: its bytes if it was a
		 * constant, else nothing more is known of them */
		konst = scalar_is_const(&s->spill);
		for (int b = 0; b < 8; b++) {
			s->bytes[b] =
			    (konst ? STACK_CONST : STACK_MISC) | (s->bytes[b] & STACK_LOCAL);
			s->val[b] = (uint8_t)(s->spill.var_off.value >> (8 * b));
		}
	}
	konst = scalar_is_const(&v);
	{
		int first = (int)(o + 8 * (int64_t)idx + 8);
		for (int b = first; b < first + size; b++) {
			s->bytes[b] =
			    (konst ? STACK_CONST : STACK_MISC) | (local ? STACK_LOCAL : 0);
			s->val[b] = (uint8_t)(v.var_off.value >> (8 * (b - first)));
		}
	}
	if (local)
		s->taint = v.taint;
	return 0;
}

/* Can bytes [lo, hi) of frame f be read as data? Sets *local when any is rank-local, and
 * *konst (with the little-endian value in *value) when every byte is known. */
static int stack_readable(struct env *env, uint32_t pc, struct frame *f, int64_t lo, int64_t hi,
			  bool *konst, uint64_t *value, bool *local, uint32_t *origin,
			  const char *what)
{
	*konst = true;
	*value = 0;
	for (int64_t o = lo; o < hi; o++) {
		uint32_t idx;
		uint8_t *b = stack_byte(f, o, &idx);
		uint8_t k = b ? STACK_KIND(*b) : STACK_INVALID;
		const struct slot *s = b ? &f->slots[idx] : NULL;
		int byte = (int)(o + 8 * (int64_t)idx + 8);

		if (k == STACK_INVALID)
			return verr(env, pc, -EACCES,
				    "invalid read from stack off %lld+%lld size %lld%s (byte "
				    "fp%lld never written%s)",
				    (long long)lo, 0ll, (long long)(hi - lo), what, (long long)o,
				    *what == ' ' && strstr(what, "helper")
					? "; struct padding? initialise the whole object, e.g. "
					  "with __builtin_memset"
					: "");
		if (k == STACK_SPILL && reg_is_ptr(&s->spill))
			return verr(
			    env, pc, -EACCES,
			    "invalid size of register fill: part of a spilled %s pointer at fp%lld",
			    reg_type_str(s->spill.type), (long long)-(8ll * idx + 8));
		if (k == STACK_CONST && o - lo < 8)
			*value |= (uint64_t)s->val[byte] << (8 * (o - lo));
		else if (k == STACK_SPILL && scalar_is_const(&s->spill) && o - lo < 8)
			*value |= ((s->spill.var_off.value >> (8 * byte)) & 0xff) << (8 * (o - lo));
		else
			*konst = false;
		if (*b & STACK_LOCAL) {
			*local = true;
			*origin = s->taint;
		}
	}
	return 0;
}

static int stack_read(struct env *env, uint32_t pc, struct frame *f, int64_t o, int size, bool sx,
		      struct reg *dst)
{
	uint32_t idx, origin = 0;
	uint8_t *b = stack_byte(f, o, &idx);
	bool konst, local = false;
	uint64_t x;
	int err;

	if (size == 8 && b && STACK_KIND(*b) == STACK_SPILL) {
		*dst = f->slots[idx].spill;
		taint_reg_write(env, dst);
		return 0;
	}
	err = stack_readable(env, pc, f, o, o + size, &konst, &x, &local, &origin, "");
	if (err)
		return err;
	if (konst) {
		if (sx && size < 8 && (x >> (size * 8 - 1)) & 1)
			x |= ~0ull << (size * 8);
		reg_mark_const(dst, x);
	} else {
		mark_loaded(env, dst, size, sx);
	}
	set_label(env, dst, local, origin);
	return 0;
}

static int stack_access(struct env *env, uint32_t pc, uint32_t regno, int16_t off, int size,
			bool write, bool sx, const struct reg *val, int32_t imm, struct reg *dst)
{
	const struct reg *p = &cur_regs(env)[regno];
	struct frame *f = env->cur.frames[p->frameno];
	int64_t lo, hi;

	if (!tnum_is_const(p->var_off)) {
		bool konst, local = false;
		uint32_t origin = 0;
		uint64_t x;
		int err;

		if (write)
			return verr(env, pc, -EACCES,
				    "variable-offset stack write through R%u disallowed (use a "
				    "constant offset)",
				    regno);
		if (p->smin < -MAX_VAR_OFF || p->smax > MAX_VAR_OFF)
			return verr(env, pc, -EACCES, "R%u unbounded stack access", regno);
		lo = (int64_t)p->off + p->smin + off;
		hi = (int64_t)p->off + p->smax + off + size;
		if (lo < -EBPF_STACK_SIZE || hi > 0)
			return verr(env, pc, -EACCES,
				    "invalid variable-offset read from stack R%u var_off=[%lld, "
				    "%lld] off=%d size=%d",
				    regno, (long long)p->smin, (long long)p->smax, p->off + off,
				    size);
		note_depth(env, p->frameno, lo);
		err = stack_readable(env, pc, f, lo, hi, &konst, &x, &local, &origin,
				     " (variable offset)");
		if (err)
			return err;
		mark_loaded(env, dst, size, sx);
		set_label(env, dst, local || p->local, local ? origin : p->taint);
		return 0;
	}
	lo = (int64_t)p->off + (int64_t)p->var_off.value + off;
	if (lo < -EBPF_STACK_SIZE || lo + size > 0)
		return verr(env, pc, -EACCES, "invalid %s stack R%u off=%lld size=%d",
			    write ? "write to" : "read from", regno, (long long)lo, size);
	if (lo % size)
		return verr(env, pc, -EACCES, "misaligned stack access off %lld size %d",
			    (long long)lo, size);
	note_depth(env, p->frameno, lo);
	/* spills, fills and narrow constants: precision follows values through the slot */
	hist_note_slot(env, p->frameno, (uint32_t)((-lo - 1) / 8));
	if (write)
		return stack_write(env, pc, f, lo, size, val, imm);
	return stack_read(env, pc, f, lo, size, sx, dst);
}

/* --- map values and ring buffer records ---------------------------------------------------- */

/* Range check of [ptr + off, ptr + off + size) against [0, region). */
static int region_check(struct env *env, uint32_t pc, uint32_t regno, const struct reg *p,
			int64_t off, uint64_t size, uint64_t region, const char *what)
{
	int64_t lo;
	uint64_t hi;

	if (p->smin < -MAX_VAR_OFF || (int64_t)p->off + off + p->smin < 0) {
		lo = p->smin < -MAX_VAR_OFF ? p->smin : (int64_t)p->off + off + p->smin;
		if (!tnum_is_const(p->var_off))
			return verr(env, pc, -EACCES,
				    "R%u min value is negative, either use unsigned index or do a "
				    "if (index >=0) check (%s, off=%lld)",
				    regno, what, (long long)lo);
		return verr(env, pc, -EACCES, "invalid access to %s, size=%llu off=%lld size=%llu",
			    what, (unsigned long long)region, (long long)lo,
			    (unsigned long long)size);
	}
	if (p->umax > (uint64_t)MAX_VAR_OFF)
		return verr(
		    env, pc, -EACCES,
		    "R%u unbounded memory access, make sure to bounds check any such access",
		    regno);
	lo = (int64_t)p->off + off + p->smin;
	hi = (uint64_t)((int64_t)p->off + off + (int64_t)p->umax) + size;
	if ((int64_t)p->off + off + (int64_t)p->umax < 0 || hi > region) {
		if (!tnum_is_const(p->var_off))
			return verr(env, pc, -EACCES,
				    "R%u max value is outside of the allowed memory range (%s, "
				    "size=%llu, offset up to %llu, access size %llu)",
				    regno, what, (unsigned long long)region,
				    (unsigned long long)((int64_t)p->off + off + (int64_t)p->umax),
				    (unsigned long long)size);
		return verr(env, pc, -EACCES, "invalid access to %s, size=%llu off=%lld size=%llu",
			    what, (unsigned long long)region, (long long)lo,
			    (unsigned long long)size);
	}
	return 0;
}

/* A read of a frozen (read-only) map's value at a known offset yields a known constant. */
static bool rodata_const(struct env *env, const struct reg *p, int16_t off, int size, bool sx,
			 struct reg *dst)
{
	struct ebpf_map *m = env_map(env, p->map_idx);
	uint32_t key = 0;
	const uint8_t *v;
	uint64_t x = 0;

	if (!map_is_rdonly(env, p->map_idx) || ebpf_map__type(m) != EBPF_MAP_TYPE_ARRAY ||
	    !tnum_is_const(p->var_off) || ebpf_map__key_size(m) != 4)
		return false;
	v = ebpf_map__lookup_elem(m, &key);
	if (!v)
		return false;
	memcpy(&x, v + p->off + (int64_t)p->var_off.value + off, (size_t)size);
	if (sx && size < 8 && (x >> (size * 8 - 1)) & 1)
		x |= ~0ull << (size * 8);
	reg_mark_const(dst, x);
	return true;
}

static int mapval_access(struct env *env, uint32_t pc, uint32_t regno, int16_t off, int size,
			 bool write, bool sx, const struct reg *val, struct reg *dst)
{
	const struct reg *p = &cur_regs(env)[regno];
	struct ebpf_map *m = env_map(env, p->map_idx);
	uint32_t vs = ebpf_map__value_size(m);
	int err;

	err = region_check(env, pc, regno, p, off, (uint64_t)size, vs, "map value");
	if (err)
		return err;
	if (write) {
		if (map_is_rdonly(env, p->map_idx))
			return verr(
			    env, pc, -EACCES,
			    "write into map forbidden: map %u (%s) is read-only for programs",
			    p->map_idx, ebpf_map__name(m) ? ebpf_map__name(m) : "?");
		if (val && reg_is_ptr(val))
			return verr(env, pc, -EACCES, "R%u leaks addr into map",
				    env->insns[pc].src_reg);
		map_mark_written(env, p->map_idx, pc);
		return taint_check_map_write(env, pc, p->map_idx, val, p);
	}
	if (!rodata_const(env, p, off, size, sx, dst))
		mark_loaded(env, dst, size, sx);
	if (map_is_local(env, p->map_idx))
		taint_source_map(env, pc, p->map_idx, "rank-local map");
	set_label(env, dst, map_is_local(env, p->map_idx) || p->local, p->local ? p->taint : pc);
	return 0;
}

static int mem_access(struct env *env, uint32_t pc, uint32_t regno, int16_t off, int size,
		      bool write, bool sx, const struct reg *val, struct reg *dst)
{
	const struct reg *p = &cur_regs(env)[regno];
	int err =
	    region_check(env, pc, regno, p, off, (uint64_t)size, p->mem_size, "ring buffer record");

	if (err)
		return err;
	if (write) {
		if (val && reg_is_ptr(val))
			return verr(env, pc, -EACCES, "R%u leaks addr into ring buffer",
				    env->insns[pc].src_reg);
		return 0;
	}
	mark_loaded(env, dst, size, sx);
	set_label(env, dst, p->local, p->taint);
	return 0;
}

/* One access; val is the stored register (NULL for an immediate store of imm). */
static int access(struct env *env, uint32_t pc, uint32_t regno, int16_t off, int size, bool write,
		  bool sx, const struct reg *val, int32_t imm, struct reg *dst)
{
	const struct reg *p = &cur_regs(env)[regno];

	switch (p->type) {
	case PTR_TO_CTX:
		return ctx_access(env, pc, regno, off, size, write, sx, val, dst);
	case PTR_TO_STACK:
		return stack_access(env, pc, regno, off, size, write, sx, val, imm, dst);
	case PTR_TO_MAP_VALUE:
		return mapval_access(env, pc, regno, off, size, write, sx, val, dst);
	case PTR_TO_MEM:
		return mem_access(env, pc, regno, off, size, write, sx, val, dst);
	default:
		return bad_ptr(env, pc, regno, p, write);
	}
}

/* What load pc reads on this path, merged with the paths before (ebpf_verify_opts.ctx_off). An
 * access the checks then reject ends the verification, so only accepted loads are reported. */
static void note_ldx(struct env *env, uint32_t pc, const struct reg *p, int16_t off)
{
	int32_t now = LDX_OTHER, *seen = &env->aux[pc].ldx_ctx;
	if (p->type == PTR_TO_CTX && tnum_is_const(p->var_off)) {
		int64_t o = (int64_t)p->off + (int64_t)p->var_off.value + off;
		now = o >= 0 && o < INT32_MAX - 2 ? LDX_CTX(o) : LDX_MIXED;
	}
	if (*seen == LDX_UNSEEN)
		*seen = now;
	else if (*seen != now)
		*seen = LDX_MIXED;
}

int check_ldx(struct env *env, const struct ebpf_insn *insn)
{
	uint32_t pc = pc_of(env, insn);
	int size = size_bytes[EBPF_SIZE(insn->code) >> 3];
	bool sx = EBPF_MODE(insn->code) == EBPF_MEMSX;
	struct reg dst;
	int err;

	reg_mark_unknown(&dst);
	note_ldx(env, pc, &cur_regs(env)[insn->src_reg], insn->off);
	err = access(env, pc, insn->src_reg, insn->off, size, false, sx, NULL, 0, &dst);
	if (err)
		return err;
	cur_regs(env)[insn->dst_reg] = dst;
	return 0;
}

int check_store(struct env *env, const struct ebpf_insn *insn)
{
	uint32_t pc = pc_of(env, insn);
	int size = size_bytes[EBPF_SIZE(insn->code) >> 3];
	struct reg *regs = cur_regs(env);
	struct reg tmp;

	if (EBPF_CLASS(insn->code) == EBPF_STX) {
		if (regs[insn->src_reg].type == NOT_INIT)
			return verr(env, pc, -EACCES, "R%u !read_ok", insn->src_reg);

		tmp = regs[insn->src_reg];
		return access(env, pc, insn->dst_reg, insn->off, size, true, false, &tmp, 0, NULL);
	}
	reg_mark_const(&tmp, (uint64_t)(int64_t)insn->imm);
	if (regs[insn->dst_reg].type == PTR_TO_STACK)
		return access(env, pc, insn->dst_reg, insn->off, size, true, false, NULL, insn->imm,
			      NULL);
	return access(env, pc, insn->dst_reg, insn->off, size, true, false, &tmp, 0, NULL);
}

int check_atomic(struct env *env, const struct ebpf_insn *insn)
{
	uint32_t pc = pc_of(env, insn);
	int size = size_bytes[EBPF_SIZE(insn->code) >> 3];
	struct reg *regs = cur_regs(env), *p = &regs[insn->dst_reg], val, old;
	int err;

	if (regs[insn->src_reg].type == NOT_INIT)
		return verr(env, pc, -EACCES, "R%u !read_ok", insn->src_reg);
	if (reg_is_ptr(&regs[insn->src_reg]))
		return verr(env, pc, -EACCES, "R%u leaks addr into mem", insn->src_reg);
	if (insn->imm == EBPF_CMPXCHG) {
		if (regs[0].type == NOT_INIT)
			return verr(env, pc, -EACCES, "R0 !read_ok");
		if (reg_is_ptr(&regs[0]))
			return verr(env, pc, -EACCES, "R0 leaks addr into mem");
	}
	if (p->type == PTR_TO_CTX && tnum_is_const(p->var_off)) {
		const struct ebpf_ctx_field *f =
		    ctx_field(env, (int64_t)p->off + (int64_t)p->var_off.value + insn->off, size);
		if (f && (f->flags & EBPF_CTX_BYTES) && (f->flags & EBPF_CTX_WRITE))
			goto ok; /* plain memory */
	}
	if (p->type != PTR_TO_STACK && p->type != PTR_TO_MAP_VALUE)
		return p->type == NOT_INIT || p->type == PTR_TO_MAP_VALUE_OR_NULL ||
			       p->type == PTR_TO_MEM_OR_NULL || p->type == SCALAR
			   ? bad_ptr(env, pc, insn->dst_reg, p, true)
			   : verr(env, pc, -EACCES, "BPF_ATOMIC stores into R%u %s is not allowed",
				  insn->dst_reg, reg_type_str(p->type));
ok:
	/* atomics need natural alignment (Linux's rule too): a locked access that splits a cache
	 * line is slow everywhere and raises SIGBUS where split-lock detection is fatal */
	if (((int64_t)p->off + insn->off + (int64_t)p->var_off.value) & (size - 1) ||
	    (p->var_off.mask & (uint64_t)(size - 1)))
		return verr(env, pc, -EACCES, "misaligned atomic access through R%u off=%d size=%d",
			    insn->dst_reg, p->off + insn->off, size);
	/* read the old value, then write an unknown one carrying both labels */
	reg_mark_unknown(&old);
	err = access(env, pc, insn->dst_reg, insn->off, size, false, false, NULL, 0, &old);
	if (err)
		return err;
	if (reg_is_ptr(&old))
		return verr(env, pc, -EACCES, "BPF_ATOMIC on a spilled %s pointer is not allowed",
			    reg_type_str(old.type));
	reg_mark_unknown(&val);
	if (size == 4)
		reg_mark_range(&val, 0, U32_MAX);
	val.local =
	    old.local | regs[insn->src_reg].local | (insn->imm == EBPF_CMPXCHG ? regs[0].local : 0);
	val.taint = old.local ? old.taint : regs[insn->src_reg].taint;
	err = access(env, pc, insn->dst_reg, insn->off, size, true, false, &val, 0, NULL);
	if (err)
		return err;
	if (size == 4 && !scalar_is_const(&old))
		reg_mark_range(&old, 0, U32_MAX), old.local = val.local, old.taint = val.taint;
	if (insn->imm == EBPF_CMPXCHG)
		regs[0] = old;
	else if (insn->imm & EBPF_FETCH)
		regs[insn->src_reg] = old;
	return 0;
}

int check_helper_mem(struct env *env, uint32_t pc, uint32_t regno, uint64_t size, bool *local)
{
	struct reg *p = &cur_regs(env)[regno];
	uint32_t origin = 0;
	uint64_t value;
	bool konst;

	switch (p->type) {
	case PTR_TO_STACK: {
		int64_t lo, hi;
		if (p->smin < -MAX_VAR_OFF || p->smax > MAX_VAR_OFF || size > EBPF_STACK_SIZE)
			return verr(env, pc, -EACCES,
				    "invalid indirect access to stack R%u size %llu", regno,
				    (unsigned long long)size);
		lo = (int64_t)p->off + p->smin;
		hi = (int64_t)p->off + p->smax + (int64_t)size;
		if (lo < -EBPF_STACK_SIZE || hi > 0)
			return verr(env, pc, -EACCES,
				    "invalid indirect read from stack R%u off %lld+%lld size %llu",
				    regno, (long long)p->off, (long long)p->smin,
				    (unsigned long long)size);
		note_depth(env, p->frameno, lo);
		if (p->local)
			*local = true;
		return stack_readable(env, pc, env->cur.frames[p->frameno], lo, hi, &konst, &value,
				      local, &origin, " (helper argument)");
	}
	case PTR_TO_MAP_VALUE:
		if (map_is_local(env, p->map_idx) || p->local)
			*local = true;
		return region_check(env, pc, regno, p, 0, size,
				    ebpf_map__value_size(env_map(env, p->map_idx)), "map value");
	case PTR_TO_MEM:
		if (p->local)
			*local = true;
		return region_check(env, pc, regno, p, 0, size, p->mem_size, "ring buffer record");
	case NOT_INIT:
		return verr(env, pc, -EACCES, "R%u !read_ok", regno);
	case PTR_TO_MAP_VALUE_OR_NULL:
	case PTR_TO_MEM_OR_NULL:
		return bad_ptr(env, pc, regno, p, false);
	default:
		return verr(env, pc, -EACCES, "R%u type=%s expected=fp, map_value, mem", regno,
			    reg_type_str(p->type));
	}
}
