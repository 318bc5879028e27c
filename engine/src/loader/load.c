/* ebpf_object__load and ebpf_object__verify: create the maps, verify every program (rank.c,
 * which also decides which maps decisions may depend on, docs/design.md §4.2), create the
 * executable programs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ebpf/helpers.h"
#include "loader.h"

static void unload(struct ebpf_object *obj)
{
	for (uint32_t i = 0; i < obj->n_progs; i++) {
		ebpf_exec__free(obj->progs[i].prog);
		obj->progs[i].prog = NULL;
	}
	for (uint32_t i = 0; i < obj->n_maps; i++) {
		ebpf_map__free(obj->maps[i].map);
		obj->maps[i].map = NULL;
	}
	obj->loaded = 0;
}

static int create_maps(struct ebpf_object *obj, struct ebpf_map **maps, char *err, size_t err_len)
{
	char msg[256];
	for (uint32_t i = 0; i < obj->n_maps; i++) {
		struct ebpf_object_map *m = &obj->maps[i];
		msg[0] = 0;
		errno = 0;
		m->map = ebpf_map__create(&m->def, msg, sizeof(msg));
		if (!m->map) {
			int e = errno ? errno : EINVAL;
			/* the maps' messages name the map already */
			if (msg[0])
				return ldr_err(err, err_len, e, "%s", msg);
			return ldr_err(err, err_len, e, "map '%s': %s", m->name, strerror(e));
		}
		maps[i] = m->map;
		if (m->init) {
			uint32_t key = 0;
			long ret = ebpf_map__user_update(m->map, &key, m->init, EBPF_ANY);
			if (ret)
				return ldr_err(err, err_len, (int)-ret,
					       "map '%s': cannot set initial data: %s", m->name,
					       strerror((int)-ret));
		}
		/* .rodata is constant from now on, also for user space: the verifier may then
		 * treat its contents as known values. */
		if (m->kind == EBPF_OBJECT_MAP_RODATA) {
			int ret = ebpf_map__freeze(m->map);
			if (ret)
				return ldr_err(err, err_len, -ret, "map '%s': cannot freeze: %s",
					       m->name, strerror(-ret));
		}
	}
	return 0;
}

/* What load and verify share: options, checks, the maps created. */
static int prepare(struct ebpf_object *obj, const struct ebpf_object_load_opts *opts,
		   struct ebpf_object_load_opts *o, struct ebpf_map ***maps, char *err,
		   size_t err_len)
{
	*o = (struct ebpf_object_load_opts){.sz = sizeof(*o)};
	*maps = NULL;
	if (err && err_len)
		err[0] = 0;
	if (!obj)
		return ldr_err(err, err_len, EINVAL, "no object");
	if (obj->loaded)
		return ldr_err(err, err_len, EBUSY, "%s: already loaded", obj->name);
	if (opts)
		memcpy(o, opts, opts->sz < sizeof(*o) ? opts->sz : sizeof(*o));
	o->sz = sizeof(*o);
	if (!o->helpers)
		o->helpers = obj->platform && obj->platform->helpers ? obj->platform->helpers
								     : ebpf_helpers_default();
	int ret = o->limits ? ebpf_object__check_limits(obj, o->limits, NULL, err, err_len) : 0;
	if (ret)
		return ret;
	*maps = calloc(obj->n_maps ? obj->n_maps : 1, sizeof(**maps));
	if (!*maps)
		return ldr_err(err, err_len, ENOMEM, "out of memory");
	obj->unload = unload;
	ret = create_maps(obj, *maps, err, err_len);
	if (ret) {
		free(*maps);
		*maps = NULL;
		unload(obj);
	}
	return ret;
}

int ebpf_object__verify(struct ebpf_object *obj, const struct ebpf_object_load_opts *opts,
			ebpf_object_verify_report_fn report, void *arg, char *err, size_t err_len)
{
	struct ebpf_object_load_opts o;
	struct ebpf_map **maps;
	int ret = prepare(obj, opts, &o, &maps, err, err_len);
	if (ret)
		return ret;
	if (!report)
		ret = ldr_err(err, err_len, EINVAL, "no report function");
	else
		ret = ldr_verify_programs(obj, maps, o.helpers, &o, report, arg, err, err_len);
	free(maps);
	unload(obj);
	return ret;
}

