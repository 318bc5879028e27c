/* Control plane: the process's control thread. Every NCCLBPF_CP_POLL_MS it looks at the reload
 * directories of each communicator member of this process: prepares new proposals (load,
 * verify, JIT), sets the fence and acknowledges, learns decisions, and writes the done files
 * of switches the calling threads made. It also keeps the member and process records fresh. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/rt_service.h"
#include "cp_internal.h"
#include "ncclbpf/control.h"
#include "ncclbpf/hex.h"
#include "ncclbpf/proc_registry.h"
#include "ebpf/maps.h"
#include "ebpf/object.h"

/* --- Records ------------------------------------------------------------------------------ */

void cp_write_member_record(struct ncclbpf_cp_member *m)
{
	char rec[1024], dir[CP_PATH + 32];
	struct ncclbpf_comm *c = m->c;
	int n = snprintf(
	    rec, sizeof(rec),
	    "member=%s\ncomm=%s\nn_ranks=%u\nn_nodes=%u\nhost=%s\npid=%d\nproc_start=%llu\n"
	    "created=%llu\nupdated=%llu\nseq=%llu\ng=%llu\nhash=%016llx\n"
	    "max_wait_us=%llu\nleft=%d\n",
	    m->id, m->comm, c->n_ranks, c->n_nodes, cp_hostname(), (int)getpid(),
	    ncclbpf_rt_proc_start((int)getpid()), (unsigned long long)m->created_ns,
	    (unsigned long long)cp_realtime_ns(),
	    (unsigned long long)__atomic_load_n(&c->seq, __ATOMIC_RELAXED),
	    (unsigned long long)atomic_load(&m->g), (unsigned long long)atomic_load(&m->hash),
	    (unsigned long long)(atomic_load(&m->max_wait_ns) / 1000), atomic_load(&m->left));
	snprintf(dir, sizeof(dir), "%s/members", m->cdir);
	cp_write(dir, m->id, rec, (size_t)n);
}

/* --- Preparing a proposal ----------------------------------------------------------------- */

/* Loads image (taking ownership) into a new policy; NULL with msg on failure. */
static struct rt_policy *build_image(void *image, size_t len, const char *name, char *msg,
				     size_t mlen)
{
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	struct rt_policy *p = rt_policy_load(image, len, name, &r);
	if (!p) {
		snprintf(msg, mlen, "%s", r.msg[0] ? r.msg : strerror(-r.err));
		return NULL;
	}
	p->hash = ncclbpf_cp_hash(image, len);
	p->hot.version = atomic_fetch_add(&rt.next_version, 1);
	return p;
}

/* A fresh copy of base from its in-memory ELF image (map-update proposals). */
struct rt_policy *cp_build(const struct rt_policy *base, char *msg, size_t len)
{
	void *img = malloc(base->image_len ? base->image_len : 1);
	if (!img) {
		snprintf(msg, len, "out of memory");
		return NULL;
	}
	memcpy(img, base->image, base->image_len);
	return build_image(img, base->image_len, base->name, msg, len);
}

static int prepare_bundle(struct ncclbpf_cp_member *m, const char *rdir, const char *prop,
			  struct cp_pend *p)
{
	char path[CP_PATH + 512], name[1024] = "";
	snprintf(path, sizeof(path), "%s/bundle.o", rdir);
	char *img;
	size_t len;
	int e = cp_read(path, &img, &len, EBPF_OBJECT_MAX_SIZE + 1);
	if (e) {
		snprintf(p->msg, sizeof(p->msg), "cannot read bundle.o: %s", strerror(-e));
		return e;
	}
	if (ncclbpf_cp_hash(img, len) != p->hash) {
		snprintf(p->msg, sizeof(p->msg), "bundle.o hash %016llx, proposal says %016llx",
			 (unsigned long long)ncclbpf_cp_hash(img, len),
			 (unsigned long long)p->hash);
		free(img);
		return -EBADMSG;
	}
	if (cp_kv(prop, "name", name, sizeof(name)) || !name[0])
		snprintf(name, sizeof(name), "%s/bundle.o", p->R);
	p->P = build_image(img, len, name, p->msg, sizeof(p->msg));
	(void)m;
	return p->P ? 0 : -EINVAL;
}

