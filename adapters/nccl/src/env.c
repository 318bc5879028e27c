/* NCCL env plugin adapter: the exported ncclEnvPlugin_v1 and ncclEnvPlugin_v2 tables.
 *
 * With NCCL >= 2.28.7 every ncclGetEnv goes through getEnv (docs/design.md §6.12). We serve the
 * process environment unchanged, with one addition that makes a single variable enough:
 * NCCL_ENV_PLUGIN=<this library> also selects this library as the tuner and the profiler,
 * because an unset NCCL_TUNER_PLUGIN or NCCL_PROFILER_PLUGIN resolves to our own path (§6.2).
 * A value the user set always wins. NCCL_NET_PLUGIN is different: replacing the transport is
 * not something to do by default, so it resolves to our path only when the bundle asks for it
 * with the line `NCCL_NET_PLUGIN=ncclbpf` in its settings (the only value the bundle may give it).
 *
 * Constraints from §6.12: getEnv is called concurrently from any thread, sometimes while NCCL holds
 * its parameter or debug mutex, so it never logs (v2's logger is ignored on purpose) and never
 * calls into NCCL; init always succeeds (a failure would fail every later communicator init).
 * Returned strings stay valid for the life of the process: values are interned in an
 * append-only list that is never freed (the library is linked -z nodelete).
 *
 * Bundle-supplied settings: the policy object NCCLBPF_POLICY names may carry NCCL settings in
 * its ".ncclbpf.env" section (env_settings.h). They are read once per process, on the first init
 * or getEnv (NCCL reads most parameters once anyway; a hot reload does not change them), from
 * the launch bundle: the bytes the runtime also takes its first programs from
 * (ncclbpf_rt_launch_bundle, read under the trusted-path rules without blocking). The process
 * environment wins over a bundle value unless the bundle marks it enforced ('!').
 *
 * Provenance: every (name, value) served is recorded once with where it came from, so that
 * `ncclbpf stat` can show it (env_served_foreach in env_settings.h). The record is the same
 * interned node that keeps the returned string stable, so no allocation is added. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_bundle.h"
#include "nccl_env.h"
#include "ncclbpf/envvars.h"
#include "ncclbpf/runtime.h"

#define EXPORT __attribute__((visibility("default")))

/* Where a served value came from (stable strings: the bundle ones are built once in
 * load_bundle, before any value is served). */
static const char src_env[] = "process environment";
static const char src_default[] = "ncclbpf default";
static char src_bundle[PATH_MAX + 16], src_bundle_enforced[PATH_MAX + 32];

/* One (name, value, source) triple served at least once. Readers walk the list without a lock;
 * writers publish a fully built node with a release store under intern_lock. */
struct env_node {
	const struct env_node *next;
	const char *name;
	const char *value;
	const char *source;
	char text[]; /* name NUL value NUL */
};

static _Atomic(const struct env_node *) intern_head;
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

/* Sources are compared by pointer: each is one of the static strings above. */
static const struct env_node *find(const struct env_node *n, const char *name, const char *value,
				   const char *source)
{
	for (; n; n = n->next)
		if (n->source == source && strcmp(n->name, name) == 0 &&
		    strcmp(n->value, value) == 0)
			return n;
	return NULL;
}

/* A stable copy of value for name: the same pointer every time the pair is served again from
 * the same source. Falls back to the caller's pointer when out of memory (still the right value,
 * only missing from the provenance listing). */
static const char *intern(const char *name, const char *value, const char *source)
{
	const struct env_node *n =
	    find(atomic_load_explicit(&intern_head, memory_order_acquire), name, value, source);
	if (n)
		return n->value;
	pthread_mutex_lock(&intern_lock);
	const struct env_node *head = atomic_load_explicit(&intern_head, memory_order_relaxed);
	n = find(head, name, value, source);
	if (!n) {
		size_t nl = strlen(name) + 1, vl = strlen(value) + 1;
		struct env_node *m = malloc(sizeof(*m) + nl + vl);
		if (m) {
			memcpy(m->text, name, nl);
			memcpy(m->text + nl, value, vl);
			m->name = m->text;
			m->value = m->text + nl;
			m->source = source;
			m->next = head;
			atomic_store_explicit(&intern_head, m, memory_order_release);
			n = m;
		}
	}
	pthread_mutex_unlock(&intern_lock);
	return n ? n->value : value;
}

/* This library's own absolute path, found once through one of our symbols. */
static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static char self_path[PATH_MAX];

static void find_self(void)
{
	Dl_info info;
	if (!dladdr((const void *)&find_self, &info) || !info.dli_fname || !info.dli_fname[0])
		return;
	if (!realpath(info.dli_fname, self_path)) {
		size_t l = strlen(info.dli_fname);
		if (l < sizeof(self_path))
			memcpy(self_path, info.dli_fname, l + 1);
	}
}

