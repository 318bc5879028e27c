/* Opening and closing objects, and the public accessors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ebpf/file.h"
#include "loader.h"

/* The caller's options struct is large enough to hold field (libbpf convention: sz first). */
#define OPT_HAS(opts, field)                                                                       \
	((opts) && (opts)->sz >= offsetof(typeof(*(opts)), field) + sizeof((opts)->field))

static struct ebpf_object *fail(struct ebpf_object *obj, int ret)
{
	ebpf_object__close(obj);
	errno = -ret;
	return NULL;
}

struct ebpf_object *ebpf_object__open_mem(const void *buf, size_t size,
					  const struct ebpf_object_open_opts *opts, char *err,
					  size_t err_len)
{
	const char *name = "mem";
	struct ldr_elf elf = {0};
	struct ldr_btf btf = {0};
	struct ldr_line *lines = NULL;
	uint32_t n_lines = 0;
	int ret;

	if (err && err_len)
		err[0] = 0;
	if (OPT_HAS(opts, name) && opts->name)
		name = opts->name;
	if (!buf && size)
		return fail(NULL, ldr_err(err, err_len, EINVAL, "%s: no buffer", name));
	if (size > EBPF_OBJECT_MAX_SIZE)
		return fail(NULL, ldr_err(err, err_len, E2BIG, "%s: %zu bytes (limit %u)", name,
					  size, EBPF_OBJECT_MAX_SIZE));
	struct ebpf_object *obj = calloc(1, sizeof(*obj));
	if (!obj)
		return fail(NULL, ldr_err(err, err_len, ENOMEM, "out of memory"));
	obj->name = strdup(name);
	obj->platform = OPT_HAS(opts, platform) ? opts->platform : NULL;
	/* Our own copy: suitably aligned, and the BTF strings line info points to live in it. */
	obj->image = malloc(size ? size : 1);
	if (!obj->name || !obj->image)
		return fail(obj, ldr_err(err, err_len, ENOMEM, "out of memory"));
	if (size)
		memcpy(obj->image, buf, size);
	obj->image_size = size;

	if ((ret = ldr_elf_parse(&elf, obj->image, size, err, err_len)))
		goto out;
	uint32_t bsec = ldr_elf_find_sec(&elf, ".BTF");
	if (bsec &&
	    (ret = ldr_btf_parse(&btf, elf.secs[bsec].data, elf.secs[bsec].size, err, err_len)))
		goto out;
	uint32_t esec = ldr_elf_find_sec(&elf, ".BTF.ext");
	if (esec) {
		if (!bsec) {
			ret = ldr_err(err, err_len, EINVAL, "section '.BTF.ext' without '.BTF'");
			goto out;
		}
		ret = ldr_btf_ext_parse(&elf, &btf, elf.secs[esec].data, elf.secs[esec].size,
					&lines, &n_lines, err, err_len);
		if (ret)
			goto out;
	}
	if ((ret = ldr_collect_maps(obj, &elf, &btf, err, err_len)))
		goto out;
	if ((ret = ldr_link_programs(obj, &elf, lines, n_lines, err, err_len)))
		goto out;
	if (!obj->n_progs)
		ret = ldr_err(err, err_len, EINVAL,
			      "no programs: put each in a section named after its hook, e.g. "
			      "SEC(\"tuner\")");
out:
	free(lines);
	obj->btf = btf; /* freed with the object */
	ldr_elf_free(&elf);
	if (ret)
		return fail(obj, ret);
	return obj;
}

/* Every error about a file names it: "PATH: " before a message that does not start with it. */
static void name_file(char *err, size_t err_len, const char *path)
{
	size_t n = strlen(path);
	if (!err || !err_len || !strncmp(err, path, n))
		return;
	int e = errno;
	size_t len = strnlen(err, err_len - 1);
	if (n + 2 < err_len) {
		size_t keep = len + n + 2 < err_len ? len : err_len - n - 3;
		memmove(err + n + 2, err, keep);
		memcpy(err, path, n);
		memcpy(err + n, ": ", 2);
		err[n + 2 + keep] = 0;
	}
	errno = e;
}

