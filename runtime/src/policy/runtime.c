/* Process-wide runtime: configuration, the first load and the file watch, the hot-path entry
 * points, the communicator registry and statistics (activation is activate.c's, reload
 * reload.c's). Calls go one way: this file calls watch.c and reload.c, watch.c reload.c,
 * reload.c activate.c, activate.c policy_ref.c. The public start-up and shutdown
 * (ncclbpf_rt_acquire, ncclbpf_comm__new, ...) are start/start.c's, which calls the parts here
 * in order with the other folders'. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ebpf/epoch.h"
#include "ncclbpf/envvars.h"
#include "policy.h"

/* --- Hot path (the entries themselves are inline in runtime.h) ----------------------------- */

_Static_assert(offsetof(struct rt_policy, hot) == 0,
	       "runtime.h's inline entries read a policy as its hot part");

int ncclbpf_rt__run_interp(const struct ebpf_exec *prog, void *ctx)
{
	return rt_bundle_run_interp(prog, ctx);
}

uint32_t ncclbpf_rt_profiler_needs(void)
{
	ebpf_epoch_enter();
	struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE);
	uint32_t needs = p ? p->hot.profiler_needs : 0;
	ebpf_epoch_exit();
	return needs;
}

void ncclbpf_rt_set_engine(int engine)
{
	pthread_mutex_lock(&rt.lock);
	rt.engine = engine;
	rt.engine_forced = 1;
	pthread_mutex_unlock(&rt.lock);
}

/* --- Lifetime ----------------------------------------------------------------------------- */

static void read_config(int no_watch)
{
	/* Every variable of the table that is set is checked now, so that a mistyped one is
	 * reported even where nothing reads it in this run (one WARN each). */
	ncclbpf_env_check_all();
	const char *v = ncclbpf_env_str("NCCLBPF_POLICY");
	rt.have_policy_path = v != NULL;
	snprintf(rt.policy_path, sizeof(rt.policy_path), "%s", v ? v : "");
	if (!rt.engine_forced) /* NCCLBPF_ENGINE's values are in enum order: jit|interp */
		rt.engine = ncclbpf_env_enum("NCCLBPF_ENGINE") == 1 ? NCCLBPF_ENGINE_INTERP
								    : NCCLBPF_ENGINE_JIT;
	/* With the control plane, changes arrive through it at agreed seqs; a file-watch reload
	 * would switch ranks at different calls. */
	rt.watch = !no_watch && ncclbpf_env_bool("NCCLBPF_WATCH");
	rt.debug = ncclbpf_env_bool("NCCLBPF_DEBUG");
	v = ncclbpf_env_str("NCCLBPF_TRACE");
	if (v)
		rt_trace_open(v);
}

/* One WARN per distinct problem per process: NCCL may create and destroy communicators many
 * times, and the user needs the line once, not once per communicator. */
static void warn_once(const char *msg)
{
	static char last[4096];
	if (!strcmp(last, msg))
		return;
	snprintf(last, sizeof(last), "%s", msg);
	rt_log(NCCLBPF_LOG_WARN, "%s", msg);
}

/* The first policy of the process comes from the launch bundle, the bytes the env plugin took
 * its settings from (ncclbpf_rt_launch_bundle); later acquires (all communicators were
 * destroyed, new ones created) read the file again, as a reload would. */
static int load_policy(struct ncclbpf_reload_report *r)
{
	static int launched;
	const char *path;
	const void *img;
	size_t len;
	char why[512];
	if (launched++) /* under start.c's init_lock */
		return ncclbpf_rt_reload(rt.policy_path, r);
	int e = ncclbpf_rt_launch_bundle(&path, &img, &len, why, sizeof(why));
	/* Native, NCCLBPF_POLICY changed since, or unreadable (tried again, and recorded, as any
	 * reload: no settings came from it either). */
	if (e || !path || strcmp(path, rt.policy_path))
		return ncclbpf_rt_reload(rt.policy_path, r);
	void *copy = malloc(len ? len : 1); /* the policy owns its image */
	if (!copy) {
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return r->err = -ENOMEM;
	}
	memcpy(copy, img, len);
	e = rt_reload_image(copy, len, rt.policy_path, r);
	/* Replaced since the launch read: that is a reload (the env settings stay the launch
	 * bundle's, as for any hot reload), done now rather than at the next change. */
	if (!e && rt.watch && rt_launch_changed())
		ncclbpf_rt_reload(rt.policy_path, NULL);
	return e;
}

