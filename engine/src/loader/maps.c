/* The map table of an object: BTF-defined maps from .maps (in symbol offset order), then one
 * single-element array per global data section (.rodata*, .data*, .bss*), in section order.
 * Programs refer to maps by index into this table. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "loader.h"

static int has_prefix(const char *s, const char *p)
{
	size_t n = strlen(p);
	return !strncmp(s, p, n) && (s[n] == 0 || s[n] == '.');
}

/* Kind of a global data section, or -1. */
static int data_kind(const struct ldr_sec *s)
{
	if (!(s->flags & LDR_SHF_ALLOC) || (s->flags & LDR_SHF_EXECINSTR))
		return -1;
	if (s->type != LDR_SHT_PROGBITS && s->type != LDR_SHT_NOBITS)
		return -1;
	if (has_prefix(s->name, ".rodata"))
		return EBPF_OBJECT_MAP_RODATA;
	if (has_prefix(s->name, ".data"))
		return EBPF_OBJECT_MAP_DATA;
	if (has_prefix(s->name, ".bss"))
		return EBPF_OBJECT_MAP_BSS;
	return -1;
}

static int add_map(struct ebpf_object *obj, const char *name, char *err, size_t err_len,
		   struct ebpf_object_map **out)
{
	if (obj->n_maps >= EBPF_OBJECT_MAX_MAPS)
		return ldr_err(err, err_len, E2BIG, "more than %u maps (at '%s')",
			       EBPF_OBJECT_MAX_MAPS, name);
	if (obj->n_maps >= obj->maps_room) /* count_maps and the collection disagree: a bug */
		return ldr_err(err, err_len, EINVAL, "map '%s' was not counted", name);
	if (strlen(name) >= LDR_MAP_NAME_LEN)
		return ldr_err(err, err_len, EINVAL, "map name '%.40s...' longer than %u bytes",
			       name, LDR_MAP_NAME_LEN - 1);
	for (uint32_t i = 0; i < obj->n_maps; i++)
		if (!strcmp(obj->maps[i].name, name))
			return ldr_err(err, err_len, EINVAL, "two maps named '%s'", name);
	struct ebpf_object_map *m = &obj->maps[obj->n_maps];
	memset(m, 0, sizeof(*m));
	strcpy(m->name, name);
	m->index = obj->n_maps++;
	m->def.sz = sizeof(m->def);
	m->def.name = m->name;
	m->obj = obj;
	*out = m;
	return 0;
}

/* The integer of a __uint(name, N) member: pointer to an array of N ints. */
static int btf_uint_member(const struct ldr_btf *btf, uint32_t type, uint32_t *val)
{
	struct ldr_btf_type t;
	if (ldr_btf_skip_mods(btf, type, &type) || ldr_btf_type(btf, type, &t) ||
	    t.kind != LDR_BTF_KIND_PTR)
		return -EINVAL;
	if (ldr_btf_skip_mods(btf, t.size_or_type, &type) || ldr_btf_type(btf, type, &t) ||
	    t.kind != LDR_BTF_KIND_ARRAY)
		return -EINVAL;
	*val = ebpf_le32(t.extra + 8);
	return 0;
}

/* The pointed-to type (T) of a __type(name, T) member and its size. */
static int btf_type_member(const struct ldr_btf *btf, uint32_t type, uint32_t *id, uint64_t *size)
{
	struct ldr_btf_type t;
	if (ldr_btf_skip_mods(btf, type, &type) || ldr_btf_type(btf, type, &t) ||
	    t.kind != LDR_BTF_KIND_PTR)
		return -EINVAL;
	*id = t.size_or_type;
	return ldr_btf_size(btf, t.size_or_type, size);
}

/* Id of the DATASEC describing a global data section (its variables), or 0. */
static uint32_t find_datasec(const struct ldr_btf *btf, const char *sec)
{
	struct ldr_btf_type t;
	for (uint32_t id = 1; btf->offs && id <= btf->n_types; id++) {
		const char *n;
		if (!ldr_btf_type(btf, id, &t) && t.kind == LDR_BTF_KIND_DATASEC &&
		    (n = ldr_btf_str(btf, t.name_off)) && !strcmp(n, sec))
			return id;
	}
	return 0;
}

