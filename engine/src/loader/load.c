/* ebpf_object__load: create the maps, verify every program, create the executable programs.
 *
 * Rank consistency (docs/design.md §4.2): observing programs (profiler, net) are verified first;
 * every map one of them may write holds rank-local data, so it is passed to the verifier as
 * EBPF_VERIFY_MAP_RANK_LOCAL when the decision-making (tuner) programs are verified. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ncclbpf/helpers.h"
#include "loader.h"

static void unload(struct ebpf_object *obj)
{
	for (uint32_t i = 0; i < obj->n_progs; i++) {
		ebpf_prog__free(obj->progs[i].prog);
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
			return ldr_err(err, err_len, e, "map '%s': %s", m->name,
				       msg[0] ? msg : strerror(e));
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

/* The single call into the static verifier for one program. */
static int loader_verify_program(struct ebpf_program *p, struct ebpf_map *const *maps,
				 uint32_t n_maps, uint8_t *map_flags,
				 const struct ebpf_helper_table *helpers,
				 const struct ebpf_object_load_opts *o, char *err, size_t err_len)
{
	memset(&p->vstats, 0, sizeof(p->vstats));
	p->vstats.insns = p->n_insns;
	struct ebpf_verify_opts vo = {
	    .sz = sizeof(vo),
	    .type = p->type,
	    .maps = maps,
	    .n_maps = n_maps,
	    .map_flags = map_flags,
	    .helpers = helpers,
	    .lines = p->lines,
	    .n_lines = p->n_lines,
	    .flags = o->verify_flags,
	    .complexity_limit = o->complexity_limit,
	    .log_buf = o->log_buf,
	    .log_size = o->log_size,
	};
	return ebpf_verify(p->insns, p->n_insns, &vo, &p->vstats, err, err_len);
}

static int verify_all(struct ebpf_object *obj, struct ebpf_map *const *maps,
		      const struct ebpf_helper_table *helpers,
		      const struct ebpf_object_load_opts *o, char *err, size_t err_len)
{
	uint32_t n = obj->n_maps;
	uint8_t *flags = calloc(n ? n : 1, 1), *written = calloc(n ? n : 1, 1);
	char msg[512];
	int ret = 0;
	if (!flags || !written) {
		ret = ldr_err(err, err_len, ENOMEM, "out of memory");
		goto out;
	}
	/* Pass 0: programs without rank-consistent decisions; pass 1: the decision makers. */
	for (int pass = 0; pass < 2 && !ret; pass++) {
		for (uint32_t i = 0; i < obj->n_progs && !ret; i++) {
			struct ebpf_program *p = &obj->progs[i];
			int decides = !!(p->type->flags & EBPF_PROG_TYPE_F_RANK_CONSISTENT);
			if (decides != pass)
				continue;
			for (uint32_t k = 0; k < n; k++)
				flags[k] = pass && (written[k] & EBPF_VERIFY_MAP_WRITTEN)
					       ? EBPF_VERIFY_MAP_RANK_LOCAL
					       : 0;
			msg[0] = 0;
			ret =
			    loader_verify_program(p, maps, n, flags, helpers, o, msg, sizeof(msg));
			if (ret) {
				ret = ldr_err(err, err_len, -ret, "program '%s' (section '%s'): %s",
					      p->name, p->section, msg[0] ? msg : "rejected");
				break;
			}
			if (!pass)
				for (uint32_t k = 0; k < n; k++)
					written[k] |= flags[k] & EBPF_VERIFY_MAP_WRITTEN;
		}
	}
out:
	free(flags);
	free(written);
	return ret;
}

int ebpf_object__load(struct ebpf_object *obj, const struct ebpf_object_load_opts *opts, char *err,
		      size_t err_len)
{
	struct ebpf_object_load_opts o = {.sz = sizeof(o)};
	char msg[256];
	int ret;
	if (err && err_len)
		err[0] = 0;
	if (!obj)
		return ldr_err(err, err_len, EINVAL, "no object");
	if (obj->loaded)
		return ldr_err(err, err_len, EBUSY, "%s: already loaded", obj->name);
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	o.sz = sizeof(o);
	const struct ebpf_helper_table *helpers = o.helpers ? o.helpers : ebpf_helpers_default();

	struct ebpf_map **maps = calloc(obj->n_maps ? obj->n_maps : 1, sizeof(*maps));
	if (!maps)
		return ldr_err(err, err_len, ENOMEM, "out of memory");
	obj->unload = unload;
	if ((ret = create_maps(obj, maps, err, err_len)))
		goto fail;
	if ((ret = verify_all(obj, maps, helpers, &o, err, err_len)))
		goto fail;
	for (uint32_t i = 0; i < obj->n_progs; i++) {
		struct ebpf_program *p = &obj->progs[i];
		struct ebpf_prog_opts po = {
		    .sz = sizeof(po),
		    .name = p->name,
		    .helpers = helpers,
		    .maps = maps,
		    .n_maps = obj->n_maps,
		};
		msg[0] = 0;
		errno = 0;
		p->prog = ebpf_prog__new(p->insns, p->n_insns, &po, msg, sizeof(msg));
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
