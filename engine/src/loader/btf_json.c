/* Map keys and values as JSON, typed by the object's BTF (what `bpftool map dump` shows):
 * structs as objects with their fields by name (anonymous members inlined, bitfields
 * extracted), arrays as arrays (char arrays holding a C string as a string), enums by their
 * enumerator's name, integers by their signedness, bools as true/false, global data sections
 * (DATASEC) as objects of their variables. Everything is read within the bytes given; a type
 * that does not fit them, or nests deeper than BTF_JSON_DEPTH, is refused and the caller shows
 * the bytes. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "loader.h"

#define BTF_JSON_DEPTH 32

#define INT_SIGNED 0x1
#define INT_CHAR   0x2
#define INT_BOOL   0x4

struct jout {
	char *buf;
	size_t len, pos; /* pos may pass len: the text did not fit */
};

static void put(struct jout *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct jout *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(o->pos < o->len ? o->buf + o->pos : NULL,
			  o->pos < o->len ? o->len - o->pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

static void put_str(struct jout *o, const char *s, size_t n)
{
	put(o, "\"");
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			put(o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			put(o, "\\u%04x", c);
		else
			put(o, "%c", c);
	}
	put(o, "\"");
}

static void put_hex(struct jout *o, const uint8_t *d, uint64_t n)
{
	put(o, "\"0x");
	for (uint64_t i = n; i-- > 0;) /* little-endian: most significant byte first */
		put(o, "%02x", d[i]);
	put(o, "\"");
}

/* Little-endian unsigned of n <= 8 bytes. */
static uint64_t rd(const uint8_t *d, uint64_t n)
{
	uint64_t v = 0;
	for (uint64_t i = n; i-- > 0;)
		v = (v << 8) | d[i];
	return v;
}

static int64_t sign_extend(uint64_t v, uint32_t bits)
{
	if (bits >= 64)
		return (int64_t)v;
	uint64_t m = 1ull << (bits - 1);
	v &= (1ull << bits) - 1;
	return (int64_t)((v ^ m) - m);
}

/* Bits [bit_off, bit_off + bits) of d (n bytes), little-endian bit order. -1 when outside. */
static int bits_at(const uint8_t *d, uint64_t n, uint64_t bit_off, uint32_t bits, uint64_t *out)
{
	if (!bits || bits > 64 || bit_off + bits > n * 8)
		return -1;
	uint64_t v = 0;
	for (uint32_t i = 0; i < bits; i++) {
		uint64_t b = bit_off + i;
		v |= (uint64_t)((d[b / 8] >> (b % 8)) & 1) << i;
	}
	*out = v;
	return 0;
}

static void put_int(struct jout *o, uint64_t v, uint32_t bits, uint32_t enc)
{
	if (enc & INT_BOOL)
		put(o, v ? "true" : "false");
	else if (enc & INT_SIGNED)
		put(o, "%" PRId64, sign_extend(v, bits));
	else
		put(o, "%" PRIu64, v);
}

struct dumper {
	const struct ldr_btf *btf;
	struct jout *o;
};

static int dump(struct dumper *d, uint32_t id, const uint8_t *data, uint64_t n, int depth);

/* A char array that holds a C string (printable up to the first NUL, zeros after it). */
static int is_c_string(const uint8_t *s, uint64_t n)
{
	uint64_t i = 0;
	while (i < n && s[i] >= 0x20 && s[i] < 0x7f)
		i++;
	if (i == n || i == 0)
		return 0;
	for (; i < n; i++)
		if (s[i])
			return 0;
	return 1;
}

/* A one-byte integer that C calls a char: clang marks it by its name, not by the encoding. */
static int is_char(const struct ldr_btf *btf, uint32_t id)
{
	struct ldr_btf_type t;
	const char *name;
	if (ldr_btf_skip_mods(btf, id, &id) || ldr_btf_type(btf, id, &t) ||
	    t.kind != LDR_BTF_KIND_INT)
		return 0;
	name = ldr_btf_str(btf, t.name_off);
	return (ebpf_le32(t.extra) >> 24 & INT_CHAR) || (name && strstr(name, "char"));
}

static int dump_array(struct dumper *d, const struct ldr_btf_type *t, const uint8_t *data,
		      uint64_t n, int depth)
{
	uint32_t elem = ebpf_le32(t->extra), cnt = ebpf_le32(t->extra + 8);
	uint64_t esz;
	if (ldr_btf_size(d->btf, elem, &esz) || (uint64_t)cnt * esz > n)
		return -EINVAL;
	if (esz == 1 && is_char(d->btf, elem) && is_c_string(data, cnt)) {
		put_str(d->o, (const char *)data, cnt);
		return 0;
	}
	put(d->o, "[");
	for (uint32_t i = 0; i < cnt; i++) {
		if (i)
			put(d->o, ",");
		int ret = dump(d, elem, data + i * esz, esz, depth + 1);
		if (ret)
			return ret;
	}
	put(d->o, "]");
	return 0;
}

/* The members of a struct or union, "name":value each; anonymous struct/union members are
 * inlined. *first tracks the comma across inlined levels. */
static int dump_members(struct dumper *d, const struct ldr_btf_type *t, const uint8_t *data,
			uint64_t n, int depth, int *first)
{
	int bitfields = t->kflag;
	for (uint32_t i = 0; i < t->vlen; i++) {
		const uint8_t *m = t->extra + 12 * i;
		const char *name = ldr_btf_str(d->btf, ebpf_le32(m));
		uint32_t mtype = ebpf_le32(m + 4), off = ebpf_le32(m + 8);
		uint32_t bsize = bitfields ? off >> 24 : 0, boff = bitfields ? off & 0xffffff : off;
		uint32_t rid;
		struct ldr_btf_type mt;
		if (!name || ldr_btf_skip_mods(d->btf, mtype, &rid) ||
		    ldr_btf_type(d->btf, rid, &mt))
			return -EINVAL;
		if (!name[0] && (mt.kind == LDR_BTF_KIND_STRUCT || mt.kind == LDR_BTF_KIND_UNION)) {
			if (boff % 8 || boff / 8 + mt.size_or_type > n || depth >= BTF_JSON_DEPTH)
				return -EINVAL;
			int ret = dump_members(d, &mt, data + boff / 8, mt.size_or_type, depth + 1,
					       first);
			if (ret)
				return ret;
			continue;
		}
		if (!*first)
			put(d->o, ",");
		*first = 0;
		put_str(d->o, name[0] ? name : "?", 256);
		put(d->o, ":");
		if (bsize) { /* a bitfield: an integer or enum of bsize bits */
			uint64_t v;
			if (bits_at(data, n, boff, bsize, &v))
				return -EINVAL;
			uint32_t enc = mt.kind == LDR_BTF_KIND_INT ? ebpf_le32(mt.extra) >> 24
				       : mt.kind == LDR_BTF_KIND_ENUM && mt.kflag ? INT_SIGNED
										  : 0;
			put_int(d->o, v, bsize, enc);
			continue;
		}
		if (boff % 8 || boff / 8 > n)
			return -EINVAL;
		int ret = dump(d, mtype, data + boff / 8, n - boff / 8, depth + 1);
		if (ret)
			return ret;
	}
	return 0;
}

static int dump_enum(struct dumper *d, const struct ldr_btf_type *t, const uint8_t *data,
		     uint64_t n)
{
	uint64_t sz = t->size_or_type;
	if (!sz || sz > 8 || sz > n)
		return -EINVAL;
	uint64_t v = rd(data, sz);
	int wide = t->kind == LDR_BTF_KIND_ENUM64;
	for (uint32_t i = 0; i < t->vlen; i++) {
		const uint8_t *e = t->extra + (wide ? 12 : 8) * i;
		uint64_t ev = wide ? (uint64_t)ebpf_le32(e + 4) | (uint64_t)ebpf_le32(e + 8) << 32
				   : (uint64_t)(int64_t)(int32_t)ebpf_le32(e + 4);
		if (sz < 8)
			ev &= (1ull << (8 * sz)) - 1;
		const char *name = ldr_btf_str(d->btf, ebpf_le32(e));
		if (ev == v && name && name[0]) {
			put_str(d->o, name, 256);
			return 0;
		}
	}
	put_int(d->o, v, (uint32_t)(8 * sz), t->kflag ? INT_SIGNED : 0);
	return 0;
}

static int dump_datasec(struct dumper *d, const struct ldr_btf_type *t, const uint8_t *data,
			uint64_t n, int depth)
{
	put(d->o, "{");
	for (uint32_t i = 0; i < t->vlen; i++) {
		const uint8_t *v = t->extra + 12 * i;
		uint32_t var = ebpf_le32(v), off = ebpf_le32(v + 4), size = ebpf_le32(v + 8);
		struct ldr_btf_type vt;
		const char *name;
		if (ldr_btf_type(d->btf, var, &vt) || vt.kind != LDR_BTF_KIND_VAR ||
		    !(name = ldr_btf_str(d->btf, vt.name_off)) || !ldr_in_bounds(off, size, n))
			return -EINVAL;
		if (i)
			put(d->o, ",");
		put_str(d->o, name, 256);
		put(d->o, ":");
		int ret = dump(d, vt.size_or_type, data + off, size, depth + 1);
		if (ret)
			return ret;
	}
	put(d->o, "}");
	return 0;
}

static int dump(struct dumper *d, uint32_t id, const uint8_t *data, uint64_t n, int depth)
{
	struct ldr_btf_type t;
	if (depth > BTF_JSON_DEPTH || ldr_btf_skip_mods(d->btf, id, &id) ||
	    ldr_btf_type(d->btf, id, &t))
		return -EINVAL;
	switch (t.kind) {
	case LDR_BTF_KIND_INT: {
		uint32_t info = ebpf_le32(t.extra), enc = info >> 24 & 0xf;
		uint32_t off = info >> 16 & 0xff, bits = info & 0xff;
		uint64_t sz = t.size_or_type, v;
		if (!sz || sz > n)
			return -EINVAL;
		if (sz > 8) { /* __int128 */
			put_hex(d->o, data, sz);
			return 0;
		}
		if (bits_at(data, sz, off, bits ? bits : (uint32_t)(8 * sz), &v))
			return -EINVAL;
		put_int(d->o, v, bits ? bits : (uint32_t)(8 * sz), enc);
		return 0;
	}
	case LDR_BTF_KIND_PTR:
		if (n < 8)
			return -EINVAL;
		put_hex(d->o, data, 8);
		return 0;
	case LDR_BTF_KIND_ARRAY:
		return dump_array(d, &t, data, n, depth);
	case LDR_BTF_KIND_STRUCT:
	case LDR_BTF_KIND_UNION: {
		int first = 1;
		if (t.size_or_type > n)
			return -EINVAL;
		put(d->o, "{");
		int ret = dump_members(d, &t, data, t.size_or_type, depth, &first);
		put(d->o, "}");
		return ret;
	}
	case LDR_BTF_KIND_ENUM:
	case LDR_BTF_KIND_ENUM64:
		return dump_enum(d, &t, data, n);
	case LDR_BTF_KIND_FLOAT: {
		double v;
		if (t.size_or_type == 4 && n >= 4) {
			float f;
			memcpy(&f, data, 4);
			v = f;
		} else if (t.size_or_type == 8 && n >= 8) {
			memcpy(&v, data, 8);
		} else {
			return -EINVAL;
		}
		if (isfinite(v))
			put(d->o, "%.17g", v);
		else
			put(d->o, "\"%s\"", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
		return 0;
	}
	case LDR_BTF_KIND_DATASEC:
		return dump_datasec(d, &t, data, n, depth);
	case LDR_BTF_KIND_VAR:
		return dump(d, t.size_or_type, data, n, depth + 1);
	default:
		return -EINVAL;
	}
}

/* Bytes without a type: a 1-, 2-, 4- or 8-byte little-endian integer, else hex. */
static void untyped(struct jout *o, const uint8_t *data, size_t n)
{
	if (n == 1 || n == 2 || n == 4 || n == 8)
		put(o, "%" PRIu64, rd(data, n));
	else
		put_hex(o, data, n);
}

int ebpf_object_map__json(const struct ebpf_object_map *m, int value, const void *data, size_t size,
			  char *out, size_t out_len)
{
	const struct ebpf_object *obj = m->obj;
	uint32_t id = value ? m->value_type : m->key_type;
	struct jout o = {out, out_len, 0};
	int typed = 0;
	if (out_len)
		out[0] = 0;
	if (id && obj->btf.offs) {
		struct dumper d = {&obj->btf, &o};
		typed = dump(&d, id, data, size, 0) == 0;
		if (!typed)
			o.pos = 0;
	}
	if (!typed)
		untyped(&o, data, size);
	if (o.pos >= out_len) {
		if (out_len)
			out[0] = 0;
		return -ENOSPC;
	}
	out[o.pos] = 0;
	return typed;
}
