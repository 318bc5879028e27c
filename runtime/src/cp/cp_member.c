/* Control plane, member side: a communicator's binding to a policy, its fences and queued
 * switches, and the hot path's slow path (docs/control-plane.md, "Member").
 *
 * Threads: the communicator's own calling thread (NCCL serialises a communicator's tuner calls)
 * runs ncclbpf_comm__tick and, when a switch is due or a fence is reached, ncclbpf_cp__slow;
 * the process's control thread (cp_thread.c) prepares proposals, sets fences and learns
 * decisions. Both take m->lock for anything but the tick's two atomics. Only the calling
 * thread switches c->cp_policy, so a call always runs one whole policy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_internal.h"
#include "ebpf/epoch.h"
#include "ebpf/maps.h"
#include "ebpf/object.h"

int ncclbpf_comm__cp_version(const struct ncclbpf_comm *c, uint64_t *g, uint64_t *hash)
{
	const struct ncclbpf_cp_member *m = c->cp;
	if (!m)
		return 0;
	*g = atomic_load_explicit(&((struct ncclbpf_cp_member *)m)->g, memory_order_relaxed);
	*hash = atomic_load_explicit(&((struct ncclbpf_cp_member *)m)->hash, memory_order_relaxed);
	return 1;
}

/* --- Binding ------------------------------------------------------------------------------ */

void cp_member_attach(struct ncclbpf_comm *c)
{
	const struct cp_config *k = cp_cfg();
	if (!k->on)
		return;
	if (c->api_version < 5) {
		static int said;
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			rt_log(
			    NCCLBPF_LOG_WARN,
			    "NCCLbpf: tuner v%u gives no communicator id; its communicators keep "
			    "the process-wide policy and do not take part in the control plane",
			    c->api_version);
		return;
	}
	struct ncclbpf_cp_member *m = calloc(1, sizeof(*m));
	if (!m)
		return;
	pthread_mutex_init(&m->lock, NULL);
	m->c = c;
	snprintf(m->id, sizeof(m->id), "%s.%d.%u", cp_hostname(), (int)getpid(), c->serial);
	snprintf(m->comm, sizeof(m->comm), "%016llx", (unsigned long long)c->comm_id);
	snprintf(m->cdir, sizeof(m->cdir), "%s/comms/%s", k->dir, m->comm);
	char sub[CP_PATH + 32];
	snprintf(sub, sizeof(sub), "%s/members", m->cdir);
	int e = cp_mkdirs(sub);
	snprintf(sub, sizeof(sub), "%s/reloads", m->cdir);
	if (!e)
		e = cp_mkdirs(sub);
	if (e) {
		/* Without the medium this member never acknowledges: every reload of its
		 * communicator aborts, which keeps the ranks consistent. */
		rt_log(
		    NCCLBPF_LOG_WARN,
		    "NCCLbpf: control plane directory %s unusable (%s); communicator %s keeps its "
		    "launch policy",
		    m->cdir, strerror(-e), m->comm);
		pthread_mutex_destroy(&m->lock);
		free(m);
		return;
	}
	/* g = 0 is the launch bundle: the process default when the communicator is created. */
	pthread_mutex_lock(&rt.reload_lock);
	struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_SEQ_CST);
	rt_policy_get(p);
	pthread_mutex_unlock(&rt.reload_lock);
	c->cp_policy = p;
	atomic_store(&m->hash, p ? p->hash : 0);
	m->created_ns = cp_realtime_ns();
	cp_write_member_record(m);
	cp_log_line("cp comm=%s member=%s seq=0 g=0 hash=%016llx reload=launch\n", m->comm, m->id,
		    (unsigned long long)(p ? p->hash : 0));
	pthread_mutex_lock(&cp.lock);
	m->next = cp.members;
	cp.members = m;
	pthread_mutex_unlock(&cp.lock);
	__atomic_store_n(&c->cp, m, __ATOMIC_RELEASE);
	if (cp_thread_start() != 0)
		rt_log(NCCLBPF_LOG_WARN,
		       "NCCLbpf: cannot start the control thread; reloads of "
		       "communicator %s will abort",
		       m->comm);
	rt_log(NCCLBPF_LOG_INFO, "NCCLbpf: communicator %s member %s in control plane %s", m->comm,
	       m->id, k->dir);
}