/* Id of the DATASEC ".maps", or 0. */
static uint32_t find_maps_datasec(const struct ldr_btf *btf)
{
	struct ldr_btf_type t;
	for (uint32_t id = 1; id <= btf->n_types; id++) {
		if (ldr_btf_type(btf, id, &t) || t.kind != LDR_BTF_KIND_DATASEC)
			continue;
		const char *sn = ldr_btf_str(btf, t.name_off);
		if (sn && !strcmp(sn, ".maps"))
			return id;
	}
	return 0;
}

/* Finds the VAR named name in the DATASEC ".maps" and returns its (struct) type. */
static int find_map_var(const struct ldr_btf *btf, uint32_t datasec, const char *name,
			uint32_t *type)
{
	struct ldr_btf_type t, v;
	if (!ldr_btf_type(btf, datasec, &t)) {
		for (uint32_t i = 0; i < t.vlen; i++) {
			uint32_t vid = ebpf_le32(t.extra + 12 * i);
			if (ldr_btf_type(btf, vid, &v) || v.kind != LDR_BTF_KIND_VAR)
				continue;
			const char *vn = ldr_btf_str(btf, v.name_off);
			if (vn && !strcmp(vn, name)) {
				*type = v.size_or_type;
				return 0;
			}
		}
	}
	return -ENOENT;
}

static int parse_btf_map(struct ebpf_object_map *m, const struct ldr_btf *btf, uint32_t datasec,
			 char *err, size_t err_len)
{
	uint32_t type;
	struct ldr_btf_type t;
	if (find_map_var(btf, datasec, m->name, &type))
		return ldr_err(err, err_len, EINVAL,
			       "section '.maps', symbol '%s': no BTF description (compile with -g)",
			       m->name);
	if (ldr_btf_skip_mods(btf, type, &type) || ldr_btf_type(btf, type, &t) ||
	    t.kind != LDR_BTF_KIND_STRUCT)
		return ldr_err(err, err_len, EINVAL,
			       "section '.maps', symbol '%s': BTF type is not a struct", m->name);
	int have_type = 0, have_entries = 0;
	uint64_t key_sz = 0, val_sz = 0;
	int have_key = 0, have_val = 0;
	uint32_t export_kind = 0;
	for (uint32_t i = 0; i < t.vlen; i++) {
		const uint8_t *mem = t.extra + 12 * i;
		const char *mn = ldr_btf_str(btf, ebpf_le32(mem));
		uint32_t mt = ebpf_le32(mem + 4), val = 0;
		uint64_t sz = 0;
		if (!mn)
			return ldr_err(err, err_len, EINVAL,
				       "section '.maps', map '%s': member %u has a bad name",
				       m->name, i);
		int is_uint = !strcmp(mn, "type") || !strcmp(mn, "max_entries") ||
			      !strcmp(mn, "map_flags") || !strcmp(mn, "key_size") ||
			      !strcmp(mn, "value_size") || !strcmp(mn, "pinning") ||
			      !strcmp(mn, "numa_node") || !strcmp(mn, "map_extra") ||
			      !strcmp(mn, "ncclbpf_export");
		if (is_uint && btf_uint_member(btf, mt, &val))
			return ldr_err(err, err_len, EINVAL,
				       "section '.maps', map '%s': '%s' is not declared with "
				       "__uint()",
				       m->name, mn);
		if (!strcmp(mn, "type")) {
			m->def.type = val;
			have_type = 1;
		} else if (!strcmp(mn, "max_entries")) {
			m->def.max_entries = val;
			have_entries = 1;
		} else if (!strcmp(mn, "map_flags")) {
			m->def.flags = val;
		} else if (!strcmp(mn, "key_size") || !strcmp(mn, "value_size")) {
			int is_key = mn[0] == 'k';
			uint64_t *dst = is_key ? &key_sz : &val_sz;
			int *have = is_key ? &have_key : &have_val;
			if (*have && *dst != val)
				return ldr_err(err, err_len, EINVAL,
					       "section '.maps', map '%s': %s %u contradicts its "
					       "type's size %llu",
					       m->name, mn, val, (unsigned long long)*dst);
			*dst = val;
			*have = 1;
		} else if (!strcmp(mn, "key") || !strcmp(mn, "value")) {
			int is_key = mn[0] == 'k';
			uint64_t *dst = is_key ? &key_sz : &val_sz;
			int *have = is_key ? &have_key : &have_val;
			if (btf_type_member(btf, mt, is_key ? &m->key_type : &m->value_type, &sz))
				return ldr_err(
				    err, err_len, EINVAL,
				    "section '.maps', map '%s': '%s' is not declared with "
				    "__type() of a sized type",
				    m->name, mn);
			if (*have && *dst != sz)
				return ldr_err(err, err_len, EINVAL,
					       "section '.maps', map '%s': %s type size %llu "
					       "contradicts %s_size %llu",
					       m->name, mn, (unsigned long long)sz, mn,
					       (unsigned long long)*dst);
			*dst = sz;
			*have = 1;
		} else if (!strcmp(mn, "ncclbpf_export")) {
			export_kind = val;
		} else if (!strcmp(mn, "pinning") || !strcmp(mn, "numa_node") ||
			   !strcmp(mn, "map_extra")) {
			if (val)
				return ldr_err(err, err_len, EINVAL,
					       "section '.maps', map '%s': '%s' = %u not supported",
					       m->name, mn, val);
		} else if (!strcmp(mn, "values")) {
			return ldr_err(err, err_len, EINVAL,
				       "section '.maps', map '%s': initial 'values' (map-in-map, "
				       "program arrays) not supported",
				       m->name);
		} else {
			return ldr_err(err, err_len, EINVAL,
				       "section '.maps', map '%s': unknown attribute '%s'", m->name,
				       mn);
		}
	}
	if (!have_type || !have_entries)
		return ldr_err(err, err_len, EINVAL,
			       "section '.maps', map '%s': missing __uint(%s, ...)", m->name,
			       have_type ? "max_entries" : "type");
	if (key_sz > UINT32_MAX || val_sz > UINT32_MAX)
		return ldr_err(err, err_len, EINVAL,
			       "section '.maps', map '%s': key/value too large", m->name);
	m->def.key_size = (uint32_t)key_sz;
	m->def.value_size = (uint32_t)val_sz;
	if (export_kind)
		return ldr_map_export(m, btf, export_kind, m->key_type, m->value_type, err,
				      err_len);
	return 0;
}

