/* Program assembly. Each function symbol of a program section is one program; its code is the
 * function followed by every function it calls, transitively (static subprograms in .text, or
 * other functions), each appended once with the call offsets fixed. Relocations turn map
 * references into EBPF_PSEUDO_MAP_FD and global data references into EBPF_PSEUDO_MAP_VALUE, both
 * with imm = map index. Anything else in a relocation is rejected by name and offset. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ebpf/isa.h"
#include "loader.h"

#define REL_SIZE  16
#define CALL_CODE (EBPF_JMP | EBPF_CALL)

struct func {
	uint32_t sec;
	uint32_t start; /* instruction index in its section */
	uint32_t n;
	const char *name;
};

struct rel {
	uint32_t type;
	uint32_t sym;
};

struct code_sec {
	const struct ldr_sec *s;
	uint32_t idx; /* ELF section index */
	uint32_t n_insns;
	const struct ebpf_prog_type *type; /* NULL for .text */
	struct func *funcs;		   /* sorted by start (points into linker.funcs) */
	uint32_t n_funcs;
	struct rel *rel_at; /* per instruction; type 0 = none */
};

struct linker {
	struct ebpf_object *obj;
	const struct ldr_elf *elf;
	struct code_sec *cs;
	uint32_t n_cs;
	int32_t *sec2cs; /* ELF section index -> cs index, -1 */
	struct func *funcs;
	uint32_t n_funcs;
	char *err;
	size_t err_len;
};

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int find_code_sections(struct linker *L)
{
	const struct ldr_elf *elf = L->elf;
	L->sec2cs = malloc(elf->n_secs * sizeof(*L->sec2cs));
	L->cs = calloc(elf->n_secs, sizeof(*L->cs));
	if (!L->sec2cs || !L->cs)
		return ldr_err(L->err, L->err_len, ENOMEM, "out of memory");
	for (uint32_t i = 0; i < elf->n_secs; i++) {
		const struct ldr_sec *s = &elf->secs[i];
		L->sec2cs[i] = -1;
		if (i == 0 || !(s->flags & LDR_SHF_EXECINSTR))
			continue;
		if (s->type != LDR_SHT_PROGBITS)
			return ldr_err(L->err, L->err_len, EINVAL,
				       "section '%s': executable but has no contents (type %u)",
				       s->name, s->type);
		if (!s->size)
			continue;
		if (s->size % 8)
			return ldr_err(L->err, L->err_len, EINVAL,
				       "section '%s': size %llu is not a multiple of 8 (eBPF "
				       "instructions)",
				       s->name, (unsigned long long)s->size);
		if (s->size / 8 > EBPF_MAX_INSNS)
			return ldr_err(L->err, L->err_len, E2BIG,
				       "section '%s': %llu instructions (limit %u)", s->name,
				       (unsigned long long)(s->size / 8), EBPF_MAX_INSNS);
		struct code_sec *c = &L->cs[L->n_cs];
		c->s = s;
		c->idx = i;
		c->n_insns = (uint32_t)(s->size / 8);
		if (strcmp(s->name, ".text")) {
			c->type = ebpf_platform_type_by_section(L->obj->platform, s->name);
			if (!c->type) {
				char known[512];
				ebpf_platform_sections(L->obj->platform, known, sizeof(known));
				return ldr_err(L->err, L->err_len, EINVAL,
					       "section '%s': unknown program type (known: %s; "
					       "helper functions belong in .text)",
					       s->name, known);
			}
		}
		c->rel_at = calloc(c->n_insns, sizeof(*c->rel_at));
		if (!c->rel_at)
			return ldr_err(L->err, L->err_len, ENOMEM, "out of memory");
		L->sec2cs[i] = (int32_t)L->n_cs++;
	}
	return 0;
}

