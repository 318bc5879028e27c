/* The generator's map and helper patterns (GEN_MAP_LOOKUP, GEN_MAP_UPDATE, GEN_RINGBUF,
 * GEN_NONDET; gen.h). Each pattern is self-contained: keys and values live in the function's
 * stack window (initialised by its prologue), a returned pointer lives in a callee-saved register
 * (r6-r8, so that helper calls keep it) and is reset to a scalar before the pattern ends, on
 * every path. With gen_opts.unsafe_pct some patterns leave out what makes them safe: the NULL
 * check, the bounds of the value or record, the submit of a record, the record's end of life. */
#include <errno.h>

#include "gen_internal.h"
#include "ebpf/helpers.h"
#include "ebpf/maps.h"

const struct gen_map gen_default_maps[] = {
    {EBPF_MAP_TYPE_ARRAY, 4, 48, 4},
    {EBPF_MAP_TYPE_ARRAY, 4, 64, 1}, /* global data: direct value loads */
    {EBPF_MAP_TYPE_HASH, 8, 16, 8},
    {EBPF_MAP_TYPE_PERCPU_ARRAY, 4, 24, 2},
    {EBPF_MAP_TYPE_LRU_HASH, 4, 32, 4},
    {EBPF_MAP_TYPE_RINGBUF, 0, 0, 4096},
};
const uint32_t gen_n_default_maps = sizeof(gen_default_maps) / sizeof(gen_default_maps[0]);

static int is_array(const struct gen_map *m)
{
	return m->type == EBPF_MAP_TYPE_ARRAY || m->type == EBPF_MAP_TYPE_PERCPU_ARRAY;
}

int gen__maps_from_opts(const struct gen_opts *o, struct gen_prog *out)
{
	const struct gen_map *maps = o->maps ? o->maps : gen_default_maps;
	uint32_t n = o->maps ? o->n_maps : gen_n_default_maps;

	if (n > GEN_MAX_MAPS)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		const struct gen_map *m = &maps[i];
		if (m->type == EBPF_MAP_TYPE_RINGBUF)
			continue;
		if ((m->key_size != 4 && m->key_size != 8) || (is_array(m) && m->key_size != 4) ||
		    m->value_size < 8 || m->value_size > 512 || !m->max_entries)
			return -EINVAL;
	}
	memcpy(out->maps, maps, n * sizeof(*maps));
	out->n_maps = n;
	return 0;
}

/* --- building blocks ------------------------------------------------------------------------ */

enum map_use {
	USE_KV,	    /* lookup / update / delete: any map with keys */
	USE_DIRECT, /* direct value load: one-element array */
	USE_RING,   /* ring buffer */
};

static int usable(const struct gen_map *m, enum map_use use)
{
	switch (use) {
	case USE_KV:
		return m->type != EBPF_MAP_TYPE_RINGBUF;
	case USE_DIRECT:
		return m->type == EBPF_MAP_TYPE_ARRAY && m->max_entries == 1;
	default:
		return m->type == EBPF_MAP_TYPE_RINGBUF;
	}
}

/* A random map of the program fit for use, or -1. */
static int pick_map(struct gen *g, enum map_use use)
{
	int cand[GEN_MAX_MAPS], n = 0;
	for (uint32_t i = 0; i < g->p->n_maps; i++)
		if (usable(&g->p->maps[i], use))
			cand[n++] = (int)i;
	return n ? cand[gen_below(g, (uint32_t)n)] : -1;
}

/* A random 8-byte slot of the stack window: its offset from r10 (negative). */
static int16_t window_slot(struct gen *g, uint32_t min_bytes)
{
	uint32_t lo = (min_bytes + 7) / 8, slots = g->win / 8;
	return (int16_t)(-8 * (int32_t)(lo + gen_below(g, slots - lo + 1)));
}

/* Writes a key for map m into a window slot; returns the slot's offset. Keys mostly hit
 * (indexes below max_entries, small hash keys), sometimes miss. */
