/* Maps exported as metrics (ebpf_object_map__export): from the BTF of the key and the value,
 * the integer fields the runtime turns into labels (key) and metrics (value). Checked once, at
 * open, so that a policy whose exported map cannot be rendered never loads: the key is an
 * integer or a struct of integers and integer arrays, the value an integer or a struct of
 * integers; no bitfields, floats, pointers or nested structs; a member's name must not start
 * with "__" (Prometheus reserves it); members whose name starts with '_' are padding and left
 * out; at most EBPF_MAP_FIELDS_MAX fields each. Only maps whose elements the runtime can read
 * one by one are accepted (hash, array, LRU hash and their per-CPU kinds, summed over CPUs). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "loader.h"

/* An integer type (int, enum, through typedefs and qualifiers) of 1, 2, 4 or 8 bytes. */
static int int_type(const struct ldr_btf *btf, uint32_t id, uint32_t *size, uint32_t *is_signed)
{
	struct ldr_btf_type t;
	if (ldr_btf_skip_mods(btf, id, &id) || ldr_btf_type(btf, id, &t))
		return -EINVAL;
	if (t.kind == LDR_BTF_KIND_ENUM || t.kind == LDR_BTF_KIND_ENUM64) {
		*size = t.size_or_type;
		*is_signed = 0;
	} else if (t.kind == LDR_BTF_KIND_INT) {
		uint32_t enc = ebpf_le32(t.extra);
		if ((enc & 0xff) != t.size_or_type * 8 || ((enc >> 16) & 0xff) != 0)
			return -EINVAL; /* a bitfield's base, or padding bits */
		*size = t.size_or_type;
		*is_signed = (enc >> 24) & 1u;
	} else {
		return -EINVAL;
	}
	return *size == 1 || *size == 2 || *size == 4 || *size == 8 ? 0 : -EINVAL;
}

/* One member (or the whole scalar) as a field. arrays: integer arrays are accepted. */
static int field(const struct ldr_btf *btf, uint32_t id, int arrays, struct ebpf_map_field *f)
{
	struct ldr_btf_type t;
	uint32_t base = id;
	f->count = 1;
	if (arrays && !ldr_btf_skip_mods(btf, id, &base) && !ldr_btf_type(btf, base, &t) &&
	    t.kind == LDR_BTF_KIND_ARRAY) {
		f->count = ebpf_le32(t.extra + 8);
		base = ebpf_le32(t.extra);
		if (!f->count || f->count > 64)
			return -EINVAL;
	}
	return int_type(btf, base, &f->size, &f->is_signed);
}

static int fields(struct ebpf_object_map *m, const struct ldr_btf *btf, int value, uint32_t id,
		  char *err, size_t err_len)
{
	const char *what = value ? "value" : "key";
	struct ebpf_map_field *out = m->fields[value];
	struct ldr_btf_type t;
	uint32_t sid;
	if (ldr_btf_skip_mods(btf, id, &sid) || ldr_btf_type(btf, sid, &t))
		return ldr_err(err, err_len, EINVAL, "map '%s': exported %s has no BTF type",
			       m->name, what);
	if (t.kind != LDR_BTF_KIND_STRUCT) {
		struct ebpf_map_field *f = &out[0];
		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", what);
		if (field(btf, id, !value, f))
			return ldr_err(err, err_len, EINVAL,
				       "map '%s': exported %s is not an integer or a struct of "
				       "integers",
				       m->name, what);
		m->n_fields[value] = 1;
		return 0;
	}
	for (uint32_t i = 0; i < t.vlen; i++) {
		const uint8_t *mem = t.extra + 12 * i;
		const char *mn = ldr_btf_str(btf, ebpf_le32(mem));
		uint32_t off = ebpf_le32(mem + 8);
		if (!mn || !mn[0])
			return ldr_err(err, err_len, EINVAL,
				       "map '%s': exported %s has an unnamed member", m->name,
				       what);
		if (!strncmp(mn, "__", 2))
			return ldr_err(err, err_len, EINVAL,
				       "map '%s': exported %s member '%s': names starting with "
				       "\"__\" are reserved",
				       m->name, what, mn);
		if (mn[0] == '_')
			continue; /* padding */
		if (m->n_fields[value] == EBPF_MAP_FIELDS_MAX)
			return ldr_err(err, err_len, EINVAL,
				       "map '%s': exported %s has more than %u fields", m->name,
				       what, EBPF_MAP_FIELDS_MAX);
		if (strlen(mn) >= EBPF_MAP_FIELD_NAME_LEN)
			return ldr_err(err, err_len, EINVAL,
				       "map '%s': exported %s member '%s': name longer than %u",
				       m->name, what, mn, EBPF_MAP_FIELD_NAME_LEN - 1);
		struct ebpf_map_field *f = &out[m->n_fields[value]];
		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", mn);
		f->off = off / 8;
		if (off % 8 || field(btf, ebpf_le32(mem + 4), !value, f))
			return ldr_err(err, err_len, EINVAL,
				       "map '%s': exported %s member '%s' is not an integer%s",
				       m->name, what, mn, value ? "" : " or an integer array");
		m->n_fields[value]++;
	}
	if (!m->n_fields[value] && value)
		return ldr_err(err, err_len, EINVAL, "map '%s': exported value has no fields",
			       m->name);
	return 0;
}

int ldr_map_export(struct ebpf_object_map *m, const struct ldr_btf *btf, uint32_t kind,
		   uint32_t key_type, uint32_t value_type, char *err, size_t err_len)
{
	if (kind != EBPF_MAP_EXPORT_GAUGE && kind != EBPF_MAP_EXPORT_COUNTER)
		return ldr_err(err, err_len, EINVAL,
			       "map '%s': ncclbpf_export = %u (1: gauges, 2: counters)", m->name,
			       kind);
	switch (m->def.type) {
	case EBPF_MAP_TYPE_HASH:
	case EBPF_MAP_TYPE_ARRAY:
	case EBPF_MAP_TYPE_PERCPU_HASH:
	case EBPF_MAP_TYPE_PERCPU_ARRAY:
	case EBPF_MAP_TYPE_LRU_HASH:
		break;
	default:
		return ldr_err(err, err_len, EINVAL,
			       "map '%s': a map of type %u cannot be exported (hash, array, LRU "
			       "hash and per-CPU ones can)",
			       m->name, m->def.type);
	}
	if (!key_type || !value_type)
		return ldr_err(err, err_len, EINVAL,
			       "map '%s': an exported map declares its key and value with "
			       "__type()",
			       m->name);
	m->n_fields[0] = m->n_fields[1] = 0;
	int r = fields(m, btf, 0, key_type, err, err_len);
	if (!r)
		r = fields(m, btf, 1, value_type, err, err_len);
	if (!r)
		m->export_kind = kind;
	return r;
}
