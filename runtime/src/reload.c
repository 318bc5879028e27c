/* Reload: load -> verify -> JIT -> carry map contents -> swap -> drain -> free the old policy.
 * Everything before the swap happens on a private policy object; a failure at any step frees
 * it and leaves the running policy untouched. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclbpf/control.h"
#include "ncclbpf/maps.h"
#include "rt_internal.h"

static void report_init(struct ncclbpf_reload_report *r)
{
	size_t sz = r->sz ? r->sz : sizeof(*r);
	if (sz > sizeof(*r))
		sz = sizeof(*r);
	memset(r, 0, sz);
	r->sz = sz;
}

static uint64_t active_version(void)
{
	/* Only called under reload_lock, which is the only writer of rt_active. */
	struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_SEQ_CST);
	return p ? p->hot.version : 0;
}

static int finish(struct rt_policy *p, struct ncclbpf_reload_report *r, uint64_t t0)
{
	/* Queued completions count in the maps that are carried over (net_defer.c). */
	ncclbpf_rt_net_flush();
	uint64_t carry0 = rt_now_ns();
	struct rt_policy *old = __atomic_load_n(&rt_active, __ATOMIC_SEQ_CST);
	if (old && p->obj && old->obj)
		r->maps_kept = rt_bundle_carry_maps(p, old);
	r->carry_ns = rt_now_ns() - carry0;
	p->hot.version = atomic_fetch_add(&rt.next_version, 1);
	p->hash = p->image ? ncclbpf_cp_hash(p->image, p->image_len)
			   : ncclbpf_cp_hash(p->name, strlen(p->name));
	atomic_store(&p->refs, 1); /* the process default's reference */
	r->version = p->hot.version;
	r->engine = p->engine;
	p->load = *r; /* before publication: the policy is immutable once active */
	rt_activate(p, 0, &r->swap_ns, &r->retire_ns);
	r->total_ns = rt_now_ns() - t0;
	atomic_fetch_add(&rt.reloads_ok, 1);
	rt_inspect_note_reload(p->name, r);
	return 0;
}

static struct ncclbpf_native_policy natives[16];
static char native_names[16][64];
static unsigned n_natives;
static pthread_mutex_t natives_lock = PTHREAD_MUTEX_INITIALIZER;

int ncclbpf_rt_register_native(const struct ncclbpf_native_policy *np)
{
	pthread_mutex_lock(&natives_lock);
	int err = -ENOSPC;
	if (n_natives < sizeof(natives) / sizeof(natives[0])) {
		snprintf(native_names[n_natives], sizeof(native_names[0]), "%s", np->name);
		natives[n_natives] = *np;
		natives[n_natives].name = native_names[n_natives];
		n_natives++;
		err = 0;
	}
	pthread_mutex_unlock(&natives_lock);
	return err;
}

static void set_native(struct rt_policy *p, const struct ncclbpf_native_policy *np,
		       struct ncclbpf_reload_report *r)
{
	snprintf(p->name, sizeof(p->name), "native:%s", np->name ? np->name : "?");
	p->engine = NCCLBPF_ENGINE_NATIVE;
	/* Native code may read any part of its context. */
	uint64_t skip = np->sz >= offsetof(struct ncclbpf_native_policy, tuner_skip_words) +
				      sizeof(np->tuner_skip_words)
			    ? np->tuner_skip_words
			    : 0;
	p->hot.tuner = (struct rt_hook){.fn = np->tuner, .arg = np->arg, .ctx_words = ~skip};
	p->hot.chunk = (struct rt_hook){.fn = np->chunk, .arg = np->arg, .ctx_words = ~0ull};
	p->release = np->release;
	p->release_arg = np->arg;
	r->n_progs = (np->tuner != NULL) + (np->chunk != NULL);
	if (np->sz >= offsetof(struct ncclbpf_native_policy, profiler_needs) +
			  sizeof(np->profiler_needs) &&
	    np->profiler) {
		p->hot.profiler =
		    (struct rt_hook){.fn = np->profiler, .arg = np->arg, .ctx_words = ~0ull};
		p->hot.profiler_needs = NCCLBPF_RT_PROF_PROGRAM | np->profiler_needs;
		r->n_progs++;
	}
}