static int cmp_map_off(const void *a, const void *b)
{
	const struct ebpf_object_map *x = a, *y = b;
	return x->sym_off < y->sym_off ? -1 : x->sym_off > y->sym_off;
}

/* The two sources of maps, one test each for count_maps and ldr_collect_maps: a map symbol of
 * section .maps (msec), and a global data section with contents. */
static bool is_map_symbol(const struct ldr_sym *sym, uint32_t msec)
{
	return sym->shndx == msec && (sym->type == LDR_STT_OBJECT || sym->type == LDR_STT_NOTYPE);
}

static bool is_data_map(const struct ldr_sec *s)
{
	return data_kind(s) >= 0 && s->size;
}

/* How many maps ldr_collect_maps can add, at most EBPF_OBJECT_MAX_MAPS: the symbols of .maps it
 * considers and the global data sections, counted with the same filters (a symbol it then
 * refuses only makes the count an upper bound). */
static uint32_t count_maps(const struct ldr_elf *elf)
{
	uint32_t n = 0, msec = ldr_elf_find_sec(elf, ".maps");
	for (uint32_t i = 1; msec && i < elf->n_syms; i++) {
		struct ldr_sym sym;
		if (ldr_elf_sym(elf, i, &sym, NULL, 0))
			break; /* the collection reports it */
		n += is_map_symbol(&sym, msec);
	}
	for (uint32_t i = 1; i < elf->n_secs; i++)
		n += is_data_map(&elf->secs[i]);
	return n < EBPF_OBJECT_MAX_MAPS ? n : EBPF_OBJECT_MAX_MAPS;
}