void rt_policy_first_load(void)
{
	char msg[4096];
	/* What no policy means differs per hook (the tuner leaves tuning to NCCL, the net
	 * transport runs without hooks): the adapters say it (ncclbpf_rt_policy_state). */
	if (!rt.have_policy_path) {
		rt_log(NCCLBPF_LOG_INFO, "NCCLbpf: NCCLBPF_POLICY is not set, no policy loaded");
		return;
	}
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	if (load_policy(&r) != 0) {
		snprintf(msg, sizeof(msg),
			 "NCCLbpf: policy %.3000s not loaded (%.600s); every hook runs without a "
			 "policy",
			 rt.policy_path, r.msg);
		warn_once(msg);
	}
	if (rt.watch && strncmp(rt.policy_path, "native:", 7) &&
	    rt_watch_start(rt.policy_path) != 0)
		rt_log(NCCLBPF_LOG_INFO, "NCCLbpf: cannot watch %s; hot reload only on request",
		       rt.policy_path);
}

enum ncclbpf_policy_state ncclbpf_rt_policy_state(void)
{
	ebpf_epoch_enter();
	int active = __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE) != NULL;
	ebpf_epoch_exit();
	if (active)
		return NCCLBPF_POLICY_ACTIVE;
	pthread_mutex_lock(&rt.lock);
	int configured = rt.have_policy_path;
	pthread_mutex_unlock(&rt.lock);
	return configured ? NCCLBPF_POLICY_FAILED : NCCLBPF_POLICY_UNSET;
}

int rt_policy_acquire(int no_watch)
{
	pthread_mutex_lock(&rt.lock);
	int n = ++rt.refcount;
	if (n == 1)
		read_config(no_watch);
	pthread_mutex_unlock(&rt.lock);
	return n;
}

int rt_policy_release(void)
{
	pthread_mutex_lock(&rt.lock);
	int n = rt.refcount > 0 ? --rt.refcount : 0;
	pthread_mutex_unlock(&rt.lock);
	return n;
}

void rt_policy_shutdown(void)
{
	rt_watch_stop();
	ncclbpf_rt_unload();
	rt_trace_close();
}

/* --- Communicators and statistics ---------------------------------------------------------- */

void rt_comm_register(struct ncclbpf_comm *c)
{
	pthread_mutex_lock(&rt.lock);
	c->next = rt.comms;
	if (rt.comms)
		rt.comms->prev = c;
	rt.comms = c;
	c->serial = (uint32_t)rt.comms_total;
	rt.comms_live++;
	rt.comms_total++;
	pthread_mutex_unlock(&rt.lock);
}

/* Acquire: the loads after one are not made before it (the call numbers below). */
static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

void ncclbpf_comm__stats(const struct ncclbpf_comm *c, uint64_t out[NCCLBPF_STAT_MAX],
			 uint64_t *channels0)
{
	/* Every count derived below comes from the values read here, once each, so they agree
	 * with each other however many calls land meanwhile (ncclbpf_comm__calls: the outcomes
	 * are the calls). */
	for (int i = 0; i < NCCLBPF_STAT_MAX; i++)
		out[i] = ld(&c->stats[i]);
	uint64_t applied = 0, ch = 0;
	for (int a = 0; a < NCCLBPF_NUM_ALGOS; a++)
		for (int p = 0; p < NCCLBPF_NUM_PROTOS; p++)
			applied += ld(&c->applied_cell[a][p]);
	for (int n = 1; n <= 64; n++)
		ch += ld(&c->applied_channels[n]);
	uint64_t runs = applied + out[NCCLBPF_STAT_DEFAULT] + out[NCCLBPF_STAT_INVALID];
	out[NCCLBPF_STAT_CALLS] = runs + out[NCCLBPF_STAT_NO_POLICY] + out[NCCLBPF_STAT_BAD_CALL];
	out[NCCLBPF_STAT_APPLIED] = applied;
	out[NCCLBPF_STAT_RUNS] = runs;
	out[NCCLBPF_STAT_CHUNK_CALLS] = ld(&c->chunk_seq);
	if (channels0)
		*channels0 = applied > ch ? applied - ch : 0;
}

