/* Reload: read -> load -> verify -> JIT -> carry map contents -> swap -> drain -> free the old
 * policy. The file is read before reload_lock is taken; everything before the swap happens on a
 * private policy object; a failure at any step frees it and leaves the running policy
 * untouched. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclbpf/control.h"
#include "ebpf/maps.h"
#include "ebpf/object.h"
#include "ncclbpf/trusted_path.h"
#include "policy.h"

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
	rt_policy_drain();
	uint64_t carry0 = rt_now_ns();
	struct rt_policy *old = __atomic_load_n(&rt_active, __ATOMIC_SEQ_CST);
	r->maps_kept = rt_bundle_carry_maps(p, old, 0);
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
	rt_reload_history_note(p->name, r);
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
	p->hot.tuner = (struct rt_hook){
	    .fn = np->tuner, .arg = np->arg, .ctx_words = ~skip, .ctx_written = ~0ull};
	p->hot.chunk = (struct rt_hook){
	    .fn = np->chunk, .arg = np->arg, .ctx_words = ~0ull, .ctx_written = ~0ull};
	p->release = np->release;
	p->release_arg = np->arg;
	r->n_progs = (np->tuner != NULL) + (np->chunk != NULL);
	if (np->sz >= offsetof(struct ncclbpf_native_policy, profiler_needs) +
			  sizeof(np->profiler_needs) &&
	    np->profiler) {
		p->hot.profiler = (struct rt_hook){
		    .fn = np->profiler, .arg = np->arg, .ctx_words = ~0ull, .ctx_written = ~0ull};
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

static struct rt_policy *new_policy(const char *name, struct ncclbpf_reload_report *r)
{
	struct rt_policy *p = calloc(1, sizeof(*p));
	if (!p) {
		r->err = -ENOMEM;
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return NULL;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	int engine = rt.engine;
	if (engine == NCCLBPF_ENGINE_JIT && !rt_jit_available())
		engine = NCCLBPF_ENGINE_INTERP;
	p->engine = engine;
	atomic_store(&p->refs, 1);
	return p;
}

struct rt_policy *rt_policy_load(void *image, size_t len, const char *name,
				 struct ncclbpf_reload_report *r)
{
	struct rt_policy *p = new_policy(name, r);
	if (p) {
		uint64_t read_ns = r->parse_ns;
		r->err = rt_bundle_load_mem(image, len, name, p->engine, p, r);
		r->parse_ns += read_ns;
	}
	if (!p || r->err) {
		free(image);
		free(p);
		return NULL;
	}
	p->image = image;
	p->image_len = len;
	return p;
}

static void log_active(const char *name, const struct ncclbpf_reload_report *r)
{
	rt_log(NCCLBPF_LOG_INFO,
	       "NCCLbpf: policy %s active as version %llu (%u program%s, %u map%s, %u kept, %s; "
	       "%.1f us: parse %.1f verify %.1f load %.1f jit %.1f swap %.3f)",
	       name, (unsigned long long)r->version, r->n_progs, r->n_progs == 1 ? "" : "s",
	       r->n_maps, r->n_maps == 1 ? "" : "s", r->maps_kept,
	       r->engine == NCCLBPF_ENGINE_JIT ? "jit" : "interpreter", r->total_ns / 1e3,
	       r->parse_ns / 1e3, r->verify_ns / 1e3, r->load_ns / 1e3, r->jit_ns / 1e3,
	       r->swap_ns / 1e3);
}

/* Under reload_lock: a failed attempt is counted and kept in the history. */
static int failed(const char *name, struct ncclbpf_reload_report *r, uint64_t t0)
{
	r->version = active_version();
	r->total_ns = rt_now_ns() - t0;
	atomic_fetch_add(&rt.reloads_failed, 1);
	rt_reload_history_note(name, r);
	return r->err;
}

/* Builds and activates a policy from image (taken over) or, without one, the native policy
 * name + 7 ("native:NAME"). Takes reload_lock; no file is read under it (a stalled read would
 * hold every reload, unload and map access behind it). */
static int activate(void *image, size_t len, const char *name, struct ncclbpf_reload_report *r,
		    uint64_t t0, const int *cancel)
{
	pthread_mutex_lock(&rt.reload_lock);
	if (cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE)) {
		free(image);
		r->err = -ECANCELED;
		snprintf(r->msg, sizeof(r->msg), "not activated: the watcher was stopped");
		pthread_mutex_unlock(&rt.reload_lock);
		return r->err;
	}
	struct rt_policy *p = image ? rt_policy_load(image, len, name, r) : new_policy(name, r);
	if (p && !image && (r->err = load_native(name + 7, p, r)) != 0) {
		free(p);
		p = NULL;
	}
	if (!p) {
		int err = failed(name, r, t0);
		pthread_mutex_unlock(&rt.reload_lock);
		return err;
	}
	finish(p, r, t0);
	pthread_mutex_unlock(&rt.reload_lock);
	log_active(name, r);
	return 0;
}

int rt_reload(const char *path, struct ncclbpf_reload_report *r, const int *cancel)
{
	report_init(r);
	uint64_t t0 = rt_now_ns();
	char conf[sizeof(rt.policy_path)];
	if (!path || !*path) {
		pthread_mutex_lock(&rt.lock);
		snprintf(conf, sizeof(conf), "%s", rt.have_policy_path ? rt.policy_path : "");
		pthread_mutex_unlock(&rt.lock);
		path = conf;
	}
	if (!*path) {
		r->err = -ENOENT;
		snprintf(r->msg, sizeof(r->msg), "no bundle path (NCCLBPF_POLICY is not set)");
		pthread_mutex_lock(&rt.reload_lock);
		int e = failed(NULL, r, t0);
		pthread_mutex_unlock(&rt.reload_lock);
		return e;
	}
	if (!strncmp(path, "native:", 7))
		return activate(NULL, 0, path, r, t0, cancel);
	void *image;
	size_t len;
	char why[sizeof(r->msg)];
	int e = ncclbpf_path_read_file(path, EBPF_OBJECT_MAX_SIZE, &image, &len, why, sizeof(why));
	r->parse_ns = rt_now_ns() - t0;
	if (e) {
		r->err = e;
		snprintf(r->msg, sizeof(r->msg), "%s", why);
		pthread_mutex_lock(&rt.reload_lock);
		e = failed(path, r, t0);
		pthread_mutex_unlock(&rt.reload_lock);
		return e;
	}
	return activate(image, len, path, r, t0, cancel);
}

int ncclbpf_rt_reload(const char *path, struct ncclbpf_reload_report *report)
{
	struct ncclbpf_reload_report local = {.sz = sizeof(local)};
	return rt_reload(path, report ? report : &local, NULL);
}

int rt_reload_image(void *image, size_t len, const char *name, struct ncclbpf_reload_report *r)
{
	report_init(r);
	return activate(image, len, name, r, rt_now_ns(), NULL);
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
	rt_policy_drain(); /* every queued completion shows in what is read */
	return map_op(name, key, value, 0);
}

int ncclbpf_rt_map_update(const char *name, const void *key, const void *value)
{
	return map_op(name, key, (void *)value, 1);
}