void cp_member_detach(struct ncclbpf_comm *c)
{
	struct ncclbpf_cp_member *m = c->cp;
	if (!m)
		return;
	pthread_mutex_lock(&cp.lock);
	for (struct ncclbpf_cp_member **pp = &cp.members; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	int last = cp.members == NULL;
	pthread_mutex_unlock(&cp.lock);
	/* Switches already made are reported; reloads still undecided end here for this member
	 * (the controller reports it as not done). */
	cp_finish_pends(m, 1);
	char path[CP_PATH + 256];
	snprintf(path, sizeof(path), "%s/members/%s", m->cdir, m->id);
	unlink(path);
	c->cp = NULL;
	c->cp_next = UINT64_MAX;
	rt_policy_put(c->cp_policy);
	c->cp_policy = NULL;
	cp_names_free(m->seen, m->n_seen);
	pthread_mutex_destroy(&m->lock);
	free(m);
	if (last)
		cp_thread_stop();
}

/* The decision of p (acked, fence reached) can be neither read nor created, even after twice
 * NCCLBPF_CP_WAIT_MS: the call goes on with the version it has, and this member leaves the
 * control plane (it acknowledges no later proposal, so every later reload of its communicator
 * aborts instead of splitting the ranks again). Under m->lock. */
static void give_up(struct ncclbpf_cp_member *m, struct cp_pend *p, const char *why)
{
	snprintf(p->msg, sizeof(p->msg), "decision unreadable and uncreatable (%.200s)", why);
	p->state = CP_FAILED;
	atomic_store(&m->left, 1);
	rt_log(NCCLBPF_LOG_WARN,
	       "NCCLbpf: reload %s of %s: its decision can be neither read nor created in %s "
	       "(%s) after %u ms; this communicator keeps version g=%llu and leaves the control "
	       "plane (if the reload was committed elsewhere, this rank now decides differently: "
	       "restart the job)",
	       p->R, m->comm, m->cdir, why, 2 * cp_cfg()->wait_ms,
	       (unsigned long long)atomic_load(&m->g));
}

/* --- Switching (calling thread, under m->lock) -------------------------------------------- */

static void apply(struct ncclbpf_cp_member *m, struct cp_pend *p)
{
	struct ncclbpf_comm *c = m->c;
	struct rt_policy *old = c->cp_policy, *P = p->P;
	if (p->kind == CP_KIND_MAP) {
		/* P was rebuilt from the policy bound when the proposal arrived. If another
		 * change was switched to since (concurrent reloads), rebuild from the current
		 * one: every rank switches in the same order, so they all rebuild the same. */
		if (!old || !old->image || old->hash != P->hash) {
			char msg[NCCLBPF_CP_MSG] = "";
			struct rt_policy *np =
			    old && old->image ? cp_build(old, msg, sizeof(msg)) : NULL;
			if (!np) {
				snprintf(p->msg, sizeof(p->msg), "rebuild at seq %llu failed: %s",
					 (unsigned long long)p->S,
					 msg[0] ? msg : "no bundle image bound");
				rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: map update %s of %s: %s", p->R,
				       m->comm, p->msg);
				p->state = CP_FAILED;
				return;
			}
			rt_policy_put(P);
			P = p->P = np;
		}
		rt_bundle_carry_maps(P, old, 1); /* the same bundle rebuilt */
		for (struct cp_update *u = p->updates; u; u = u->next) {
			struct ebpf_map *mp = rt_bundle_find_map(P, u->map);
			int e = mp ? ebpf_map__user_update(mp, u->key, u->val, EBPF_ANY) : -ENOENT;
			if (e)
				rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: map update %s: %s: error %d",
				       p->R, u->map, e);
		}
	} else {
		rt_bundle_carry_maps(P, old, 0);
	}
	__atomic_store_n((struct rt_policy **)&c->cp_policy, P, __ATOMIC_RELEASE);
	p->P = NULL;
	uint64_t g = atomic_load(&m->g) + 1;
	atomic_store(&m->g, g);
	atomic_store(&m->hash, P->hash);
	p->g = g;
	p->state = CP_APPLIED;
	/* Calls of this communicator that ran old have returned (same thread); others sharing
	 * it (the process default, other communicators) keep it alive through their refs. */
	rt_policy_put(old);
	ebpf_epoch_reclaim();
}

/* Committed switches due at s, in (S, R) order. */
static void apply_due(struct ncclbpf_cp_member *m, uint64_t s)
{
	for (;;) {
		struct cp_pend *best = NULL;
		for (struct cp_pend *p = m->pends; p; p = p->next)
			if (p->state == CP_COMMITTED && p->S <= s &&
			    (!best || p->S < best->S ||
			     (p->S == best->S && strcmp(p->R, best->R) < 0)))
				best = p;
		if (!best)
			return;
		apply(m, best);
	}
}

