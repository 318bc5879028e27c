/* Reload: load -> verify -> JIT -> carry map contents -> swap -> drain -> free the old policy.
 * Everything before the swap happens on a private policy object; a failure at any step frees
 * it and leaves the running policy untouched. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	/* Only called under reload_lock, which is the only writer of rt.active. */
	struct rt_policy *p = atomic_load(&rt.active);
	return p ? p->version : 0;
}

static int finish(struct rt_policy *p, struct ncclbpf_reload_report *r, uint64_t t0)
{
	uint64_t carry0 = rt_now_ns();
	struct rt_policy *old = atomic_load(&rt.active);
	if (old && p->obj && old->obj)
		r->maps_kept = rt_bundle_carry_maps(p, old);
	r->carry_ns = rt_now_ns() - carry0;
	p->version = atomic_fetch_add(&rt.next_version, 1);
	rt_activate(p, &r->swap_ns, &r->drain_ns);
	r->version = p->version;
	r->engine = p->engine;
	r->total_ns = rt_now_ns() - t0;
	atomic_fetch_add(&rt.reloads_ok, 1);
	return 0;
}

static struct native_entry {
	char name[64];
	ncclbpf_native_fn tuner, chunk;
	uint64_t arg;
} natives[16];
static unsigned n_natives;
static pthread_mutex_t natives_lock = PTHREAD_MUTEX_INITIALIZER;

int ncclbpf_rt_register_native(const char *name, ncclbpf_native_fn tuner, ncclbpf_native_fn chunk,
			       uint64_t arg)
{
	pthread_mutex_lock(&natives_lock);
	int err = -ENOSPC;
	if (n_natives < sizeof(natives) / sizeof(natives[0])) {
		struct native_entry *e = &natives[n_natives++];
		snprintf(e->name, sizeof(e->name), "%s", name);
		e->tuner = tuner;
		e->chunk = chunk;
		e->arg = arg;
		err = 0;
	}
	pthread_mutex_unlock(&natives_lock);
	return err;
}

static int load_native(const char *name, struct rt_policy *p, struct ncclbpf_reload_report *r)
{
	int err = -ENOENT;
	pthread_mutex_lock(&natives_lock);
	for (unsigned i = 0; i < n_natives; i++)
		if (!strcmp(natives[i].name, name)) {
			p->engine = NCCLBPF_ENGINE_NATIVE;
			p->tuner = (struct rt_hook){.fn = natives[i].tuner, .arg = natives[i].arg};
			p->chunk = (struct rt_hook){.fn = natives[i].chunk, .arg = natives[i].arg};
			r->n_progs = (natives[i].tuner != NULL) + (natives[i].chunk != NULL);
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
	pthread_mutex_unlock(&rt.reload_lock);
	return r->err;
}

int ncclbpf_rt_install_native(const char *name, ncclbpf_native_fn tuner, ncclbpf_native_fn chunk,
			      uint64_t arg, struct ncclbpf_reload_report *report)
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
	snprintf(p->name, sizeof(p->name), "native:%s", name ? name : "?");
	p->engine = NCCLBPF_ENGINE_NATIVE;
	p->tuner.fn = tuner;
	p->tuner.arg = arg;
	p->chunk.fn = chunk;
	p->chunk.arg = arg;
	r->n_progs = (tuner != NULL) + (chunk != NULL);
	pthread_mutex_lock(&rt.reload_lock);
	finish(p, r, t0);
	pthread_mutex_unlock(&rt.reload_lock);
	return 0;
}