static int prepare_map(struct ncclbpf_cp_member *m, const char *prop, struct cp_pend *p)
{
	/* The binding is switched under m->lock only: a reference taken under it stays valid. */
	pthread_mutex_lock(&m->lock);
	struct rt_policy *base = m->c->cp_policy;
	rt_policy_get(base);
	pthread_mutex_unlock(&m->lock);
	int e = 0;
	if (!base || !base->image) {
		snprintf(p->msg, sizeof(p->msg), "no bundle bound (%s)",
			 base ? "native policy" : "no policy");
		e = -ENOENT;
		goto out;
	}
	p->P = cp_build(base, p->msg, sizeof(p->msg));
	if (!p->P) {
		e = -EINVAL;
		goto out;
	}
	struct cp_update **tail = &p->updates;
	char mapname[128], hk[8200], hv[8200];
	for (unsigned i = 0; cp_kv_nth(prop, "name", i, mapname, sizeof(mapname)) == 0; i++) {
		struct cp_update *u = calloc(1, sizeof(*u));
		if (!u || cp_kv_nth(prop, "key", i, hk, sizeof(hk)) ||
		    cp_kv_nth(prop, "value", i, hv, sizeof(hv))) {
			free(u);
			snprintf(p->msg, sizeof(p->msg), "malformed map proposal (entry %u)", i);
			e = -EINVAL;
			goto out;
		}
		*tail = u;
		tail = &u->next;
		snprintf(u->map, sizeof(u->map), "%s", mapname);
		u->key = malloc(strlen(hk) / 2 + 1);
		u->val = malloc(strlen(hv) / 2 + 1);
		int kl = u->key ? ncclbpf_unhex(hk, u->key, strlen(hk) / 2, NULL, 0) : -ENOMEM;
		int vl = u->val ? ncclbpf_unhex(hv, u->val, strlen(hv) / 2, NULL, 0) : -ENOMEM;
		struct ebpf_map *mp = rt_bundle_find_map(p->P, mapname);
		if (kl < 0 || vl < 0) {
			snprintf(p->msg, sizeof(p->msg), "malformed key or value for map %s",
				 mapname);
			e = -EINVAL;
		} else if (!mp) {
			snprintf(p->msg, sizeof(p->msg), "policy %s has no map %s", base->name,
				 mapname);
			e = -ENOENT;
		} else if (ebpf_map__flags(mp) & EBPF_MAP_F_PER_COMM) {
			/* each communicator's programs own its contents (docs/maps.md) */
			snprintf(p->msg, sizeof(p->msg),
				 "map %s is per-communicator: it takes no updates from outside",
				 mapname);
			e = -EPERM;
		} else if ((size_t)kl != ebpf_map__key_size(mp) ||
			   (size_t)vl != ebpf_map__user_value_size(mp)) {
			snprintf(p->msg, sizeof(p->msg),
				 "map %s: key %d bytes, value %d bytes; the map has %u and %zu",
				 mapname, kl, vl, ebpf_map__key_size(mp),
				 ebpf_map__user_value_size(mp));
			e = -EINVAL;
		}
		if (e)
			goto out;
		u->klen = (size_t)kl;
		u->vlen = (size_t)vl;
	}
	if (!p->updates) {
		snprintf(p->msg, sizeof(p->msg), "map proposal without entries");
		e = -EINVAL;
	}
out:
	rt_policy_put(base);
	return e;
}