static int16_t put_key(struct gen *g, const struct gen_map *m)
{
	int16_t off = window_slot(g, 8);
	uint8_t size = m->key_size == 8 ? EBPF_DW : EBPF_W;
	uint32_t how = gen_below(g, 10);
	if (how < 7)
		gen_emit(g, EBPF_ST | EBPF_MEM | size, EBPF_REG_10, 0, off,
			 (int32_t)gen_below(g, m->max_entries + 2));
	else if (how < 9)
		gen_emit(g, EBPF_ST | EBPF_MEM | size, EBPF_REG_10, 0, off,
			 gen__interesting_imm(g));
	else
		gen_emit(g, EBPF_STX | EBPF_MEM | size, EBPF_REG_10, gen__pick_read(g), off, 0);
	return off;
}

/* r1 = map i (the engine's convention: imm is the index into the program's map table). */
static void load_map(struct gen *g, int reg, int map)
{
	gen_emit_lddw(g, reg, EBPF_PSEUDO_MAP_FD, map, 0);
}

/* dst = r10 + off. */
static void stack_ptr(struct gen *g, int dst, int16_t off)
{
	gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, dst, EBPF_REG_10, 0, 0);
	gen_emit(g, EBPF_ALU64 | EBPF_ADD | EBPF_K, dst, 0, 0, off);
}

/* Calls helper id. Afterwards r1-r5 are dead (those an enclosing loop reads again get a new
 * value) and r0 holds the result (a random scalar after a helper that returns nothing). */
static void call_helper(struct gen *g, int32_t id, int returns_void)
{
	gen_emit(g, EBPF_JMP | EBPF_CALL, 0, EBPF_PSEUDO_HELPER, 0, id);
	g->init &= (uint16_t)~0x3e;
	for (int r = 1; r <= 5; r++)
		if (g->keep & (1u << r))
			gen__set_reg(g, r);
	if (returns_void)
		gen__set_reg(g, 0);
	gen_mark_init(g, 0);
}

/* A callee-saved register for a pointer that must survive helper calls, or -1. */
static int pick_ptr_reg(struct gen *g)
{
	int r = gen__pick_write_from(g, 6);
	return r > 8 ? -1 : r;
}

static void ptr_begin(struct gen *g, int r)
{
	g->ptrs |= (uint16_t)(1u << r);
	gen_mark_init(g, r);
}

/* The pointer's life ends: the register is a scalar again. */
static void ptr_end(struct gen *g, int r)
{
	g->ptrs &= (uint16_t) ~(1u << r);
	gen__set_reg(g, r);
}

/* The forward jump over a pattern's body taken when a pointer is NULL. */
struct skip {
	uint32_t at;	  /* pc of the jump, UINT32_MAX when there is none */
	uint16_t init_at; /* registers readable where it jumps from */
};

/* After `call` with a pointer-or-NULL result: p = r0, then (unless this one is deliberately
 * unsafe) the NULL check, on r0 or p, as `if x == 0 goto skip` or `if x != 0 goto +1; goto skip`.
 * r0 becomes a scalar again. Returns the jump to patch to the end of the pattern. */
static struct skip take_ptr(struct gen *g, int p)
{
	struct skip skip = {UINT32_MAX, 0};
	gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, p, 0, 0, 0);
	ptr_begin(g, p);
	if (!gen_unsafe(g)) {
		int x = gen_chance(g, 50) ? 0 : p;
		skip.at = gen_pc(g);
		skip.init_at = g->init;
		if (gen_chance(g, 70)) {
			gen_emit(g, EBPF_JMP | EBPF_JEQ | EBPF_K, x, 0, 0, 0);
		} else {
			gen_emit(g, EBPF_JMP | EBPF_JNE | EBPF_K, x, 0, 1, 0);
			skip.at = gen_pc(g);
			gen_emit(g, EBPF_JMP | EBPF_JA, 0, 0, 0, 0);
		}
	}
	gen__set_reg(g, 0);
	return skip;
}

