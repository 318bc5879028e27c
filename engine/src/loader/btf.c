/* BTF (.BTF) type and string sections, and .BTF.ext line info. Only what the loader needs: type
 * sizes and the member types of BTF-defined maps, and the C source position of instructions. */
#include <errno.h>
#include <stdlib.h>

#include "loader.h"

#define BTF_MAGIC     0xeB9F
#define BTF_HDR_MIN   24
#define BTF_TYPE_HDR  12
#define BTF_MAX_DEPTH 32

/* Bytes of kind-specific data after the 12-byte header of a type, or -1 for an unknown kind. */
static int64_t kind_extra(uint32_t kind, uint32_t vlen)
{
	switch (kind) {
	case LDR_BTF_KIND_INT:
		return 4;
	case LDR_BTF_KIND_PTR:
	case LDR_BTF_KIND_FWD:
	case LDR_BTF_KIND_TYPEDEF:
	case LDR_BTF_KIND_VOLATILE:
	case LDR_BTF_KIND_CONST:
	case LDR_BTF_KIND_RESTRICT:
	case LDR_BTF_KIND_FUNC:
	case LDR_BTF_KIND_FLOAT:
	case LDR_BTF_KIND_TYPE_TAG:
		return 0;
	case LDR_BTF_KIND_ARRAY:
		return 12;
	case LDR_BTF_KIND_STRUCT:
	case LDR_BTF_KIND_UNION:
	case LDR_BTF_KIND_DATASEC:
	case LDR_BTF_KIND_ENUM64:
		return 12 * (int64_t)vlen;
	case LDR_BTF_KIND_ENUM:
	case LDR_BTF_KIND_FUNC_PROTO:
		return 8 * (int64_t)vlen;
	case LDR_BTF_KIND_VAR:
	case LDR_BTF_KIND_DECL_TAG:
		return 4;
	default:
		return -1;
	}
}

int ldr_btf_parse(struct ldr_btf *btf, const uint8_t *data, uint64_t size, char *err,
		  size_t err_len)
{
	memset(btf, 0, sizeof(*btf));
	if (!data || size < BTF_HDR_MIN)
		return ldr_err(err, err_len, EINVAL,
			       "section '.BTF': truncated header (%llu bytes)",
			       (unsigned long long)size);
	if (ebpf_le16(data) != BTF_MAGIC)
		return ldr_err(err, err_len, EINVAL,
			       "section '.BTF': bad magic 0x%04x (big-endian BTF not supported)",
			       ebpf_le16(data));
	if (data[2] != 1)
		return ldr_err(err, err_len, EINVAL, "section '.BTF': version %u not supported",
			       data[2]);
	uint32_t hdr_len = ebpf_le32(data + 4);
	uint32_t type_off = ebpf_le32(data + 8), type_len = ebpf_le32(data + 12);
	uint32_t str_off = ebpf_le32(data + 16), str_len = ebpf_le32(data + 20);
	if (hdr_len < BTF_HDR_MIN || hdr_len > size)
		return ldr_err(err, err_len, EINVAL, "section '.BTF': header length %u invalid",
			       hdr_len);
	uint64_t body = size - hdr_len;
	if (!ldr_in_bounds(type_off, type_len, body) || !ldr_in_bounds(str_off, str_len, body))
		return ldr_err(err, err_len, EINVAL,
			       "section '.BTF': types 0x%x+0x%x or strings 0x%x+0x%x outside the "
			       "section",
			       type_off, type_len, str_off, str_len);
	if (!str_len || data[hdr_len + str_off] != 0 || data[hdr_len + str_off + str_len - 1] != 0)
		return ldr_err(err, err_len, EINVAL,
			       "section '.BTF': string section not NUL-delimited");
	btf->strs = (const char *)data + hdr_len + str_off;
	btf->str_len = str_len;
	btf->types = data + hdr_len + type_off;

	/* First pass counts, second records offsets. */
	for (int pass = 0; pass < 2; pass++) {
		uint32_t off = 0, n = 0;
		while (off < type_len) {
			if (type_len - off < BTF_TYPE_HDR)
				return ldr_err(err, err_len, EINVAL,
					       "section '.BTF': type %u truncated at 0x%x", n + 1,
					       off);
			const uint8_t *t = btf->types + off;
			uint32_t info = ebpf_le32(t + 4);
			uint32_t kind = (info >> 24) & 0x1f, vlen = info & 0xffff;
			int64_t extra = kind_extra(kind, vlen);
			if (extra < 0)
				return ldr_err(err, err_len, EINVAL,
					       "section '.BTF': type %u has unknown kind %u", n + 1,
					       kind);
			if ((uint64_t)extra > type_len - off - BTF_TYPE_HDR)
				return ldr_err(
				    err, err_len, EINVAL,
				    "section '.BTF': type %u (kind %u, vlen %u) truncated", n + 1,
				    kind, vlen);
			if (ebpf_le32(t) >= str_len)
				return ldr_err(err, err_len, EINVAL,
					       "section '.BTF': type %u name offset %u outside the "
					       "strings",
					       n + 1, ebpf_le32(t));
			if (++n > LDR_BTF_MAX_TYPES)
				return ldr_err(err, err_len, E2BIG,
					       "section '.BTF': more than %u types",
					       LDR_BTF_MAX_TYPES);
			if (pass)
				btf->offs[n] = off;
			off += BTF_TYPE_HDR + (uint32_t)extra;
		}
		if (!pass) {
			btf->n_types = n;
			btf->offs = calloc((size_t)n + 1, sizeof(*btf->offs));
			if (!btf->offs)
				return ldr_err(err, err_len, ENOMEM, "out of memory");
		}
	}
	return 0;
}

