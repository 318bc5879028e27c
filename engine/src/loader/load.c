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
		struct ebpf_exec_opts po = {
		    .sz = sizeof(po),
		    .name = p->name,
		    .helpers = helpers,
		    .maps = maps,
		    .n_maps = obj->n_maps,
		};
		msg[0] = 0;
		errno = 0;
		p->prog = ebpf_exec__new(p->insns, p->n_insns, &po, msg, sizeof(msg));
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