/* Variables whose unset value becomes this library's path. NCCL_NET_PLUGIN is not among them:
 * only a bundle selects the net plugin (bundle_value). */
static const char *const self_defaults[] = {
    "NCCL_TUNER_PLUGIN",
    "NCCL_PROFILER_PLUGIN",
};

static const char *self_default(const char *name)
{
	for (size_t i = 0; i < sizeof(self_defaults) / sizeof(self_defaults[0]); i++) {
		if (strcmp(name, self_defaults[i]) == 0) {
			pthread_once(&self_once, find_self);
			return self_path[0] ? self_path : NULL;
		}
	}
	return NULL;
}

/* Written once under bundle_once, read-only afterwards: its strings are stable. */
static pthread_once_t bundle_once = PTHREAD_ONCE_INIT;
static struct env_settings bundle;

static void load_bundle(void)
{
	const char *path;
	const void *img;
	size_t len;
	char why[512] = "";
	/* The launch bundle: the runtime's first policy comes from these same bytes. */
	int rc = ncclbpf_rt_launch_bundle(&path, &img, &len, why, sizeof(why));
	if (!path)
		return;
	int unread = rc != 0;
	snprintf(src_bundle, sizeof(src_bundle), "bundle %s", path);
	snprintf(src_bundle_enforced, sizeof(src_bundle_enforced), "bundle %s (enforced)", path);
	if (!rc)
		rc = env_bundle_parse(img, len, &bundle);
	else
		memset(&bundle, 0, sizeof(bundle));
	/* Never through NCCL's logger (§6.12); stderr only when something was refused, since NCCL
	 * would otherwise run silently with settings the user expected. */
	if (rc)
		fprintf(stderr, "NCCLbpf env: %s: settings not read (%s)\n", path,
			unread ? why : strerror(-rc));
	else if (bundle.n_rejected)
		fprintf(stderr, "NCCLbpf env: %s: %u setting(s) not applied, first at %s\n", path,
			bundle.n_rejected, bundle.first_error);
}

/* The value a bundle setting stands for: its text, except the net plugin selector, whose one
 * allowed value ("ncclbpf", env_settings.c) means this library. NULL when that path is unknown. */
static const char *bundle_value(const struct env_setting *b)
{
	if (strcmp(b->name, "NCCL_NET_PLUGIN") == 0) {
		pthread_once(&self_once, find_self);
		return self_path[0] ? self_path : NULL;
	}
	return b->value;
}

static const char *get_env(const char *name)
{
	if (!name)
		return NULL;
	pthread_once(&bundle_once, load_bundle);
	const char *v = ncclbpf_env_raw(name); /* NCCL's own variable, served unchanged */
	const struct env_setting *b = bundle.n ? env_settings_find(&bundle, name) : NULL;
	if (b && (b->enforced || !v)) {
		const char *bv = bundle_value(b);
		if (bv)
			return intern(name, bv, b->enforced ? src_bundle_enforced : src_bundle);
	}
	if (v)
		return intern(name, v, src_env);
	const char *d = self_default(name);
	return d ? intern(name, d, src_default) : NULL;
}

void env_served_foreach(env_served_fn fn, void *arg)
{
	for (const struct env_node *n = atomic_load_explicit(&intern_head, memory_order_acquire); n;
	     n = n->next)
		fn(n->name, n->value, n->source, arg);
}

static ncclResult_t init_v1(uint8_t major, uint8_t minor, uint8_t patch, const char *suffix)
{
	(void)major, (void)minor, (void)patch, (void)suffix;
	pthread_once(&self_once, find_self);
	pthread_once(&bundle_once, load_bundle);
	return ncclSuccess;
}

static ncclResult_t init_v2(uint8_t major, uint8_t minor, uint8_t patch, const char *suffix,
			    ncclDebugLogger_t log_fn)
{
	(void)log_fn; /* never used: logging from the env plugin can deadlock NCCL (§6.12) */
	return init_v1(major, minor, patch, suffix);
}

/* Nothing to release: NCCL may still hold strings we returned, and the library stays mapped. */
static ncclResult_t finalize(void)
{
	return ncclSuccess;
}

EXPORT const ncclEnv_v1_t ncclEnvPlugin_v1 = {
    .name = "NCCLbpf",
    .init = init_v1,
    .finalize = finalize,
    .getEnv = get_env,
};

EXPORT const ncclEnv_v2_t ncclEnvPlugin_v2 = {
    .name = "NCCLbpf",
    .init = init_v2,
    .finalize = finalize,
    .getEnv = get_env,
};