/* The loads of p to convert (ebpf_prog_type.from_f32), from the verifier's context offsets:
 * their number (0: p reads none of the field), or -1 when p reads the field in a way a
 * conversion cannot serve - narrower than an element, or by an instruction that reads other
 * memory or another offset on another path - and then none is converted: the host fills the
 * field as plain memory. */
static int f32_loads(const struct ebpf_program *p, struct ebpf_exec_ctx_load *out)
{
	const struct ebpf_ctx_from_f32 *c = p->type ? p->type->from_f32 : NULL;
	int n = 0;
	if (!c || !p->ctx_off)
		return 0;
	int64_t lo = c->field_off, hi = lo + 8 * (int64_t)c->n;
	for (uint32_t i = 0; i < p->n_insns; i++) {
		int32_t o = p->ctx_off[i];
		const struct ebpf_insn *in = &p->insns[i];
		if (o == EBPF_CTX_OFF_MIXED)
			return -1;
		if (o < 0 || EBPF_CLASS(in->code) != EBPF_LDX)
			continue;
		static const int sizes[4] = {4, 2, 1, 8}; /* EBPF_W, H, B, DW */
		int size = sizes[EBPF_SIZE(in->code) >> 3];
		if (o + size <= lo || o >= hi)
			continue; /* another field */
		if (in->code != (EBPF_LDX | EBPF_MEM | EBPF_DW) || (o - lo) % 8)
			return -1;
		out[n++] = (struct ebpf_exec_ctx_load){.insn = i, .ctx_off = o};
	}
	return n;
}

int ebpf_object__load(struct ebpf_object *obj, const struct ebpf_object_load_opts *opts, char *err,
		      size_t err_len)
{
	struct ebpf_object_load_opts o;
	struct ebpf_map **maps;
	char msg[256];
	int ret = prepare(obj, opts, &o, &maps, err, err_len);
	if (ret)
		return ret;
	const struct ebpf_helper_table *helpers = o.helpers;
	if ((ret = ldr_verify_programs(obj, maps, helpers, &o, NULL, NULL, err, err_len)))
		goto fail;
	for (uint32_t i = 0; i < obj->n_progs; i++) {
		struct ebpf_program *p = &obj->progs[i];
		struct ebpf_exec_ctx_load *loads = NULL;
		int n_loads = 0;
		if (p->ctx_off) {
			loads = malloc((size_t)p->n_insns * sizeof(*loads));
			if (!loads) {
				ret = ldr_err(err, err_len, ENOMEM, "out of memory");
				goto fail;
			}
			n_loads = f32_loads(p, loads);
		}
		struct ebpf_exec_opts po = {
		    .sz = sizeof(po),
		    .name = p->name,
		    .helpers = helpers,
		    .maps = maps,
		    .n_maps = obj->n_maps,
		    .from_f32 = n_loads > 0 ? p->type->from_f32 : NULL,
		    .f32_loads = n_loads > 0 ? loads : NULL,
		    .n_f32_loads = n_loads > 0 ? (uint32_t)n_loads : 0,
		};
		msg[0] = 0;
		errno = 0;
		p->prog = ebpf_exec__new(p->insns, p->n_insns, &po, msg, sizeof(msg));
		free(loads);
		p->n_f32_loads = p->prog && n_loads > 0 ? (uint32_t)n_loads : 0;
		if (!p->prog) {
			int e = errno ? errno : EINVAL;
			ret = ldr_err(err, err_len, e, "program '%s' (section '%s'): %s", p->name,
				      p->section, msg[0] ? msg : strerror(e));
			goto fail;
		}
	}
	free(maps);
	obj->loaded = 1;
	return 0;
fail:
	free(maps);
	unload(obj);
	return ret;
}