static int collect_funcs(struct linker *L)
{
	const struct ldr_elf *elf = L->elf;
	struct ldr_sym sym;
	int ret;
	L->funcs = calloc(elf->n_syms ? elf->n_syms : 1, sizeof(*L->funcs));
	if (!L->funcs)
		return ldr_err(L->err, L->err_len, ENOMEM, "out of memory");
	for (uint32_t i = 1; i < elf->n_syms; i++) {
		if ((ret = ldr_elf_sym(elf, i, &sym, L->err, L->err_len)))
			return ret;
		if (sym.type != LDR_STT_FUNC)
			continue;
		if (sym.shndx >= elf->n_secs || L->sec2cs[sym.shndx] < 0)
			return ldr_err(L->err, L->err_len, EINVAL,
				       "symbol '%s': function outside any code section (section "
				       "index %u; externs not supported)",
				       sym.name, sym.shndx);
		struct code_sec *c = &L->cs[L->sec2cs[sym.shndx]];
		if (sym.value % 8 || sym.size % 8 || !sym.size || sym.value / 8 >= c->n_insns ||
		    sym.size / 8 > c->n_insns - sym.value / 8)
			return ldr_err(L->err, L->err_len, EINVAL,
				       "section '%s', symbol '%s': function at offset 0x%llx size "
				       "%llu outside or misaligned in its section",
				       c->s->name, sym.name, (unsigned long long)sym.value,
				       (unsigned long long)sym.size);
		L->funcs[L->n_funcs++] = (struct func){
		    .sec = sym.shndx,
		    .start = (uint32_t)(sym.value / 8),
		    .n = (uint32_t)(sym.size / 8),
		    .name = sym.name,
		};
	}
	qsort(L->funcs, L->n_funcs, sizeof(*L->funcs), cmp_func);
	for (uint32_t i = 0; i < L->n_funcs; i++) {
		struct func *f = &L->funcs[i];
		struct code_sec *c = &L->cs[L->sec2cs[f->sec]];
		if (!c->funcs)
			c->funcs = f;
		c->n_funcs++;
		if (i && f[-1].sec == f->sec && f[-1].start + f[-1].n > f->start)
			return ldr_err(L->err, L->err_len, EINVAL,
				       "section '%s': functions '%s' and '%s' overlap at insn %u",
				       c->s->name, f[-1].name, f->name, f->start);
	}
	return 0;
}

