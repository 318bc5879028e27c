/* Request handlers of the inspection server (protocol: inspect.h). Everything here runs on the
 * inspection thread. Counters are read with relaxed atomic loads; the runtime's locks (rt.lock
 * for the communicator registry, rt.reload_lock for the active policy) are taken only here and
 * by other slow paths, never by the hot path, so a client reading in a loop cannot slow hook
 * calls down. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp/cp_internal.h"
#include "inspect.h"
#include "ebpf/epoch.h"

static _Atomic(ncclbpf_env_reporter_fn) env_reporter;

void ncclbpf_rt_set_env_reporter(ncclbpf_env_reporter_fn fn)
{
	atomic_store(&env_reporter, fn);
}

static const char *const algo_names[NCCLBPF_NUM_ALGOS] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
static const char *const proto_names[NCCLBPF_NUM_PROTOS] = {"ll", "ll128", "simple"};

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static const char *engine_name(int e)
{
	return e == NCCLBPF_ENGINE_JIT ? "jit" : e == NCCLBPF_ENGINE_INTERP ? "interp" : "native";
}

/* Calls summed over live communicators plus finished ones. */
static void totals(uint64_t *calls, uint64_t *live)
{
	struct ncclbpf_rt_stats st;
	ncclbpf_rt_get_stats(&st);
	*calls = st.comm[NCCLBPF_STAT_CALLS];
	*live = st.comms_live;
}

static void process_record(struct insp_out *o)
{
	uint64_t calls, live;
	totals(&calls, &live);
	struct rt_reload_event ev[RT_RELOAD_HISTORY];
	uint64_t n_reloads = 0;
	unsigned k = rt_reload_history(ev, RT_RELOAD_HISTORY, &n_reloads);
	int have_last = k > 0;
	const struct rt_reload_event *last = have_last ? &ev[k - 1] : NULL;
	insp_begin(o, "process");
	insp_kvi(o, "pid", insp_ident.id.pid);
	insp_kv(o, "host", insp_ident.id.host);
	insp_kvu(o, "uid", insp_ident.id.uid);
	insp_kv(o, "job", insp_ident.id.job);
	insp_kv(o, "rank", insp_ident.id.rank);
	insp_kv(o, "local_rank", insp_ident.id.local_rank);
	insp_kvu(o, "start_ns", insp_ident.id.start_unix_ns);
	pthread_mutex_lock(&rt.reload_lock);
	const struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_SEQ_CST);
	insp_kv(o, "bundle", p ? p->name : "-");
	insp_kvu(o, "version", p ? p->hot.version : 0);
	insp_kv(o, "engine", p ? engine_name(p->engine) : "-");
	pthread_mutex_unlock(&rt.reload_lock);
	insp_kvu(o, "comms", live);
	insp_kvu(o, "calls", calls);
	insp_kvu(o, "reloads", n_reloads);
	insp_kvu(o, "last_reload_ns", have_last ? last->unix_ns : 0);
	insp_kv(o, "last_result", !have_last ? "-" : last->err ? "failed" : "ok");
	insp_end(o);
}

static void comm_records(struct insp_out *o)
{
	pthread_mutex_lock(&rt.lock);
	for (const struct ncclbpf_comm *c = rt.comms; c; c = c->next) {
		char id[20];
		snprintf(id, sizeof(id), "%016llx", (unsigned long long)c->comm_id);
		insp_begin(o, "comm");
		insp_kvu(o, "serial", c->serial);
		insp_kv(o, "id", id);
		insp_kvu(o, "n_ranks", c->n_ranks);
		insp_kvu(o, "n_nodes", c->n_nodes);
		insp_kvu(o, "api", c->api_version);
		/* Under the control plane: the job-consistent version this communicator runs. */
		struct ncclbpf_cp_member *m = __atomic_load_n(&c->cp, __ATOMIC_ACQUIRE);
		if (m) {
			char h[20];
			snprintf(h, sizeof(h), "%016llx",
				 (unsigned long long)atomic_load(&m->hash));
			insp_kvu(o, "cp_g", atomic_load(&m->g));
			insp_kv(o, "cp_hash", h);
		}
		uint64_t st[NCCLBPF_STAT_MAX], ch0;
		ncclbpf_comm__stats(c, st, &ch0);
		for (int s = 0; s < NCCLBPF_STAT_MAX; s++)
			insp_kvu(o, ncclbpf_comm_stat_name(s), st[s]);
		insp_end(o);
		for (int a = 0; a < NCCLBPF_NUM_ALGOS; a++)
			for (int p = 0; p < NCCLBPF_NUM_PROTOS; p++) {
				uint64_t v = ld(&c->applied_cell[a][p]);
				if (!v)
					continue;
				insp_begin(o, "cell");
				insp_kvu(o, "comm", c->serial);
				insp_kv(o, "algo", algo_names[a]);
				insp_kv(o, "proto", proto_names[p]);
				insp_kvu(o, "count", v);
				insp_end(o);
			}
		for (int ch = 0; ch <= 64; ch++) {
			uint64_t v = ch ? ld(&c->applied_channels[ch]) : ch0;
			if (!v)
				continue;
			insp_begin(o, "channels");
			insp_kvu(o, "comm", c->serial);
			insp_kvu(o, "n", (uint64_t)ch);
			insp_kvu(o, "count", v);
			insp_end(o);
		}
	}
	pthread_mutex_unlock(&rt.lock);
}