/* The end of the pattern: the NULL path joins, with what was readable there. */
static void patch_skip(struct gen *g, struct skip skip)
{
	if (skip.at == UINT32_MAX)
		return;
	gen_patch_fwd(g, skip.at);
	g->init &= skip.init_at;
}

/* --- accesses inside a map value or a ring buffer record ------------------------------------ */

/* The memory a pointer register points into: size bytes; the register is at off + [0, var]. */
struct region_ptr {
	int reg;
	uint32_t size;
	int32_t off;
	uint32_t var;
};

/* gen_addr_fn for accesses through a region_ptr: in bounds, or (unsafe) just outside. */
static int pick_in_region(struct gen *g, void *ctx, int lg, int must_align, int *base, int16_t *off)
{
	const struct region_ptr *rp = ctx;
	int32_t sz = 1 << lg, size = (int32_t)rp->size;
	int32_t last = size - sz - (int32_t)rp->var; /* largest safe start in the region */
	int32_t a;				     /* start of the access in the region */
	if (must_align && rp->var)
		return -1; /* atomics need an aligned, known offset */
	if (gen_unsafe(g)) {
		if (must_align)
			a = gen_chance(g, 60) ? (size / sz + (int32_t)gen_below(g, 2)) * sz : -sz;
		else
			a = gen_chance(g, 60) ? last + 1 + (int32_t)gen_below(g, 8)
					      : -1 - (int32_t)gen_below(g, 8);
	} else {
		if (last < 0)
			return -1;
		a = must_align ? sz * (int32_t)gen_below(g, (uint32_t)(last / sz + 1))
			       : (int32_t)gen_below(g, (uint32_t)last + 1);
	}
	*base = rp->reg;
	*off = (int16_t)(a - rp->off);
	return 0;
}

/* p += constant, or p += (index & mask): moves the pointer inside the region (or, unsafe,
 * lets the mask reach past its end). */
static void move_ptr(struct gen *g, struct region_ptr *rp)
{
	int32_t room = (int32_t)rp->size - rp->off - (int32_t)rp->var - 8;
	if (room <= 0)
		return;
	if (gen_chance(g, 50)) {
		int32_t c = (int32_t)gen_below(g, (uint32_t)room + 1);
		if (rp->off > 0 && gen_chance(g, 30))
			c = -(int32_t)gen_below(g, (uint32_t)rp->off + 1);
		gen_emit(g, EBPF_ALU64 | EBPF_ADD | EBPF_K, rp->reg, 0, 0, c);
		rp->off += c;
		return;
	}
	int t = gen__pick_write_from(g, 0);
	if (t < 0)
		return;
	uint32_t mask = (gen_floor_pow2((uint32_t)room + 1) - 1) >> gen_below(g, 3);
	if (gen_unsafe(g))
		mask = gen_floor_pow2((uint32_t)room + 1) * 2 - 1;
	int idx = gen__pick_read(g);
	if (idx != t)
		gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, t, idx, 0, 0);
	gen_emit(g, (gen_chance(g, 50) ? EBPF_ALU64 : EBPF_ALU) | EBPF_AND | EBPF_K, t, 0, 0,
		 (int32_t)mask);
	gen_mark_init(g, t);
	gen_emit(g, EBPF_ALU64 | EBPF_ADD | EBPF_X, rp->reg, t, 0, 0);
	rp->var += mask;
}

/* n accesses (and, for map values, pointer moves and scalar work in between). */
static void region_accesses(struct gen *g, struct region_ptr *rp, uint32_t n, int may_move)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t w = gen_below(g, 10);
		if (w < 2 && may_move)
			move_ptr(g, rp);
		else if (w < 3)
			gen__alu(g);
		else
			gen__mem_access(g, pick_in_region, rp);
	}
}

/* --- the patterns --------------------------------------------------------------------------- */