int ldr_collect_maps(struct ebpf_object *obj, const struct ldr_elf *elf, const struct ldr_btf *btf,
		     char *err, size_t err_len)
{
	int ret;
	/* Room for the maps this object declares (at most EBPF_OBJECT_MAX_MAPS: add_map refuses
	 * more), not for the maximum: a map entry is over 2 KiB, and every open (the loader's
	 * mutation tests open hundreds of thousands) would otherwise clear 64 of them. */
	uint32_t room = count_maps(elf);
	obj->maps = calloc(room ? room : 1, sizeof(*obj->maps));
	if (!obj->maps)
		return ldr_err(err, err_len, ENOMEM, "out of memory");
	obj->maps_room = room;

	if (ldr_elf_find_sec(elf, "maps"))
		return ldr_err(err, err_len, EINVAL,
			       "section 'maps': legacy map definitions not supported, declare maps "
			       "in SEC(\".maps\") with __uint/__type");
	uint32_t msec = ldr_elf_find_sec(elf, ".maps");
	if (msec) {
		const struct ldr_sec *s = &elf->secs[msec];
		uint32_t datasec = btf->offs ? find_maps_datasec(btf) : 0;
		for (uint32_t i = 1; i < elf->n_syms; i++) {
			struct ldr_sym sym;
			struct ebpf_object_map *m;
			if ((ret = ldr_elf_sym(elf, i, &sym, err, err_len)))
				return ret;
			if (!is_map_symbol(&sym, msec))
				continue;
			if (!sym.name[0] || sym.value >= s->size)
				return ldr_err(
				    err, err_len, EINVAL,
				    "section '.maps', symbol %u ('%s') at offset 0x%llx: "
				    "invalid map symbol",
				    i, sym.name, (unsigned long long)sym.value);
			if (!btf->offs)
				return ldr_err(
				    err, err_len, EINVAL,
				    "section '.maps', map '%s': no .BTF section (compile "
				    "with -g)",
				    sym.name);
			for (uint32_t j = 0; j < obj->n_maps; j++)
				if (obj->maps[j].sym_off == sym.value)
					return ldr_err(err, err_len, EINVAL,
						       "section '.maps': maps '%s' and '%s' share "
						       "offset 0x%llx",
						       obj->maps[j].name, sym.name,
						       (unsigned long long)sym.value);
			if ((ret = add_map(obj, sym.name, err, err_len, &m)))
				return ret;
			m->kind = EBPF_OBJECT_MAP_BTF;
			m->sec = msec;
			m->sym_off = sym.value;
			if ((ret = parse_btf_map(m, btf, datasec, err, err_len)))
				return ret;
		}
		qsort(obj->maps, obj->n_maps, sizeof(*obj->maps), cmp_map_off);
		for (uint32_t j = 0; j < obj->n_maps; j++) {
			obj->maps[j].index = j;
			obj->maps[j].def.name = obj->maps[j].name;
		}
	}

	for (uint32_t i = 1; i < elf->n_secs; i++) {
		const struct ldr_sec *s = &elf->secs[i];
		int kind = data_kind(s);
		struct ebpf_object_map *m;
		if (!is_data_map(s))
			continue;
		if (s->size > EBPF_OBJECT_MAX_DATA)
			return ldr_err(err, err_len, E2BIG,
				       "section '%s': %llu bytes of global data (limit %u)",
				       s->name, (unsigned long long)s->size, EBPF_OBJECT_MAX_DATA);
		if ((ret = add_map(obj, s->name, err, err_len, &m)))
			return ret;
		m->kind = kind;
		m->sec = i;
		m->def.type = EBPF_MAP_TYPE_ARRAY;
		m->def.key_size = 4;
		m->def.value_size = (uint32_t)s->size;
		m->def.max_entries = 1;
		m->def.flags = kind == EBPF_OBJECT_MAP_RODATA ? EBPF_MAP_F_RDONLY_PROG : 0;
		m->value_type = find_datasec(btf, s->name);
		m->init = calloc(1, s->size);
		if (!m->init)
			return ldr_err(err, err_len, ENOMEM, "out of memory");
		if (s->data)
			memcpy(m->init, s->data, s->size);
	}
	return 0;
}

int ldr_map_for_sym(const struct ebpf_object *obj, const struct ldr_elf *elf,
		    const struct ldr_sym *sym)
{
	for (uint32_t i = 0; i < obj->n_maps; i++) {
		const struct ebpf_object_map *m = &obj->maps[i];
		if (m->sec != sym->shndx)
			continue;
		if (m->kind != EBPF_OBJECT_MAP_BTF || m->sym_off == sym->value)
			return (int)i;
	}
	return -1;
}