static void totals_record(struct insp_out *o)
{
	struct ncclbpf_rt_stats st;
	ncclbpf_rt_get_stats(&st);
	insp_begin(o, "totals");
	insp_kvu(o, "comms_live", st.comms_live);
	insp_kvu(o, "comms_total", st.comms_total);
	for (int s = 0; s < NCCLBPF_STAT_MAX; s++)
		insp_kvu(o, ncclbpf_comm_stat_name(s), st.comm[s]);
	insp_kvu(o, "reloads_ok", st.reloads_ok);
	insp_kvu(o, "reloads_failed", st.reloads_failed);
	insp_kvu(o, "watching", (uint64_t)st.watching);
	insp_end(o);
}

/* The net plugin's completion queues (net_defer.c); only in processes that ever had one. */
static void net_record(struct insp_out *o)
{
	struct ncclbpf_net_queue_stats q;
	ncclbpf_rt_net_queue_stats(&q);
	if (!q.queues && !q.queued)
		return;
	insp_begin(o, "net");
	insp_kvu(o, "queues", q.queues);
	insp_kvu(o, "queued", q.queued);
	insp_kvu(o, "drained", q.drained);
	insp_kvu(o, "catch_up", q.catch_up);
	insp_kvu(o, "inline_full", q.inline_full);
	insp_kvu(o, "other_thread", q.other_thread);
	insp_kvu(o, "pending", q.pending);
	insp_kvu(o, "drain_thread", q.drain_thread);
	insp_end(o);
}

static void policy_records(struct insp_out *o)
{
	pthread_mutex_lock(&rt.reload_lock);
	const struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_SEQ_CST);
	if (p) {
		const struct ncclbpf_reload_report *r = &p->load;
		insp_begin(o, "policy");
		insp_kvu(o, "version", p->hot.version);
		insp_kv(o, "bundle", p->name);
		insp_kv(o, "engine", engine_name(p->engine));
		insp_kvu(o, "progs", r->n_progs);
		insp_kvu(o, "maps", r->n_maps);
		insp_kvu(o, "maps_kept", r->maps_kept);
		insp_kvu(o, "parse_ns", r->parse_ns);
		insp_kvu(o, "verify_ns", r->verify_ns);
		insp_kvu(o, "load_ns", r->load_ns);
		insp_kvu(o, "jit_ns", r->jit_ns);
		insp_kvu(o, "carry_ns", r->carry_ns);
		insp_end(o);
		insp_bundle_progs(o, p);
	}
	pthread_mutex_unlock(&rt.reload_lock);
}

static void reload_records(struct insp_out *o)
{
	struct rt_reload_event ev[RT_RELOAD_HISTORY];
	uint64_t total = 0;
	unsigned k = rt_reload_history(ev, RT_RELOAD_HISTORY, &total);
	for (unsigned i = 0; i < k; i++) {
		insp_begin(o, "reload");
		insp_kvu(o, "n", total - k + i + 1);
		insp_kvu(o, "time_ns", ev[i].unix_ns);
		insp_kv(o, "result", ev[i].err ? "failed" : "ok");
		insp_kvi(o, "err", ev[i].err);
		insp_kvu(o, "version", ev[i].version);
		insp_kvu(o, "total_ns", ev[i].total_ns);
		insp_kvu(o, "verify_ns", ev[i].verify_ns);
		insp_kvu(o, "jit_ns", ev[i].jit_ns);
		insp_kv(o, "bundle", ev[i].path);
		insp_kv(o, "msg", ev[i].msg);
		insp_end(o);
	}
}