struct ebpf_object *ebpf_object__open_file(const char *path,
					   const struct ebpf_object_open_opts *opts, char *err,
					   size_t err_len)
{
	struct ebpf_object_open_opts o = {.sz = sizeof(o)};
	if (OPT_HAS(opts, name))
		o.name = opts->name;
	if (OPT_HAS(opts, platform))
		o.platform = opts->platform;
	if (!o.name)
		o.name = path;
	FILE *f = ebpf_fopen_regular(path, err, err_len);
	if (!f)
		return NULL;
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int e = 0;
	for (;;) {
		if (len == cap) {
			if (cap >= EBPF_OBJECT_MAX_SIZE + 1) {
				e = E2BIG;
				break;
			}
			cap = cap ? cap * 2 : 65536;
			void *p = realloc(buf, cap);
			if (!p) {
				e = ENOMEM;
				break;
			}
			buf = p;
		}
		errno = 0;
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f))
				e = errno ? errno : EIO;
			break;
		}
	}
	fclose(f);
	struct ebpf_object *obj = NULL;
	if (e == E2BIG) {
		ldr_err(err, err_len, e, "%s is larger than %u bytes (the most an object may have)",
			path, EBPF_OBJECT_MAX_SIZE);
		errno = e;
	} else if (e) {
		ldr_err(err, err_len, e, "%s: cannot read: %s", path, strerror(e));
		errno = e;
	} else {
		obj = ebpf_object__open_mem(buf, len, &o, err, err_len);
		if (!obj)
			name_file(err, err_len, path);
	}
	free(buf);
	return obj;
}

void ebpf_object__close(struct ebpf_object *obj)
{
	if (!obj)
		return;
	if (obj->unload)
		obj->unload(obj);
	for (uint32_t i = 0; i < obj->n_progs; i++) {
		struct ebpf_program *p = &obj->progs[i];
		free(p->name);
		free(p->section);
		free(p->insns);
		free(p->lines);
		free(p->ctx_off);
		for (uint32_t k = 0; k < p->n_funcs; k++)
			free(p->funcs[k].name);
		free(p->funcs);
	}
	free(obj->progs);
	for (uint32_t i = 0; obj->maps && i < obj->n_maps; i++)
		free(obj->maps[i].init);
	free(obj->maps);
	ldr_btf_free(&obj->btf);
	free(obj->image);
	free(obj->name);
	free(obj);
}

const char *ebpf_object__name(const struct ebpf_object *obj)
{
	return obj->name;
}

int ebpf_object__is_loaded(const struct ebpf_object *obj)
{
	return obj->loaded;
}

/* --- Programs ------------------------------------------------------------------------------ */

uint32_t ebpf_object__prog_cnt(const struct ebpf_object *obj)
{
	return obj->n_progs;
}

struct ebpf_program *ebpf_object__prog(const struct ebpf_object *obj, uint32_t idx)
{
	return idx < obj->n_progs ? &obj->progs[idx] : NULL;
}

struct ebpf_program *ebpf_object__next_program(const struct ebpf_object *obj,
					       const struct ebpf_program *prev)
{
	uint32_t next = prev ? (uint32_t)(prev - obj->progs) + 1 : 0;
	return ebpf_object__prog(obj, next);
}

struct ebpf_program *ebpf_object__find_program_by_name(const struct ebpf_object *obj,
						       const char *name)
{
	for (uint32_t i = 0; name && i < obj->n_progs; i++)
		if (!strcmp(obj->progs[i].name, name))
			return &obj->progs[i];
	return NULL;
}

const char *ebpf_program__name(const struct ebpf_program *p)
{
	return p->name;
}

const char *ebpf_program__section(const struct ebpf_program *p)
{
	return p->section;
}

const struct ebpf_prog_type *ebpf_program__type(const struct ebpf_program *p)
{
	return p->type;
}

const struct ebpf_insn *ebpf_program__insns(const struct ebpf_program *p)
{
	return p->insns;
}

uint32_t ebpf_program__insn_cnt(const struct ebpf_program *p)
{
	return p->n_insns;
}

uint32_t ebpf_program__entry_insn_cnt(const struct ebpf_program *p)
{
	return p->entry_insns;
}

const struct ebpf_line_info *ebpf_program__line_info(const struct ebpf_program *p,
						     uint32_t *n_lines)
{
	if (n_lines)
		*n_lines = p->n_lines;
	return p->lines;
}