void ldr_btf_free(struct ldr_btf *btf)
{
	free(btf->offs);
	btf->offs = NULL;
}

const char *ldr_btf_str(const struct ldr_btf *btf, uint32_t off)
{
	if (!btf->strs || off >= btf->str_len)
		return NULL;
	return btf->strs + off; /* the section ends in NUL (checked by ldr_btf_parse) */
}

int ldr_btf_type(const struct ldr_btf *btf, uint32_t id, struct ldr_btf_type *t)
{
	if (!btf->offs || id == 0 || id > btf->n_types)
		return -EINVAL;
	const uint8_t *p = btf->types + btf->offs[id];
	uint32_t info = ebpf_le32(p + 4);
	t->name_off = ebpf_le32(p);
	t->kind = (info >> 24) & 0x1f;
	t->kflag = info >> 31;
	t->vlen = info & 0xffff;
	t->size_or_type = ebpf_le32(p + 8);
	t->extra = p + BTF_TYPE_HDR;
	return 0;
}

int ldr_btf_skip_mods(const struct ldr_btf *btf, uint32_t id, uint32_t *out)
{
	struct ldr_btf_type t;
	for (int depth = 0; depth < BTF_MAX_DEPTH; depth++) {
		if (ldr_btf_type(btf, id, &t))
			return -EINVAL;
		switch (t.kind) {
		case LDR_BTF_KIND_TYPEDEF:
		case LDR_BTF_KIND_VOLATILE:
		case LDR_BTF_KIND_CONST:
		case LDR_BTF_KIND_RESTRICT:
		case LDR_BTF_KIND_TYPE_TAG:
			id = t.size_or_type;
			break;
		default:
			*out = id;
			return 0;
		}
	}
	return -EINVAL; /* a modifier cycle or an absurdly deep chain */
}

static int btf_size_depth(const struct ldr_btf *btf, uint32_t id, uint64_t *size, int depth)
{
	struct ldr_btf_type t;
	if (depth > BTF_MAX_DEPTH || ldr_btf_skip_mods(btf, id, &id) || ldr_btf_type(btf, id, &t))
		return -EINVAL;
	switch (t.kind) {
	case LDR_BTF_KIND_INT:
	case LDR_BTF_KIND_STRUCT:
	case LDR_BTF_KIND_UNION:
	case LDR_BTF_KIND_ENUM:
	case LDR_BTF_KIND_ENUM64:
	case LDR_BTF_KIND_FLOAT:
		*size = t.size_or_type;
		return 0;
	case LDR_BTF_KIND_PTR:
		*size = 8;
		return 0;
	case LDR_BTF_KIND_ARRAY: {
		uint32_t elem = ebpf_le32(t.extra), nelems = ebpf_le32(t.extra + 8);
		uint64_t esz;
		if (btf_size_depth(btf, elem, &esz, depth + 1))
			return -EINVAL;
		if (esz && nelems > UINT32_MAX / esz)
			return -EINVAL; /* no type of ours is that large */
		*size = esz * nelems;
		return 0;
	}
	default:
		return -EINVAL;
	}
}