/* The member promised not to run seq >= B before knowing R's decision. For every unresolved
 * fence at or below s: read the decision directly every millisecond; at the deadline (one for
 * the whole call, so that several undecided reloads do not add up) try to decide abort with
 * link(); whatever decision exists then is the outcome. A decision that can be neither read
 * nor created is tried for one more NCCLBPF_CP_WAIT_MS, then given up (give_up()): a call never
 * waits more than twice NCCLBPF_CP_WAIT_MS, whatever the directory's state. Called and returns
 * with m->lock held. */
static void wait_fences(struct ncclbpf_cp_member *m, uint64_t s)
{
	const struct cp_config *k = cp_cfg();
	uint64_t t0 = rt_now_ns(), wait = (uint64_t)k->wait_ms * 1000000ull;
	uint64_t deadline = t0 + wait, last_chance = deadline + wait;
	char d[300], R[160];
	int warned = 0;
	for (;;) {
		struct cp_pend *f = NULL;
		for (struct cp_pend *p = m->pends; p && !f; p = p->next)
			if (p->state == CP_ACKED && p->B <= s)
				f = p;
		if (!f)
			break;
		/* The control thread never frees a pend in state ACKED, and only this thread
		 * moves it out of ACKED when it is the one waiting... but it may resolve it: pin
		 * it while the lock is dropped. */
		f->busy = 1;
		snprintf(R, sizeof(R), "%s", f->R);
		pthread_mutex_unlock(&m->lock);
		int got = cp_read_decision(m, R, d, sizeof(d)) == 0, lost = 0;
		if (!got && rt_now_ns() >= deadline) {
			/* Past the deadline every remaining fence is decided now: ours, or the
			 * decision someone created first. */
			char dir[CP_PATH + 256], rec[300];
			snprintf(dir, sizeof(dir), "%s/reloads/%s", m->cdir, R);
			int n = snprintf(rec, sizeof(rec), "abort fence-timeout %s\n", m->id);
			int e = cp_create_once(dir, "decision", rec, (size_t)n);
			got = cp_read_decision(m, R, d, sizeof(d)) == 0;
			if (!got) {
				/* Neither readable nor creatable. Only a removed reload directory
				 * means abort: controllers remove one only after its decision, and
				 * a commit only once every rank is done with it. Anything else (a
				 * full or read-only /dev/shm, EIO, a stale read on NFS) says
				 * nothing about the outcome (found by the model:
				 * models/control-plane, assume_lost_decision): keep trying, with
				 * one warning per call, until the last chance. */
				struct stat st;
				if (stat(dir, &st) != 0 && errno == ENOENT) {
					snprintf(d, sizeof(d),
						 "abort decision and reload directory gone");
					rt_log(NCCLBPF_LOG_WARN,
					       "NCCLbpf: reload %s of %s: no decision readable or "
					       "creatable in %s (%s); treated as aborted",
					       R, m->comm, m->cdir, strerror(-e));
					got = 1;
				} else if (rt_now_ns() >= last_chance) {
					snprintf(d, sizeof(d), "%s", strerror(-e));
					lost = 1;
				} else if (!warned) {
					warned = 1;
					rt_log(
					    NCCLBPF_LOG_WARN,
					    "NCCLbpf: reload %s of %s: cannot read or create its "
					    "decision in %s (%s); trying for %u ms more",
					    R, m->comm, dir, strerror(-e), k->wait_ms);
				}
			}
		}
		if (!got && !lost)
			cp_sleep_ms(1);
		pthread_mutex_lock(&m->lock);
		f->busy = 0;
		if (got)
			cp_resolve(m, f, d);
		else if (lost)
			give_up(m, f, d);
	}
	uint64_t w = rt_now_ns() - t0;
	if (w > atomic_load(&m->max_wait_ns))
		atomic_store(&m->max_wait_ns, w);
}

void ncclbpf_cp__slow(struct ncclbpf_comm *c, uint64_t s)
{
	struct ncclbpf_cp_member *m = c->cp;
	pthread_mutex_lock(&m->lock);
	wait_fences(m, s);
	/* Every fence at or below s is resolved: the committed switches due now are known. */
	apply_due(m, s);
	cp_recompute_next(m);
	pthread_mutex_unlock(&m->lock);
}