/* A refused relocation, named by the instruction it stands on. */
__attribute__((format(printf, 4, 5))) static int rel_err(struct linker *L, const struct code_sec *c,
							 uint64_t at, const char *fmt, ...)
{
	char what[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ldr_err(L->err, L->err_len, EINVAL, "section '%s', offset 0x%llx (insn %llu): %s",
		       c->s->name, (unsigned long long)at, (unsigned long long)(at / 8), what);
}

static int collect_relocs(struct linker *L)
{
	const struct ldr_elf *elf = L->elf;
	for (uint32_t i = 1; i < elf->n_secs; i++) {
		const struct ldr_sec *r = &elf->secs[i];
		if (r->type != LDR_SHT_REL && r->type != LDR_SHT_RELA)
			continue;
		if (r->info >= elf->n_secs)
			return ldr_err(L->err, L->err_len, EINVAL,
				       "section '%s': relocates section %u, which does not exist",
				       r->name, r->info);
		const struct ldr_sec *t = &elf->secs[r->info];
		int32_t ci = L->sec2cs[r->info];
		if (ci < 0) {
			/* Debug info and BTF carry relocations for linkers; we do not need them.
			 * Pointers inside maps or global data would need addresses we don't have.
			 */
			if (r->size && (!strcmp(t->name, ".maps") || (t->flags & LDR_SHF_ALLOC)))
				return ldr_err(
				    L->err, L->err_len, EINVAL,
				    "section '%s': relocations in '%s' (pointers in "
				    "global data or map-in-map initialisers) not supported",
				    r->name, t->name);
			continue;
		}
		struct code_sec *c = &L->cs[ci];
		if (r->type == LDR_SHT_RELA)
			return ldr_err(L->err, L->err_len, EINVAL,
				       "section '%s': RELA relocations for '%s' not supported",
				       r->name, t->name);
		if (r->entsize != REL_SIZE || r->size % REL_SIZE)
			return ldr_err(L->err, L->err_len, EINVAL,
				       "section '%s': entry size %llu / size %llu invalid", r->name,
				       (unsigned long long)r->entsize, (unsigned long long)r->size);
		if (r->link != elf->symtab_idx || !elf->symtab_idx)
			return ldr_err(L->err, L->err_len, EINVAL,
				       "section '%s': symbol table index %u invalid", r->name,
				       r->link);
		for (uint64_t off = 0; off < r->size; off += REL_SIZE) {
			uint64_t at = ebpf_le64(r->data + off), info = ebpf_le64(r->data + off + 8);
			uint32_t type = (uint32_t)info, sym = (uint32_t)(info >> 32);
			if (type == LDR_R_BPF_NONE)
				continue;
			if (at % 8 || at / 8 >= c->n_insns)
				return ldr_err(
				    L->err, L->err_len, EINVAL,
				    "section '%s': relocation at offset 0x%llx outside or "
				    "misaligned in '%s'",
				    r->name, (unsigned long long)at, c->s->name);
			if (type != LDR_R_BPF_64_64 && type != LDR_R_BPF_64_32)
				return rel_err(L, c, at, "relocation type %u not supported", type);
			if (sym == 0 || sym >= elf->n_syms)
				return rel_err(L, c, at, "relocation against unknown symbol %u",
					       sym);
			struct rel *slot = &c->rel_at[at / 8];
			if (slot->type)
				return rel_err(L, c, at, "two relocations");
			*slot = (struct rel){type, sym};
		}
	}
	return 0;
}

/* The function of section sec that starts at insn, or NULL. */
static const struct func *func_at(const struct linker *L, uint32_t sec, uint32_t insn)
{
	const struct code_sec *c = &L->cs[L->sec2cs[sec]];
	uint32_t lo = 0, hi = c->n_funcs;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->funcs[mid].start < insn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n_funcs && c->funcs[lo].start == insn ? &c->funcs[lo] : NULL;
}

/* Per-program assembly state. */
struct asm_state {
	struct linker *L;
	const struct func *entry;
	uint32_t *base; /* per function (index into L->funcs): position in out, UINT32_MAX */
	uint32_t *order;
	uint32_t n_order;
	struct ebpf_insn *out;
	uint32_t n_out, cap;
};

static int append_func(struct asm_state *A, const struct func *g)
{
	struct linker *L = A->L;
	uint32_t gi = (uint32_t)(g - L->funcs);
	if (A->n_out > EBPF_MAX_INSNS - g->n)
		return ldr_err(L->err, L->err_len, E2BIG,
			       "program '%s': more than %u instructions with its subprograms",
			       A->entry->name, EBPF_MAX_INSNS);
	if (A->n_out + g->n > A->cap) {
		uint32_t cap = A->cap ? A->cap : 64;
		while (cap < A->n_out + g->n)
			cap *= 2;
		void *p = realloc(A->out, (size_t)cap * sizeof(*A->out));
		if (!p)
			return ldr_err(L->err, L->err_len, ENOMEM, "out of memory");
		A->out = p;
		A->cap = cap;
	}
	const struct ldr_sec *s = L->cs[L->sec2cs[g->sec]].s;
	memcpy(A->out + A->n_out, s->data + (uint64_t)g->start * 8, (size_t)g->n * 8);
	A->base[gi] = A->n_out;
	A->order[A->n_order++] = gi;
	A->n_out += g->n;
	return 0;
}

#define AT_FMT		  "section '%s', function '%s', insn %u (offset 0x%x): "
#define AT_ARGS(c, f, pc) (c)->s->name, (f)->name, (pc), (pc)*8u

static int reloc_ld64(struct asm_state *A, const struct code_sec *c, const struct func *f,
		      uint32_t pc, struct ebpf_insn *insn, const struct rel *r)
{
	struct linker *L = A->L;
	struct ldr_sym sym;
	int ret = ldr_elf_sym(L->elf, r->sym, &sym, L->err, L->err_len);
	if (ret)
		return ret;
	if (r->type != LDR_R_BPF_64_64)
		return ldr_err(L->err, L->err_len, EINVAL,
			       AT_FMT "relocation type %u on a 64-bit immediate load",
			       AT_ARGS(c, f, pc), r->type);
	if (sym.shndx == LDR_SHN_UNDEF)
		return ldr_err(L->err, L->err_len, EINVAL,
			       AT_FMT "reference to undefined symbol '%s' (extern variables, "
				      "kconfig and ksyms not supported)",
			       AT_ARGS(c, f, pc), sym.name);
	if (sym.shndx >= L->elf->n_secs)
		return ldr_err(L->err, L->err_len, EINVAL,
			       AT_FMT "symbol '%s' has special section index 0x%x",
			       AT_ARGS(c, f, pc), sym.name, sym.shndx);
	if (L->sec2cs[sym.shndx] >= 0) {
		/* Name the function rather than its section when the symbol is the section's. */
		uint64_t at = sym.value + (uint64_t)(uint32_t)insn[0].imm;
		const struct func *g = at % 8 || at / 8 > UINT32_MAX
					   ? NULL
					   : func_at(L, sym.shndx, (uint32_t)(at / 8));
		return ldr_err(L->err, L->err_len, EINVAL,
			       AT_FMT "address of function '%s' taken (callbacks not supported)",
			       AT_ARGS(c, f, pc), g ? g->name : sym.name);
	}
	int mi = ldr_map_for_sym(L->obj, L->elf, &sym);
	if (mi < 0)
		return ldr_err(L->err, L->err_len, EINVAL,
			       AT_FMT
			       "reference to '%s' in section '%s', which is neither a map nor "
			       "global data",
			       AT_ARGS(c, f, pc), sym.name, L->elf->secs[sym.shndx].name);
	const struct ebpf_object_map *m = &L->obj->maps[mi];
	uint64_t addend = (uint64_t)(uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32;
	if (m->kind == EBPF_OBJECT_MAP_BTF) {
		if (addend)
			return ldr_err(L->err, L->err_len, EINVAL,
				       AT_FMT "reference into the middle of map '%s' (+%llu)",
				       AT_ARGS(c, f, pc), m->name, (unsigned long long)addend);
		insn[0].src_reg = EBPF_PSEUDO_MAP_FD;
		insn[0].imm = mi;
		insn[1].imm = 0;
		return 0;
	}
	uint64_t off = sym.value + addend;
	if (off >= m->def.value_size)
		return ldr_err(L->err, L->err_len, EINVAL,
			       AT_FMT "reference to '%s'+%llu outside '%s' (%u bytes)",
			       AT_ARGS(c, f, pc), sym.name, (unsigned long long)addend, m->name,
			       m->def.value_size);
	insn[0].src_reg = EBPF_PSEUDO_MAP_VALUE;
	insn[0].imm = mi;
	insn[1].imm = (int32_t)off;
	return 0;
}

static int link_call(struct asm_state *A, const struct code_sec *c, const struct func *f,
		     uint32_t pc, uint32_t out_pc, const struct rel *r)
{
	struct linker *L = A->L;
	struct ebpf_insn *insn = &A->out[out_pc];
	uint32_t tsec = c->idx;
	int64_t target;
	if (r->type) {
		struct ldr_sym sym;
		int ret = ldr_elf_sym(L->elf, r->sym, &sym, L->err, L->err_len);
		if (ret)
			return ret;
		if (r->type != LDR_R_BPF_64_32)
			return ldr_err(L->err, L->err_len, EINVAL,
				       AT_FMT "relocation type %u on a call", AT_ARGS(c, f, pc),
				       r->type);
		if (sym.shndx == LDR_SHN_UNDEF || sym.shndx >= L->elf->n_secs ||
		    L->sec2cs[sym.shndx] < 0)
			return ldr_err(L->err, L->err_len, EINVAL,
				       AT_FMT
				       "call to '%s', which is not a function of this object "
				       "(extern functions and kfuncs not supported)",
				       AT_ARGS(c, f, pc), sym.name);
		if (sym.value % 8)
			return ldr_err(L->err, L->err_len, EINVAL,
				       AT_FMT "call relocation against misaligned symbol '%s'",
				       AT_ARGS(c, f, pc), sym.name);
		tsec = sym.shndx;
		target = (int64_t)(sym.value / 8) + insn->imm + 1;
	} else {
		target = (int64_t)f->start + (pc - f->start) + insn->imm + 1;
	}
	const struct code_sec *tc = &L->cs[L->sec2cs[tsec]];
	const struct func *g = NULL;
	if (target >= 0 && target < tc->n_insns)
		g = func_at(L, tsec, (uint32_t)target);
	if (!g)
		return ldr_err(L->err, L->err_len, EINVAL,
			       AT_FMT "call target insn %lld of section '%s' is not the start of a "
				      "function",
			       AT_ARGS(c, f, pc), (long long)target, tc->s->name);
	uint32_t gi = (uint32_t)(g - L->funcs);
	if (A->base[gi] == UINT32_MAX) {
		int ret = append_func(A, g);
		if (ret)
			return ret;
		insn = &A->out[out_pc]; /* append_func may have moved the buffer */
	}
	insn->imm = (int32_t)((int64_t)A->base[gi] - ((int64_t)out_pc + 1));
	return 0;
}

/* Fixes up function fi (already copied at base) in place. */
static int link_func(struct asm_state *A, uint32_t fi)
{
	struct linker *L = A->L;
	const struct func *f = &L->funcs[fi];
	const struct code_sec *c = &L->cs[L->sec2cs[f->sec]];
	uint32_t base = A->base[fi];
	for (uint32_t j = 0; j < f->n; j++) {
		uint32_t pc = f->start + j, out_pc = base + j;
		const struct rel *r = &c->rel_at[pc];
		struct ebpf_insn *insn = &A->out[out_pc];
		uint8_t cls = EBPF_CLASS(insn->code);
		int ret = 0;
		if (ebpf_insn_is_lddw(insn)) {
			if (j + 1 >= f->n)
				return ldr_err(L->err, L->err_len, EINVAL,
					       AT_FMT
					       "64-bit immediate load truncated by the end of "
					       "the function",
					       AT_ARGS(c, f, pc));
			if (c->rel_at[pc + 1].type)
				return ldr_err(L->err, L->err_len, EINVAL,
					       AT_FMT "relocation on the second half of a 64-bit "
						      "immediate load",
					       AT_ARGS(c, f, pc + 1));
			if (r->type)
				ret = reloc_ld64(A, c, f, pc, insn, r);
			else if (insn->src_reg)
				ret =
				    ldr_err(L->err, L->err_len, EINVAL,
					    AT_FMT "pseudo 64-bit load (src %u) without relocation",
					    AT_ARGS(c, f, pc), insn->src_reg);
			if (ret)
				return ret;
			j++;
			continue;
		}
		if (insn->code == CALL_CODE) {
			if (insn->src_reg == EBPF_PSEUDO_CALL) {
				ret = link_call(A, c, f, pc, out_pc, r);
			} else if (r->type) {
				ret = ldr_err(L->err, L->err_len, EINVAL,
					      AT_FMT "relocation on a helper call",
					      AT_ARGS(c, f, pc));
			} else if (insn->src_reg == EBPF_PSEUDO_KFUNC) {
				ret = ldr_err(L->err, L->err_len, EINVAL,
					      AT_FMT "kfunc call (BTF id %d) not supported",
					      AT_ARGS(c, f, pc), insn->imm);
			}
			if (ret)
				return ret;
			continue;
		}
		if (r->type)
			return ldr_err(L->err, L->err_len, EINVAL,
				       AT_FMT
				       "relocation on an instruction (opcode 0x%02x) that is "
				       "neither a 64-bit load nor a call",
				       AT_ARGS(c, f, pc), insn->code);
		/* Jumps must stay inside their function: functions are moved apart. */
		if ((cls == EBPF_JMP || cls == EBPF_JMP32) && EBPF_OP(insn->code) != EBPF_CALL &&
		    EBPF_OP(insn->code) != EBPF_EXIT) {
			int64_t off = (cls == EBPF_JMP32 && EBPF_OP(insn->code) == EBPF_JA)
					  ? insn->imm
					  : insn->off;
			int64_t t = (int64_t)j + off + 1;
			if (t < 0 || t >= f->n)
				return ldr_err(L->err, L->err_len, EINVAL,
					       AT_FMT "jump to insn %lld leaves the function",
					       AT_ARGS(c, f, pc), (long long)f->start + t);
		}
	}
	return 0;
}

static uint32_t lines_lower(const struct ldr_line *lines, uint32_t n, uint32_t sec, uint32_t insn)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (lines[mid].sec < sec || (lines[mid].sec == sec && lines[mid].insn < insn))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int attach_lines(struct asm_state *A, struct ebpf_program *p, const struct ldr_line *lines,
			uint32_t n_lines)
{
	struct linker *L = A->L;
	uint32_t total = 0;
	for (int pass = 0; pass < 2; pass++) {
		uint32_t k = 0;
		for (uint32_t o = 0; o < A->n_order; o++) {
			const struct func *f = &L->funcs[A->order[o]];
			uint32_t i = lines_lower(lines, n_lines, f->sec, f->start);
			for (; i < n_lines && lines[i].sec == f->sec &&
			       lines[i].insn < f->start + f->n;
			     i++) {
				if (pass) {
					p->lines[k] = (struct ebpf_line_info){
					    .insn = A->base[A->order[o]] + lines[i].insn - f->start,
					    .line = lines[i].line,
					    .col = lines[i].col,
					    .file = lines[i].file,
					    .src = lines[i].src,
					};
				}
				k++;
			}
		}
		if (!pass) {
			total = k;
			if (!total)
				return 0;
			p->lines = calloc(total, sizeof(*p->lines));
			if (!p->lines)
				return ldr_err(L->err, L->err_len, ENOMEM, "out of memory");
		}
	}
	p->n_lines = total;
	return 0;
}

static int assemble(struct linker *L, const struct code_sec *c, const struct func *entry,
		    struct ebpf_program *p, const struct ldr_line *lines, uint32_t n_lines)
{
	struct asm_state A = {.L = L, .entry = entry};
	int ret;
	A.base = malloc(L->n_funcs * sizeof(*A.base));
	A.order = malloc(L->n_funcs * sizeof(*A.order));
	if (!A.base || !A.order) {
		ret = ldr_err(L->err, L->err_len, ENOMEM, "out of memory");
		goto out;
	}
	memset(A.base, 0xff, L->n_funcs * sizeof(*A.base));
	if ((ret = append_func(&A, entry)))
		goto out;
	for (uint32_t o = 0; o < A.n_order; o++)
		if ((ret = link_func(&A, A.order[o])))
			goto out;
	p->name = strdup(entry->name);
	p->section = strdup(c->s->name);
	if (!p->name || !p->section) {
		ret = ldr_err(L->err, L->err_len, ENOMEM, "out of memory");
		goto out;
	}
	p->funcs = calloc(A.n_order, sizeof(*p->funcs));
	if (!p->funcs) {
		ret = ldr_err(L->err, L->err_len, ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t o = 0; o < A.n_order; o++, p->n_funcs++) {
		const struct func *g = &L->funcs[A.order[o]];
		p->funcs[o].name = strdup(g->name);
		p->funcs[o].start = A.base[A.order[o]];
		p->funcs[o].len = g->n;
		if (!p->funcs[o].name) {
			ret = ldr_err(L->err, L->err_len, ENOMEM, "out of memory");
			goto out;
		}
	}
	p->type = c->type;
	p->entry_insns = entry->n;
	p->n_insns = A.n_out;
	p->insns = A.out;
	A.out = NULL;
	ret = attach_lines(&A, p, lines, n_lines);
out:
	free(A.out);
	free(A.base);
	free(A.order);
	return ret;
}

int ldr_link_programs(struct ebpf_object *obj, const struct ldr_elf *elf,
		      const struct ldr_line *lines, uint32_t n_lines, char *err, size_t err_len)
{
	struct linker L = {.obj = obj, .elf = elf, .err = err, .err_len = err_len};
	uint32_t n_progs = 0;
	uint64_t total = 0;
	int ret;
	if ((ret = find_code_sections(&L)) || (ret = collect_funcs(&L)) ||
	    (ret = collect_relocs(&L)))
		goto out;
	for (uint32_t i = 0; i < L.n_cs; i++) {
		if (!L.cs[i].type)
			continue;
		if (!L.cs[i].n_funcs) {
			ret = ldr_err(err, err_len, EINVAL,
				      "section '%s': code without a function symbol",
				      L.cs[i].s->name);
			goto out;
		}
		n_progs += L.cs[i].n_funcs;
		if (n_progs > EBPF_OBJECT_MAX_PROGS) {
			ret = ldr_err(err, err_len, E2BIG, "more than %u programs",
				      EBPF_OBJECT_MAX_PROGS);
			goto out;
		}
	}
	obj->progs = calloc(n_progs ? n_progs : 1, sizeof(*obj->progs));
	if (!obj->progs) {
		ret = ldr_err(err, err_len, ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < L.n_cs; i++) {
		const struct code_sec *c = &L.cs[i];
		if (!c->type)
			continue;
		for (uint32_t k = 0; k < c->n_funcs; k++) {
			struct ebpf_program *p = &obj->progs[obj->n_progs++];
			ret = assemble(&L, c, &c->funcs[k], p, lines, n_lines);
			if (ret)
				goto out;
			total += (uint64_t)p->n_insns + p->n_lines;
			if (total > EBPF_OBJECT_MAX_TOTAL_INSNS) {
				ret = ldr_err(err, err_len, E2BIG,
					      "section '%s', program '%s': the programs' code with "
					      "their subprograms exceeds %u instructions",
					      c->s->name, p->name, EBPF_OBJECT_MAX_TOTAL_INSNS);
				goto out;
			}
		}
	}
out:
	for (uint32_t i = 0; L.cs && i < L.n_cs; i++)
		free(L.cs[i].rel_at);
	free(L.cs);
	free(L.sec2cs);
	free(L.funcs);
	return ret;
}