static void emit_env(const char *name, const char *value, const char *source, void *arg)
{
	struct insp_out *o = arg;
	insp_begin(o, "env");
	insp_kv(o, "name", name);
	insp_kv(o, "value", value);
	insp_kv(o, "source", source ? source : "-");
	insp_end(o);
}

static void env_records(struct insp_out *o)
{
	ncclbpf_env_reporter_fn fn = atomic_load(&env_reporter);
	if (fn)
		fn(emit_env, o);
}

/* With the control plane on, a communicator runs the policy bound to it: after the first
 * change it activated (g > 0) that is its own copy, holding the uniform maps' current contents
 * (every communicator of the job received the same changes). The first such communicator's, or
 * NULL. Caller is in an epoch section, which keeps the policy from being freed. */
static const struct rt_policy *comm_bound_policy(void)
{
	const struct rt_policy *q = NULL;
	pthread_mutex_lock(&rt.lock);
	for (const struct ncclbpf_comm *c = rt.comms; c && !q; c = c->next) {
		struct ncclbpf_cp_member *m = __atomic_load_n(&c->cp, __ATOMIC_ACQUIRE);
		if (m && atomic_load(&m->g) > 0)
			q = __atomic_load_n((struct rt_policy **)&c->cp_policy, __ATOMIC_ACQUIRE);
	}
	pthread_mutex_unlock(&rt.lock);
	return q;
}

static int map_cmd(struct insp_out *o, char **tok, int n)
{
	char msg[400] = "";
	int err = 0;
	ncclbpf_rt_net_flush(); /* every queued completion shows in what is read */
	pthread_mutex_lock(&rt.reload_lock);
	const struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_SEQ_CST);
	if (!p) {
		snprintf(msg, sizeof(msg), "no active policy");
		err = -ENOENT;
	} else if (n == 1 && !strcmp(tok[0], "list")) {
		insp_bundle_maps(o, p);
	} else if (n == 2 && !strcmp(tok[0], "dump")) {
		ebpf_epoch_enter();
		const struct rt_policy *q =
		    insp_bundle_map_is_uniform(p, tok[1]) ? comm_bound_policy() : NULL;
		err = insp_bundle_map_dump(o, q ? q : p, tok[1]);
		ebpf_epoch_exit();
		if (err == -ENOENT)
			snprintf(msg, sizeof(msg), "no map '%s' in the active policy", tok[1]);
		else if (err)
			snprintf(msg, sizeof(msg), "dump of '%s' failed: %s", tok[1],
				 strerror(-err));
	} else if (n == 4 && !strcmp(tok[0], "update")) {
		err = insp_bundle_map_update(p, tok[1], tok[2], tok[3], msg, sizeof(msg));
	} else {
		snprintf(msg, sizeof(msg),
			 "usage: map dump NAME | map update NAME KEYHEX VALUEHEX");
		err = -EINVAL;
	}
	pthread_mutex_unlock(&rt.reload_lock);
	if (err)
		insp_error(o, "%s", msg[0] ? msg : strerror(-err));
	else
		insp_ok(o);
	return 0;
}

int insp_handle(struct insp_out *o, char *line)
{
	char *tok[8];
	int n = 0;
	for (char *save = NULL, *t = strtok_r(line, " \t\r", &save); t && n < 8;
	     t = strtok_r(NULL, " \t\r", &save))
		tok[n++] = t;
	if (!n) {
		insp_error(o, "empty request");
		return 0;
	}
	if (!strcmp(tok[0], "quit"))
		return 1;
	if (!strcmp(tok[0], "map"))
		return map_cmd(o, tok + 1, n - 1);
	if (n != 1) {
		insp_error(o, "unknown request '%s'", tok[0]);
		return 0;
	}
	if (!strcmp(tok[0], "info")) {
		process_record(o);
	} else if (!strcmp(tok[0], "stat")) {
		process_record(o);
		totals_record(o);
		net_record(o);
		comm_records(o);
		policy_records(o);
		reload_records(o);
		env_records(o);
	} else if (!strcmp(tok[0], "maps")) {
		char *list[1] = {"list"};
		return map_cmd(o, list, 1);
	} else if (!strcmp(tok[0], "env")) {
		env_records(o);
	} else if (!strcmp(tok[0], "telemetry")) {
		insp_telemetry(o);
	} else {
		insp_error(
		    o,
		    "unknown request '%s' (info, stat, maps, map dump|update, env, telemetry, "
		    "quit)",
		    tok[0]);
		return 0;
	}
	insp_ok(o);
	return 0;
}