/* map_update_elem(map, &key, value, flags) with the value on the stack, or in vp's region when
 * given (a map value from a lookup). */
static void emit_update(struct gen *g, int map, const struct region_ptr *vp)
{
	const struct gen_map *m = &g->p->maps[map];
	int16_t koff = put_key(g, m);
	static const int32_t flags[] = {EBPF_ANY, EBPF_ANY, EBPF_NOEXIST, EBPF_EXIST, 4};
	if (vp && vp->var == 0 && vp->off >= 0 && (uint32_t)vp->off + m->value_size <= vp->size) {
		gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, 3, vp->reg, 0, 0);
	} else {
		int16_t voff;
		uint32_t below_top = (m->value_size - 1) / 8; /* 8-byte slots short of the value */
		if (gen_unsafe(g)) /* the value reaches above the frame */
			voff =
			    below_top ? (int16_t)(-8 * (int32_t)(1 + gen_below(g, below_top))) : -4;
		else if (m->value_size <= g->win)
			voff = window_slot(g, m->value_size);
		else
			return;
		stack_ptr(g, 3, voff);
	}
	load_map(g, 1, map);
	stack_ptr(g, 2, koff);
	gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_K, 4, 0, 0, flags[gen_below(g, 5)]);
	call_helper(g, EBPF_FUNC_map_update_elem, 0);
}

static void emit_update_item(struct gen *g)
{
	int map = pick_map(g, USE_KV);
	if (map >= 0)
		emit_update(g, map, NULL);
}

static void emit_delete(struct gen *g)
{
	int map = pick_map(g, USE_KV);
	if (map < 0)
		return;
	int16_t koff = put_key(g, &g->p->maps[map]);
	load_map(g, 1, map);
	stack_ptr(g, 2, koff);
	call_helper(g, EBPF_FUNC_map_delete_elem, 0);
}

/* p = map_lookup_elem(map, &key); if (p) { accesses to *p, pointer moves, maybe an update
 * with *p as the value } ; or p = &global_data + off (direct value load, no NULL check). */
static void emit_lookup(struct gen *g)
{
	int direct = gen_chance(g, 20);
	int map = pick_map(g, direct ? USE_DIRECT : USE_KV);
	int p = pick_ptr_reg(g);
	if (map < 0 || p < 0)
		return;
	const struct gen_map *m = &g->p->maps[map];
	struct region_ptr rp = {p, m->value_size, 0, 0};
	struct skip skip = {UINT32_MAX, 0};
	if (direct) {
		rp.off = (int32_t)(gen_below(g, m->value_size / 8) * 8);
		gen_emit_lddw(g, p, EBPF_PSEUDO_MAP_VALUE, map, rp.off);
		ptr_begin(g, p);
	} else {
		int16_t koff = put_key(g, m);
		load_map(g, 1, map);
		stack_ptr(g, 2, koff);
		call_helper(g, EBPF_FUNC_map_lookup_elem, 0);
		skip = take_ptr(g, p);
	}
	region_accesses(g, &rp, 1 + gen_below(g, 5), 1);
	if (gen_has(g, GEN_MAP_UPDATE) && gen_chance(g, 25)) {
		int other = pick_map(g, USE_KV);
		if (other >= 0)
			emit_update(g, other, &rp);
		if (gen_chance(g, 50))
			region_accesses(g, &rp, 1, 0); /* the pointer survives the call */
	}
	patch_skip(g, skip);
	ptr_end(g, p);
}

/* p = ringbuf_reserve(rb, size, 0); if (p) { accesses inside the record; submit or discard }.
 * Unsafe variants: no NULL check, accesses past the record, a record never submitted, an
 * access after the submit. */