static int load_native(const char *name, struct rt_policy *p, struct ncclbpf_reload_report *r)
{
	int err = -ENOENT;
	pthread_mutex_lock(&natives_lock);
	for (unsigned i = 0; i < n_natives && err; i++)
		if (!strcmp(natives[i].name, name)) {
			set_native(p, &natives[i], r);
			err = 0;
		}
	pthread_mutex_unlock(&natives_lock);
	if (err)
		snprintf(r->msg, sizeof(r->msg), "no native policy named '%s' in this build", name);
	return err;
}

int ncclbpf_rt_reload(const char *path, struct ncclbpf_reload_report *report)
{
	struct ncclbpf_reload_report local = {.sz = sizeof(local)};
	struct ncclbpf_reload_report *r = report ? report : &local;
	report_init(r);
	uint64_t t0 = rt_now_ns();

	pthread_mutex_lock(&rt.reload_lock);
	if (!path || !*path) {
		path = rt.have_policy_path ? rt.policy_path : NULL;
		if (!path) {
			r->err = -ENOENT;
			snprintf(r->msg, sizeof(r->msg),
				 "no bundle path (NCCLBPF_POLICY is not set)");
			goto fail;
		}
	}
	struct rt_policy *p = calloc(1, sizeof(*p));
	if (!p) {
		r->err = -ENOMEM;
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		goto fail;
	}
	snprintf(p->name, sizeof(p->name), "%s", path);
	int engine = rt.engine;
	if (engine == NCCLBPF_ENGINE_JIT && !rt_jit_available())
		engine = NCCLBPF_ENGINE_INTERP;
	p->engine = engine;
	int err = strncmp(path, "native:", 7) ? rt_bundle_load(path, engine, p, r)
					      : load_native(path + 7, p, r);
	if (err) {
		r->err = err;
		free(p);
		goto fail;
	}
	finish(p, r, t0);
	pthread_mutex_unlock(&rt.reload_lock);
	rt_log(NCCLBPF_LOG_INFO,
	       "NCCLbpf: policy %s active as version %llu (%u programs, %u maps, %u kept, %s; "
	       "%.1f us: parse %.1f verify %.1f load %.1f jit %.1f swap %.3f)",
	       path, (unsigned long long)r->version, r->n_progs, r->n_maps, r->maps_kept,
	       r->engine == NCCLBPF_ENGINE_JIT ? "jit" : "interpreter", r->total_ns / 1e3,
	       r->parse_ns / 1e3, r->verify_ns / 1e3, r->load_ns / 1e3, r->jit_ns / 1e3,
	       r->swap_ns / 1e3);
	return 0;
fail:
	r->version = active_version();
	r->total_ns = rt_now_ns() - t0;
	atomic_fetch_add(&rt.reloads_failed, 1);
	rt_inspect_note_reload(path, r);
	pthread_mutex_unlock(&rt.reload_lock);
	return r->err;
}

int ncclbpf_rt_install_native(const struct ncclbpf_native_policy *np,
			      struct ncclbpf_reload_report *report)
{
	struct ncclbpf_reload_report local = {.sz = sizeof(local)};
	struct ncclbpf_reload_report *r = report ? report : &local;
	report_init(r);
	uint64_t t0 = rt_now_ns();
	struct rt_policy *p = calloc(1, sizeof(*p));
	if (!p) {
		r->err = -ENOMEM;
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return r->err;
	}
	set_native(p, np, r);
	pthread_mutex_lock(&rt.reload_lock);
	finish(p, r, t0);
	pthread_mutex_unlock(&rt.reload_lock);
	return 0;
}

/* Map access holds reload_lock: the policy (and its maps) cannot be retired meanwhile. */
static int map_op(const char *name, const void *key, void *value, int update)
{
	pthread_mutex_lock(&rt.reload_lock);
	struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_SEQ_CST);
	struct ebpf_map *m = p ? rt_bundle_find_map(p, name) : NULL;
	int err = -ENOENT;
	if (m)
		err = update ? ebpf_map__user_update(m, key, value, EBPF_ANY)
			     : ebpf_map__user_lookup(m, key, value);
	pthread_mutex_unlock(&rt.reload_lock);
	return err;
}

int ncclbpf_rt_map_lookup(const char *name, const void *key, void *value)
{
	ncclbpf_rt_net_flush(); /* every queued completion shows in what is read */
	return map_op(name, key, value, 0);
}

int ncclbpf_rt_map_update(const char *name, const void *key, const void *value)
{
	return map_op(name, key, (void *)value, 1);
}