static void write_done(struct ncclbpf_cp_member *m, const char *R, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void write_done(struct ncclbpf_cp_member *m, const char *R, const char *fmt, ...)
{
	char dir[CP_PATH + 256], name[200], rec[NCCLBPF_CP_MSG + 64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(rec, sizeof(rec) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n >= (int)sizeof(rec) - 1)
		n = (int)sizeof(rec) - 2;
	rec[n++] = '\n';
	snprintf(dir, sizeof(dir), "%s/reloads/%s", m->cdir, R);
	snprintf(name, sizeof(name), "done.%s", m->id);
	cp_create_once(dir, name, rec, (size_t)n);
}

static uint64_t lead(struct ncclbpf_cp_member *m)
{
	const struct cp_config *k = cp_cfg();
	if (k->lead)
		return k->lead;
	return m->rate > 64 ? m->rate : 64;
}

/* A reload directory this member has not handled: 1 when handled (acked, refused or already
 * decided), 0 to look again at the next poll (no proposal yet). */
static int handle_new(struct ncclbpf_cp_member *m, const char *R)
{
	const struct cp_config *k = cp_cfg();
	char rdir[CP_PATH + 256], path[CP_PATH + 512], d[300];
	snprintf(rdir, sizeof(rdir), "%s/reloads/%s", m->cdir, R);
	snprintf(path, sizeof(path), "%s/proposal", rdir);
	if (atomic_load(&m->left))
		return 1; /* no ack: the reload aborts (cp_member.c give_up) */
	char *prop;
	if (cp_read(path, &prop, NULL, 1u << 20) != 0)
		return 0;
	if (cp_read_decision(m, R, d, sizeof(d)) == 0) {
		/* Decided without us (an abort: a commit needs every rank's ack). Say so, so the
		 * controller need not wait for us. */
		free(prop);
		if (!strncmp(d, "abort", 5))
			write_done(m, R, "aborted");
		else
			write_done(m, R, "failed decided before this member acknowledged");
		return 1;
	}
	struct cp_pend *p = calloc(1, sizeof(*p));
	if (!p) {
		free(prop);
		return 0;
	}
	snprintf(p->R, sizeof(p->R), "%s", R);
	char kind[32] = "", hash[40] = "";
	cp_kv(prop, "kind", kind, sizeof(kind));
	cp_kv(prop, "hash", hash, sizeof(hash));
	p->hash = strtoull(hash, NULL, 16);
	int e;
	if (k->have_reject && p->hash == k->reject_hash) {
		snprintf(p->msg, sizeof(p->msg), "hash %016llx refused by NCCLBPF_CP_REJECT_HASH",
			 (unsigned long long)p->hash);
		e = -EPERM;
	} else if (!strcmp(kind, "bundle")) {
		p->kind = CP_KIND_BUNDLE;
		e = prepare_bundle(m, rdir, prop, p);
	} else if (!strcmp(kind, "map")) {
		p->kind = CP_KIND_MAP;
		e = prepare_map(m, prop, p);
	} else {
		snprintf(p->msg, sizeof(p->msg), "unknown proposal kind '%s'", kind);
		e = -EINVAL;
	}
	free(prop);
	char ack[NCCLBPF_CP_MSG + 300], name[200];
	snprintf(name, sizeof(name), "ack.%s", m->id);
	if (e) {
		int n = snprintf(
		    ack, sizeof(ack), "status=fail\nmember=%s\nseq=%llu\nmsg=%s\n", m->id,
		    (unsigned long long)__atomic_load_n(&m->c->seq, __ATOMIC_RELAXED), p->msg);
		cp_create_once(rdir, name, ack, (size_t)n);
		write_done(m, R, "failed %s", p->msg);
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: reload %s of communicator %s refused here: %s",
		       R, m->comm, p->msg);
		cp_pend_free(p);
		return 1;
	}
	/* Fence: B = a + L, published before re-reading seq (seq_cst both sides, see
	 * ncclbpf_comm__tick). If the calls already reached B, a larger lead. */
	struct ncclbpf_comm *c = m->c;
	uint64_t L = lead(m), a, B;
	pthread_mutex_lock(&m->lock);
	p->state = CP_ACKED;
	p->next = m->pends;
	m->pends = p;
	for (;;) {
		a = __atomic_load_n(&c->seq, __ATOMIC_SEQ_CST);
		B = a + L;
		p->a = a;
		p->B = B;
		cp_recompute_next(m);
		if (__atomic_load_n(&c->seq, __ATOMIC_SEQ_CST) <= B)
			break;
		L *= 2;
	}
	pthread_mutex_unlock(&m->lock);
	int n = snprintf(ack, sizeof(ack), "status=ok\nmember=%s\nseq=%llu\nfence=%llu\n", m->id,
			 (unsigned long long)a, (unsigned long long)B);
	e = cp_create_once(rdir, name, ack, (size_t)n);
	if (e) {
		/* No ack, no commit (the controller needs every rank's ack): the reload is
		 * aborted for this member, which releases its fence (the directory is typically
		 * gone: the reload was decided and cleaned up while this member prepared). */
		pthread_mutex_lock(&m->lock);
		if (p->state == CP_ACKED) {
			p->state = CP_ABORTED;
			snprintf(p->msg, sizeof(p->msg), "ack not written: %s", strerror(-e));
		}
		cp_recompute_next(m);
		pthread_mutex_unlock(&m->lock);
		return 1;
	}
	return 1;
}

void cp_finish_pends(struct ncclbpf_cp_member *m, int all)
{
	pthread_mutex_lock(&m->lock);
	struct cp_pend *done = NULL;
	for (struct cp_pend **pp = &m->pends; *pp;) {
		struct cp_pend *p = *pp;
		int fin = p->state == CP_APPLIED || p->state == CP_ABORTED || p->state == CP_FAILED;
		if ((fin && !p->busy) || all) {
			*pp = p->next;
			p->next = done;
			done = p;
		} else {
			pp = &p->next;
		}
	}
	if (!all)
		cp_recompute_next(m);
	pthread_mutex_unlock(&m->lock);
	/* Switches in the order they were made (g), so that the decision log reads in order
	 * when two reloads became active at one seq. */
	struct cp_pend *sorted = NULL;
	while (done) {
		struct cp_pend *p = done;
		done = p->next;
		struct cp_pend **pp = &sorted;
		while (*pp && (*pp)->g <= p->g)
			pp = &(*pp)->next;
		p->next = *pp;
		*pp = p;
	}
	for (struct cp_pend *p = sorted, *n; p; p = n) {
		n = p->next;
		if (p->state == CP_APPLIED) {
			write_done(m, p->R, "active %llu g=%llu", (unsigned long long)p->S,
				   (unsigned long long)p->g);
			cp_log_line("cp comm=%s member=%s seq=%llu g=%llu hash=%016llx reload=%s\n",
				    m->comm, m->id, (unsigned long long)p->S,
				    (unsigned long long)p->g, (unsigned long long)p->hash, p->R);
		} else if (p->state == CP_ABORTED) {
			write_done(m, p->R, "aborted");
		} else if (p->state == CP_FAILED) {
			write_done(m, p->R, "failed %s", p->msg);
		} else if (p->state == CP_COMMITTED) {
			write_done(m, p->R, "failed communicator destroyed before seq %llu",
				   (unsigned long long)p->S);
		}
		cp_pend_free(p);
	}
}

static int seen(const struct ncclbpf_cp_member *m, const char *R)
{
	size_t lo = 0, hi = m->n_seen;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(m->seen[mid], R);
		if (!c)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

void cp_thread_poll_member(struct ncclbpf_cp_member *m, uint64_t now)
{
	uint64_t seq = __atomic_load_n(&m->c->seq, __ATOMIC_RELAXED);
	if (now - m->mark_ns >= 500000000ull) {
		m->rate = m->mark_ns ? seq - m->mark_seq : 0;
		m->mark_ns = now;
		m->mark_seq = seq;
	}
	if (now - m->rec_ns >= 1000000000ull) {
		cp_write_member_record(m);
		m->rec_ns = now;
	}
	char dir[CP_PATH + 32];
	snprintf(dir, sizeof(dir), "%s/reloads", m->cdir);
	char **names;
	size_t n;
	if (cp_list(dir, &names, &n) == 0) {
		/* A removed reload directory never comes back (names are unique): forget it. The
		 * new seen set is the listing's names that were seen or are handled now. */
		char **keep = calloc(n ? n : 1, sizeof(*keep));
		size_t nk = 0;
		for (size_t i = 0; keep && i < n; i++) {
			if (seen(m, names[i]) || handle_new(m, names[i])) {
				keep[nk++] = names[i];
				names[i] = NULL;
			}
		}
		if (keep) {
			cp_names_free(m->seen, m->n_seen);
			m->seen = keep;
			m->n_seen = nk;
		}
		cp_names_free(names, n);
	}
	/* Learn decisions of acknowledged reloads. */
	char d[300];
	pthread_mutex_lock(&m->lock);
	int changed = 0;
	for (struct cp_pend *p = m->pends; p; p = p->next) {
		if (p->state != CP_ACKED)
			continue;
		pthread_mutex_unlock(&m->lock);
		int got = cp_read_decision(m, p->R, d, sizeof(d)) == 0;
		pthread_mutex_lock(&m->lock);
		if (got) {
			cp_resolve(m, p, d);
			changed = 1;
		}
	}
	if (changed)
		cp_recompute_next(m);
	pthread_mutex_unlock(&m->lock);
	cp_finish_pends(m, 0);
}

/* --- The thread --------------------------------------------------------------------------- */

static void *cp_main(void *arg)
{
	(void)arg;
	const struct cp_config *k = cp_cfg();
	pthread_mutex_lock(&cp.lock);
	while (!cp.stop) {
		struct timespec ts =
		    rt_time_after(CLOCK_REALTIME, (uint64_t)k->poll_ms * 1000000ull);
		pthread_cond_timedwait(&cp.cond, &cp.lock, &ts);
		if (cp.stop)
			break;
		uint64_t now = rt_now_ns();
		for (struct ncclbpf_cp_member *m = cp.members; m; m = m->next)
			cp_thread_poll_member(m, now);
	}
	pthread_mutex_unlock(&cp.lock);
	return NULL;
}

int cp_thread_start(void)
{
	pthread_mutex_lock(&cp.lock);
	int e = 0;
	if (!cp.running) {
		cp.stop = 0;
		e = rt_thread_start(&cp.thread, cp_main, NULL);
		cp.running = e == 0;
	}
	pthread_mutex_unlock(&cp.lock);
	return e;
}

void cp_thread_stop(void)
{
	pthread_mutex_lock(&cp.lock);
	if (!cp.running || cp.members) {
		pthread_mutex_unlock(&cp.lock);
		return;
	}
	cp.stop = 1;
	cp.running = 0;
	pthread_t t = cp.thread;
	pthread_cond_broadcast(&cp.cond);
	pthread_mutex_unlock(&cp.lock);
	pthread_join(t, NULL);
}