static void emit_reserve(struct gen *g)
{
	int map = pick_map(g, USE_RING);
	int p = pick_ptr_reg(g);
	if (map < 0 || p < 0)
		return;
	uint32_t size = gen_chance(g, 70) ? 8 * (1 + gen_below(g, 8)) : 1 + gen_below(g, 64);
	struct region_ptr rp = {p, size, 0, 0};
	load_map(g, 1, map);
	gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_K, 2, 0, 0, (int32_t)size);
	gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_K, 3, 0, 0, 0);
	call_helper(g, EBPF_FUNC_ringbuf_reserve, 0);
	struct skip skip = take_ptr(g, p);
	region_accesses(g, &rp, gen_below(g, 5), 0);
	int leak = gen_unsafe(g);
	if (!leak) {
		static const int32_t flags[] = {0, 0, EBPF_RB_NO_WAKEUP, EBPF_RB_FORCE_WAKEUP};
		gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, 1, p, 0, 0);
		gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_K, 2, 0, 0, flags[gen_below(g, 4)]);
		call_helper(
		    g, gen_chance(g, 70) ? EBPF_FUNC_ringbuf_submit : EBPF_FUNC_ringbuf_discard, 1);
		if (gen_unsafe(g)) /* use after submit */
			gen__mem_access(g, pick_in_region, &rp);
	}
	patch_skip(g, skip);
	ptr_end(g, p);
}

/* ringbuf_output(rb, r10 + off, size, 0): size a constant or (x & mask) + 1, the area inside
 * the window (unsafe: reaching above the frame). */
static void emit_output(struct gen *g)
{
	int map = pick_map(g, USE_RING);
	if (map < 0)
		return;
	int16_t off = window_slot(g, 8);
	uint32_t avail = (uint32_t)-off;
	if (gen_unsafe(g))
		avail += 8 * (1 + gen_below(g, 4));
	if (gen_chance(g, 50)) {
		gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_K, 3, 0, 0,
			 (int32_t)(1 + gen_below(g, avail)));
	} else {
		uint32_t mask = gen_floor_pow2(avail) - 1;
		int idx = gen__pick_read(g);
		if (idx != 3)
			gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_X, 3, idx, 0, 0);
		gen_emit(g, EBPF_ALU64 | EBPF_AND | EBPF_K, 3, 0, 0, (int32_t)mask);
		gen_emit(g, EBPF_ALU64 | EBPF_ADD | EBPF_K, 3, 0, 0, 1);
	}
	load_map(g, 1, map);
	stack_ptr(g, 2, off);
	gen_emit(g, EBPF_ALU64 | EBPF_MOV | EBPF_K, 4, 0, 0, 0);
	call_helper(g, EBPF_FUNC_ringbuf_output, 0);
}

static void emit_nondet(struct gen *g)
{
	static const int32_t ids[] = {EBPF_FUNC_ktime_get_ns, EBPF_FUNC_get_prandom_u32,
				      EBPF_FUNC_get_smp_processor_id};
	call_helper(g, ids[gen_below(g, 3)], 0);
}

/* One pattern, chosen by weight among the enabled families. */
void gen__map_item(struct gen *g)
{
	static const struct {
		uint32_t fam, weight;
		void (*emit)(struct gen *g);
	} table[] = {
	    {GEN_MAP_LOOKUP, 6, emit_lookup}, {GEN_MAP_UPDATE, 2, emit_update_item},
	    {GEN_MAP_UPDATE, 1, emit_delete}, {GEN_RINGBUF, 3, emit_reserve},
	    {GEN_RINGBUF, 2, emit_output},    {GEN_NONDET, 1, emit_nondet},
	};
	const uint32_t n = sizeof(table) / sizeof(table[0]);
	uint32_t total = 0, k;
	for (k = 0; k < n; k++)
		total += gen_has(g, table[k].fam) ? table[k].weight : 0;
	if (!total)
		return;
	uint32_t w = gen_below(g, total);
	for (k = 0; k < n; k++) {
		uint32_t wk = gen_has(g, table[k].fam) ? table[k].weight : 0;
		if (w < wk)
			break;
		w -= wk;
	}
	table[k].emit(g);
}