int ldr_btf_size(const struct ldr_btf *btf, uint32_t id, uint64_t *size)
{
	return btf_size_depth(btf, id, size, 0);
}

/* --- .BTF.ext ------------------------------------------------------------------------------ */

#define EXT_HDR_MIN  24
#define EXT_HDR_CORE 32
#define LINE_REC_MIN 16
#define CORE_REC_MIN 16

static int cmp_line(const void *a, const void *b)
{
	const struct ldr_line *x = a, *y = b;
	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->insn < y->insn ? -1 : x->insn > y->insn;
}

/* Checks one info block's layout: rec_size, then per section {name, count, records}. Calls
 * back per record when cb is set. */
struct ext_walk {
	const struct ldr_elf *elf;
	const struct ldr_btf *btf;
	const char *what;
	uint32_t min_rec;
	char *err;
	size_t err_len;
};

typedef int (*ext_rec_fn)(struct ext_walk *w, void *arg, uint32_t sec, const char *sec_name,
			  const uint8_t *rec);

static int ext_walk(struct ext_walk *w, const uint8_t *p, uint32_t len, ext_rec_fn cb, void *arg)
{
	if (!len)
		return 0;
	if (len < 4)
		return ldr_err(w->err, w->err_len, EINVAL, "section '.BTF.ext': %s truncated",
			       w->what);
	uint32_t rec = ebpf_le32(p);
	if (rec < w->min_rec || rec > 256 || rec % 4)
		return ldr_err(w->err, w->err_len, EINVAL,
			       "section '.BTF.ext': %s record size %u invalid", w->what, rec);
	uint32_t off = 4;
	while (off < len) {
		if (len - off < 8)
			return ldr_err(w->err, w->err_len, EINVAL,
				       "section '.BTF.ext': %s section header truncated at 0x%x",
				       w->what, off);
		uint32_t name_off = ebpf_le32(p + off), num = ebpf_le32(p + off + 4);
		off += 8;
		const char *name = ldr_btf_str(w->btf, name_off);
		if (!name)
			return ldr_err(w->err, w->err_len, EINVAL,
				       "section '.BTF.ext': %s section name offset %u invalid",
				       w->what, name_off);
		if (num > (len - off) / rec)
			return ldr_err(w->err, w->err_len, EINVAL,
				       "section '.BTF.ext': %s for '%s': %u records overrun the "
				       "section",
				       w->what, name, num);
		uint32_t sec = ldr_elf_find_sec(w->elf, name);
		if (!sec)
			return ldr_err(w->err, w->err_len, EINVAL,
				       "section '.BTF.ext': %s names section '%s', which does not "
				       "exist",
				       w->what, name);
		for (uint32_t i = 0; i < num; i++, off += rec) {
			if (cb) {
				int ret = cb(w, arg, sec, name, p + off);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

struct line_acc {
	struct ldr_line *v;
	uint32_t n, cap;
};

static int line_rec(struct ext_walk *w, void *arg, uint32_t sec, const char *sec_name,
		    const uint8_t *rec)
{
	struct line_acc *acc = arg;
	const struct ldr_sec *s = &w->elf->secs[sec];
	uint32_t insn_off = ebpf_le32(rec), file_off = ebpf_le32(rec + 4);
	uint32_t line_off = ebpf_le32(rec + 8), line_col = ebpf_le32(rec + 12);
	if (insn_off % 8 || insn_off >= s->size)
		return ldr_err(w->err, w->err_len, EINVAL,
			       "section '.BTF.ext': line info for '%s' at offset 0x%x is outside "
			       "its code",
			       sec_name, insn_off);
	const char *file = ldr_btf_str(w->btf, file_off), *src = ldr_btf_str(w->btf, line_off);
	if (!file || !src)
		return ldr_err(w->err, w->err_len, EINVAL,
			       "section '.BTF.ext': line info for '%s' at offset 0x%x has a bad "
			       "string offset",
			       sec_name, insn_off);
	if (acc->n == acc->cap) {
		uint32_t cap = acc->cap ? acc->cap * 2 : 64;
		void *v = realloc(acc->v, (size_t)cap * sizeof(*acc->v));
		if (!v)
			return ldr_err(w->err, w->err_len, ENOMEM, "out of memory");
		acc->v = v;
		acc->cap = cap;
	}
	acc->v[acc->n++] = (struct ldr_line){
	    .sec = sec,
	    .insn = insn_off / 8,
	    .line = line_col >> 10,
	    .col = line_col & 0x3ff,
	    .file = file[0] ? file : NULL,
	    .src = src[0] ? src : NULL,
	};
	return 0;
}

/* CO-RE relocations would need the kernel's (or our) type information to rewrite offsets; our
 * contexts are fixed-layout, so any record means the object expects something we cannot do. */
static int core_rec(struct ext_walk *w, void *arg, uint32_t sec, const char *sec_name,
		    const uint8_t *rec)
{
	uint32_t insn_off = ebpf_le32(rec), access_off = ebpf_le32(rec + 8);
	const char *access = ldr_btf_str(w->btf, access_off);
	return ldr_err(w->err, w->err_len, EINVAL,
		       "section '%s', offset 0x%x (insn %u): CO-RE relocation (access '%s') not "
		       "supported: contexts have a fixed layout, drop preserve_access_index",
		       sec_name, insn_off, insn_off / 8, access ? access : "?");
}

int ldr_btf_ext_parse(const struct ldr_elf *elf, const struct ldr_btf *btf, const uint8_t *data,
		      uint64_t size, struct ldr_line **lines, uint32_t *n_lines, char *err,
		      size_t err_len)
{
	*lines = NULL;
	*n_lines = 0;
	if (!data || size < EXT_HDR_MIN)
		return ldr_err(err, err_len, EINVAL,
			       "section '.BTF.ext': truncated header (%llu bytes)",
			       (unsigned long long)size);
	if (ebpf_le16(data) != BTF_MAGIC || data[2] != 1)
		return ldr_err(err, err_len, EINVAL, "section '.BTF.ext': bad magic or version");
	if (!btf->offs && !btf->strs)
		return ldr_err(err, err_len, EINVAL, "section '.BTF.ext' without '.BTF'");
	uint32_t hdr_len = ebpf_le32(data + 4);
	if (hdr_len < EXT_HDR_MIN || hdr_len > size)
		return ldr_err(err, err_len, EINVAL, "section '.BTF.ext': header length %u invalid",
			       hdr_len);
	uint64_t body = size - hdr_len;
	const uint8_t *b = data + hdr_len;
	uint32_t fi_off = ebpf_le32(data + 8), fi_len = ebpf_le32(data + 12);
	uint32_t li_off = ebpf_le32(data + 16), li_len = ebpf_le32(data + 20);
	uint32_t co_off = 0, co_len = 0;
	if (hdr_len >= EXT_HDR_CORE) {
		co_off = ebpf_le32(data + 24);
		co_len = ebpf_le32(data + 28);
	}
	if (!ldr_in_bounds(fi_off, fi_len, body) || !ldr_in_bounds(li_off, li_len, body) ||
	    !ldr_in_bounds(co_off, co_len, body))
		return ldr_err(err, err_len, EINVAL,
			       "section '.BTF.ext': info block outside the section");

	struct ext_walk w = {elf, btf, "func info", 8, err, err_len};
	int ret = ext_walk(&w, b + fi_off, fi_len, NULL, NULL);
	if (ret)
		return ret;
	w.what = "CO-RE relocations";
	w.min_rec = CORE_REC_MIN;
	ret = ext_walk(&w, b + co_off, co_len, core_rec, NULL);
	if (ret)
		return ret;
	struct line_acc acc = {0};
	w.what = "line info";
	w.min_rec = LINE_REC_MIN;
	ret = ext_walk(&w, b + li_off, li_len, line_rec, &acc);
	if (ret) {
		free(acc.v);
		return ret;
	}
	if (acc.n)
		qsort(acc.v, acc.n, sizeof(*acc.v), cmp_line);
	*lines = acc.v;
	*n_lines = acc.n;
	return 0;
}