const struct ebpf_line_info *ebpf_program__line_of(const struct ebpf_program *p, uint32_t insn)
{
	uint32_t lo = 0, hi = p->n_lines;
	while (lo < hi) { /* first record with .insn > insn */
		uint32_t mid = lo + (hi - lo) / 2;
		if (p->lines[mid].insn <= insn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &p->lines[lo - 1] : NULL;
}

uint32_t ebpf_program__func_cnt(const struct ebpf_program *p)
{
	return p->n_funcs;
}

const char *ebpf_program__func(const struct ebpf_program *p, uint32_t idx, uint32_t *start,
			       uint32_t *len)
{
	if (idx >= p->n_funcs)
		return NULL;
	if (start)
		*start = p->funcs[idx].start;
	if (len)
		*len = p->funcs[idx].len;
	return p->funcs[idx].name;
}

const char *ebpf_program__func_at(const struct ebpf_program *p, uint32_t insn)
{
	for (uint32_t i = 0; i < p->n_funcs; i++)
		if (insn >= p->funcs[i].start && insn - p->funcs[i].start < p->funcs[i].len)
			return p->funcs[i].name;
	return NULL;
}

struct ebpf_exec *ebpf_program__exec(const struct ebpf_program *p)
{
	return p->prog;
}

const struct ebpf_verify_stats *ebpf_program__verify_stats(const struct ebpf_program *p)
{
	return &p->vstats;
}

int ebpf_program__ctx_converted(const struct ebpf_program *p)
{
	return p->prog && p->n_f32_loads > 0;
}

/* --- Maps ---------------------------------------------------------------------------------- */

uint32_t ebpf_object__map_cnt(const struct ebpf_object *obj)
{
	return obj->n_maps;
}

struct ebpf_object_map *ebpf_object__map(const struct ebpf_object *obj, uint32_t idx)
{
	return idx < obj->n_maps ? &obj->maps[idx] : NULL;
}

struct ebpf_object_map *ebpf_object__next_map(const struct ebpf_object *obj,
					      const struct ebpf_object_map *prev)
{
	uint32_t next = prev ? prev->index + 1 : 0;
	return ebpf_object__map(obj, next);
}

struct ebpf_object_map *ebpf_object__find_map_by_name(const struct ebpf_object *obj,
						      const char *name)
{
	for (uint32_t i = 0; name && i < obj->n_maps; i++)
		if (!strcmp(obj->maps[i].name, name))
			return &obj->maps[i];
	return NULL;
}

const char *ebpf_object_map__name(const struct ebpf_object_map *m)
{
	return m->name;
}

uint32_t ebpf_object_map__index(const struct ebpf_object_map *m)
{
	return m->index;
}

int ebpf_object_map__kind(const struct ebpf_object_map *m)
{
	return m->kind;
}

const char *ebpf_object_map_kind__name(int kind)
{
	switch (kind) {
	case EBPF_OBJECT_MAP_BTF:
		return "maps";
	case EBPF_OBJECT_MAP_RODATA:
		return "rodata";
	case EBPF_OBJECT_MAP_DATA:
		return "data";
	case EBPF_OBJECT_MAP_BSS:
		return "bss";
	}
	return "?";
}

const struct ebpf_map_def *ebpf_object_map__def(const struct ebpf_object_map *m)
{
	return &m->def;
}

const void *ebpf_object_map__initial_data(const struct ebpf_object_map *m, size_t *size)
{
	if (size)
		*size = m->init ? m->def.value_size : 0;
	return m->init;
}

struct ebpf_map *ebpf_object_map__map(const struct ebpf_object_map *m)
{
	return m->map;
}

uint32_t ebpf_object_map__export(const struct ebpf_object_map *m)
{
	return m->export_kind;
}

uint32_t ebpf_object_map__fields(const struct ebpf_object_map *m, int value,
				 const struct ebpf_map_field **out)
{
	if (!m->export_kind)
		return 0;
	*out = m->fields[value ? 1 : 0];
	return m->n_fields[value ? 1 : 0];
}

uint32_t ebpf_object_map__rank_flags(const struct ebpf_object_map *m)
{
	return m->rank_flags;
}

const struct ebpf_program *ebpf_object_map__writer(const struct ebpf_object_map *m, uint32_t *insn)
{
	if (insn)
		*insn = m->writer_insn;
	return m->writer;
}