void rt_comm_unregister(struct ncclbpf_comm *c)
{
	uint64_t st[NCCLBPF_STAT_MAX];
	ncclbpf_comm__stats(c, st, NULL);
	rt_log(NCCLBPF_LOG_INFO,
	       "NCCLbpf: communicator %016llx (%u ranks, %u nodes) done: %llu tuner calls, %llu "
	       "policy runs, %llu decisions applied, %llu left to NCCL, %llu invalid, %llu without "
	       "policy, %llu malformed, %llu channel requests dropped (CollNet)",
	       (unsigned long long)c->comm_id, c->n_ranks, c->n_nodes,
	       (unsigned long long)st[NCCLBPF_STAT_CALLS],
	       (unsigned long long)st[NCCLBPF_STAT_RUNS],
	       (unsigned long long)st[NCCLBPF_STAT_APPLIED],
	       (unsigned long long)st[NCCLBPF_STAT_DEFAULT],
	       (unsigned long long)st[NCCLBPF_STAT_INVALID],
	       (unsigned long long)st[NCCLBPF_STAT_NO_POLICY],
	       (unsigned long long)st[NCCLBPF_STAT_BAD_CALL],
	       (unsigned long long)st[NCCLBPF_STAT_CH_SKIPPED]);
	pthread_mutex_lock(&rt.lock);
	for (int i = 0; i < NCCLBPF_STAT_MAX; i++)
		rt.totals[i] += st[i];
	if (c->prev)
		c->prev->next = c->next;
	else
		rt.comms = c->next;
	if (c->next)
		c->next->prev = c->prev;
	rt.comms_live--;
	pthread_mutex_unlock(&rt.lock);
	rt_comm_maps_destroy(c);
}

void ncclbpf_rt_get_stats(struct ncclbpf_rt_stats *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&rt.lock);
	for (int i = 0; i < NCCLBPF_STAT_MAX; i++)
		out->comm[i] = rt.totals[i];
	for (struct ncclbpf_comm *c = rt.comms; c; c = c->next) {
		uint64_t st[NCCLBPF_STAT_MAX];
		ncclbpf_comm__stats(c, st, NULL);
		for (int i = 0; i < NCCLBPF_STAT_MAX; i++)
			out->comm[i] += st[i];
	}
	out->comms_live = rt.comms_live;
	out->comms_total = rt.comms_total;
	out->refcount = rt.refcount;
	pthread_mutex_unlock(&rt.lock);
	out->reloads_ok = atomic_load(&rt.reloads_ok);
	out->reloads_failed = atomic_load(&rt.reloads_failed);
	out->watching = rt_watch_running();
	/* Reading the version requires the policy to stay alive while we look at it. */
	ebpf_epoch_enter();
	struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE);
	out->active_version = p ? p->hot.version : 0;
	ebpf_epoch_exit();
}

const char *ncclbpf_comm_stat_name(enum ncclbpf_comm_stat s)
{
	static const char *const names[NCCLBPF_STAT_MAX] = {
	    "calls",	   "runs",	    "applied",	     "default",
	    "no_policy",   "invalid",	    "bad_call",	     "channels_skipped",
	    "chunk_calls", "chunk_applied", "chunk_invalid",
	};
	return (unsigned)s < NCCLBPF_STAT_MAX ? names[s] : "?";
}
