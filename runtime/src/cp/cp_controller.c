/* Control plane, controller side (control.h): proposes one change to every communicator of a
 * directory, waits for every rank's ack, writes the write-once decision (commit at the largest
 * fence, or abort), and collects the members' done files. It may die at any step: members that
 * reach their fence without a decision decide abort themselves (cp_member.c). Not part of the
 * plugin (nothing in it references this file); the CLI and tests link it from the runtime
 * library. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_dir.h"
#include "ncclbpf/control.h"
#include "ncclbpf/hex.h"
#include "ebpf/object.h"
#include "ncclbpf/trusted_path.h"
#include "base/rt_internal.h"
#include "ncclbpf/proc_registry.h"

struct ctl_comm {
	struct ncclbpf_cp_comm_report *rep;
	char rdir[CP_PATH + 512];
	int decided, finished;
	uint64_t max_fence;
	uint32_t oks;
};

static void step(const struct ncclbpf_cp_opts *o, int s)
{
	if (o->step)
		o->step(s, o->step_arg);
}

/* n_ranks of a communicator from its member records (0: no live member registered). */
static uint32_t comm_ranks(const char *cdir, uint32_t *n_members)
{
	char dir[CP_PATH + 32], path[CP_PATH + 512];
	snprintf(dir, sizeof(dir), "%s/members", cdir);
	char **names;
	size_t n;
	*n_members = 0;
	if (cp_list(dir, &names, &n))
		return 0;
	uint32_t ranks = 0;
	for (size_t i = 0; i < n; i++) {
		char *rec;
		uint64_t v = 0, pid = 0;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (cp_read(path, &rec, NULL, 8192))
			continue;
		char host[256] = "";
		uint64_t started = 0;
		cp_kv(rec, "host", host, sizeof(host));
		cp_kv_u64(rec, "proc_start", &started);
		/* A member of a process of this host that no longer exists left its record
		 * behind (killed): it cannot acknowledge; do not count it as registered. */
		if (!cp_kv_u64(rec, "pid", &pid) && !strcmp(host, cp_hostname()) &&
		    pid <= INT_MAX && ncclbpf_rt_proc_gone((int)pid, started)) {
			free(rec);
			continue;
		}
		if (!cp_kv_u64(rec, "n_ranks", &v) && v > ranks)
			ranks = (uint32_t)v;
		(*n_members)++;
		free(rec);
	}
	cp_names_free(names, n);
	return ranks;
}

/* Reload directories a dead controller left: decide abort for undecided ones older than
 * stale_ns (write-once: harmless if someone decided first), remove those every acknowledging
 * member is done with. */
static void collect_garbage(const char *cdir, uint64_t now, uint64_t stale_ns)
{
	char dir[CP_PATH + 32], rdir[CP_PATH + 300], path[CP_PATH + 600];
	snprintf(dir, sizeof(dir), "%s/reloads", cdir);
	char **names;
	size_t n;
	if (cp_list(dir, &names, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		unsigned long long t = strtoull(names[i], NULL, 10);
		if (!t || now < t || now - t < stale_ns)
			continue;
		snprintf(rdir, sizeof(rdir), "%s/%s", dir, names[i]);
		/* A controller makes every reload entry a directory: anything else there (a link,
		 * a file) is removed as it is, never looked into. */
		struct stat st;
		if (lstat(rdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
			cp_rmtree(rdir);
			continue;
		}
		static const char ab[] = "abort controller gone\n";
		cp_create_once(rdir, "decision", ab, sizeof(ab) - 1);
		char **files;
		size_t nf;
		if (cp_list(rdir, &files, &nf))
			continue;
		int all_done = 1;
		for (size_t j = 0; j < nf; j++) {
			if (strncmp(files[j], "ack.", 4))
				continue;
			snprintf(path, sizeof(path), "%s/done.%s", rdir, files[j] + 4);
			if (access(path, F_OK) != 0)
				all_done = 0;
		}
		cp_names_free(files, nf);
		/* An aborted reload changes nothing anywhere: after twice the stale age its
		 * directory goes even if a member never wrote done (dead, or it left). A commit
		 * stays until every acknowledging member is done: a member that finds no
		 * directory treats the reload as aborted. */
		char *dec = NULL;
		snprintf(path, sizeof(path), "%s/decision", rdir);
		int aborted = cp_read(path, &dec, NULL, 4096) == 0 && !strncmp(dec, "abort", 5);
		free(dec);
		if (all_done || (aborted && now - t > 2 * stale_ns))
			cp_rmtree(rdir);
	}
	cp_names_free(names, n);
}

static int decide(struct ctl_comm *cc, const char *text)
{
	char buf[sizeof(cc->rep->decision) + 1];
	int n = snprintf(buf, sizeof(buf), "%s\n", text);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(buf)) { /* cut: still one line */
		n = (int)sizeof(buf) - 1;
		buf[n - 1] = '\n';
	}
	int e = cp_create_once(cc->rdir, "decision", buf, (size_t)n);
	if (e && e != -EEXIST)
		return e;
	/* Ours or whoever was first: the file is the outcome. */
	char path[CP_PATH + 600], *rec;
	snprintf(path, sizeof(path), "%s/decision", cc->rdir);
	if (cp_read(path, &rec, NULL, 4096))
		return -EIO;
	rec[strcspn(rec, "\n")] = 0;
	snprintf(cc->rep->decision, sizeof(cc->rep->decision), "%s", rec);
	unsigned long long S;
	cc->rep->committed = sscanf(rec, "commit %llu", &S) == 1;
	cc->rep->seq = cc->rep->committed ? S : 0;
	cc->decided = 1;
	free(rec);
	return 0;
}

/* Reads the acks of one reload; decides when every rank acked ok, or one failed. */
static void collect_acks(struct ctl_comm *cc, const struct ncclbpf_cp_opts *o)
{
	char **files;
	size_t nf;
	if (cp_list(cc->rdir, &files, &nf))
		return;
	struct ncclbpf_cp_comm_report *r = cc->rep;
	char path[CP_PATH + 700], fail[NCCLBPF_CP_MSG + 180] = "";
	uint32_t oks = 0, total = 0;
	uint64_t maxB = 0;
	for (size_t i = 0; i < nf; i++) {
		if (strncmp(files[i], "ack.", 4))
			continue;
		char *rec;
		snprintf(path, sizeof(path), "%s/%s", cc->rdir, files[i]);
		if (cp_read(path, &rec, NULL, 8192))
			continue;
		total++;
		char st[16] = "", msg[NCCLBPF_CP_MSG] = "";
		uint64_t B = 0;
		cp_kv(rec, "status", st, sizeof(st));
		if (!strcmp(st, "ok") && !cp_kv_u64(rec, "fence", &B)) {
			oks++;
			if (B > maxB)
				maxB = B;
		} else if (!fail[0]) {
			cp_kv(rec, "msg", msg, sizeof(msg));
			snprintf(fail, sizeof(fail), "member %.120s failed: %s", files[i] + 4, msg);
		}
		free(rec);
	}
	cp_names_free(files, nf);
	if (total > cc->oks)
		step(o, 2);
	cc->oks = total;
	if (fail[0]) {
		char d[sizeof(fail) + 8];
		snprintf(d, sizeof(d), "abort %s", fail);
		decide(cc, d);
	} else if (oks >= r->n_ranks && r->n_ranks) {
		char d[64];
		snprintf(d, sizeof(d), "commit %llu", (unsigned long long)maxB);
		decide(cc, d);
	}
}

/* Fills the member reports from acks and done files; 1 when every acknowledging member is done. */
static int collect_done(struct ctl_comm *cc)
{
	char **files;
	size_t nf;
	if (cp_list(cc->rdir, &files, &nf))
		return 0;
	struct ncclbpf_cp_comm_report *r = cc->rep;
	free(r->members);
	r->members = calloc(nf ? nf : 1, sizeof(*r->members));
	r->n_members = 0;
	int all = 1;
	char path[CP_PATH + 700];
	/* Members: those that acknowledged, and those that wrote done without an ack (they
	 * found the reload already aborted). */
	for (size_t i = 0; r->members && i < nf; i++) {
		const char *mid = NULL;
		char ackname[300];
		if (!strncmp(files[i], "ack.", 4)) {
			mid = files[i] + 4;
		} else if (!strncmp(files[i], "done.", 5)) {
			snprintf(ackname, sizeof(ackname), "ack.%s", files[i] + 5);
			int has_ack = 0;
			for (size_t j = 0; j < nf && !has_ack; j++)
				has_ack = !strcmp(files[j], ackname);
			if (!has_ack)
				mid = files[i] + 5;
		}
		if (!mid)
			continue;
		struct ncclbpf_cp_member_report *mr = &r->members[r->n_members++];
		snprintf(mr->member, sizeof(mr->member), "%s", mid);
		char *rec;
		snprintf(path, sizeof(path), "%s/ack.%s", cc->rdir, mid);
		if (cp_read(path, &rec, NULL, 8192) == 0) {
			cp_kv_u64(rec, "seq", &mr->seq);
			cp_kv_u64(rec, "fence", &mr->fence);
			free(rec);
		}
		snprintf(path, sizeof(path), "%s/done.%s", cc->rdir, mid);
		if (cp_read(path, &rec, NULL, 8192) != 0) {
			all = 0;
			mr->state = r->committed ? NCCLBPF_CP_PENDING : NCCLBPF_CP_ABORTED;
			snprintf(mr->msg, sizeof(mr->msg), "%s",
				 r->committed ? "activation point not reached yet"
					      : "not done yet");
			continue;
		}
		rec[strcspn(rec, "\n")] = 0;
		unsigned long long S, g;
		if (sscanf(rec, "active %llu g=%llu", &S, &g) == 2) {
			mr->state = NCCLBPF_CP_ACTIVE;
			mr->seq = S;
			mr->g = g;
		} else if (!strncmp(rec, "aborted", 7)) {
			mr->state = NCCLBPF_CP_ABORTED;
			snprintf(mr->msg, sizeof(mr->msg), "%s", r->decision);
		} else {
			mr->state = NCCLBPF_CP_FAILED;
			snprintf(mr->msg, sizeof(mr->msg), "%s",
				 strncmp(rec, "failed ", 7) ? rec : rec + 7);
		}
		free(rec);
	}
	cp_names_free(files, nf);
	/* A reload directory may go only once every rank is done with it: a member that finds
	 * neither decision nor directory treats the reload as aborted. */
	return all && r->n_members >= r->n_ranks;
}

static int propose(const char *dir, const char *kind_rec, const void *blob, size_t blob_len,
		   uint64_t hash, const struct ncclbpf_cp_opts *uo, struct ncclbpf_cp_report *rep)
{
	struct ncclbpf_cp_opts o = {.timeout_ms = 10000, .done_timeout_ms = 5000, .poll_ms = 2};
	if (uo) {
		size_t sz = uo->sz && uo->sz < sizeof(o) ? uo->sz : sizeof(o);
		memcpy(&o, uo, sz);
		if (o.timeout_ms <= 0)
			o.timeout_ms = 10000;
		/* Zeroed options mean the defaults; a negative done_timeout_ms: do not wait. */
		if (o.done_timeout_ms == 0)
			o.done_timeout_ms = 5000;
		else if (o.done_timeout_ms < 0)
			o.done_timeout_ms = 0;
		if (o.poll_ms <= 0)
			o.poll_ms = 2;
	}
	uint64_t t0 = rt_now_ns();
	rep->hash = hash;
	/* The members trust only such a directory (cp_state.c); neither does the controller
	 * write into, read from or remove anything in another. */
	char why[400];
	int dfd = ncclbpf_path_open_dir(dir, 0, why, sizeof(why));
	if (dfd < 0) {
		if (dfd == -ENOENT)
			snprintf(rep->msg, sizeof(rep->msg), "%s (no job registered there?)", why);
		else
			snprintf(rep->msg, sizeof(rep->msg), "control-plane directory refused: %s",
				 why);
		return dfd;
	}
	close(dfd);
	char cdir_root[CP_PATH + 16];
	snprintf(cdir_root, sizeof(cdir_root), "%s/comms", dir);
	char **comms;
	size_t nc;
	int e = cp_list(cdir_root, &comms, &nc);
	if (e) {
		snprintf(rep->msg, sizeof(rep->msg), "%s: %s (no job registered there?)", cdir_root,
			 strerror(-e));
		return e;
	}
	struct ctl_comm *cc = calloc(nc ? nc : 1, sizeof(*cc));
	rep->comms = calloc(nc ? nc : 1, sizeof(*rep->comms));
	if (!cc || !rep->comms) {
		free(cc);
		cp_names_free(comms, nc);
		snprintf(rep->msg, sizeof(rep->msg), "out of memory");
		return -ENOMEM;
	}
	/* R sorts by time; the same name in every communicator of this call. */
	char R[160];
	snprintf(R, sizeof(R), "%019llu-%s-%d", (unsigned long long)cp_realtime_ns(), cp_hostname(),
		 (int)getpid());
	uint64_t stale = 2ull * ((uint64_t)o.timeout_ms + (uint64_t)o.done_timeout_ms) * 1000000ull;
	for (size_t i = 0; i < nc; i++) {
		char cdir[CP_PATH + 300];
		if (o.comm && strcmp(o.comm, comms[i]))
			continue;
		snprintf(cdir, sizeof(cdir), "%s/%s", cdir_root, comms[i]);
		uint32_t n_members;
		uint32_t ranks = comm_ranks(cdir, &n_members);
		collect_garbage(cdir, cp_realtime_ns(), stale);
		if (!n_members)
			continue; /* finished communicator */
		struct ncclbpf_cp_comm_report *r = &rep->comms[rep->n_comms];
		struct ctl_comm *c = &cc[rep->n_comms++];
		c->rep = r;
		snprintf(r->comm, sizeof(r->comm), "%.16s", comms[i]);
		snprintf(r->reload, sizeof(r->reload), "%s", R);
		r->n_ranks = ranks;
		snprintf(c->rdir, sizeof(c->rdir), "%s/reloads/%s", cdir, R);
		e = cp_mkdirs(c->rdir);
		if (!e && blob)
			e = cp_write(c->rdir, "bundle.o", blob, blob_len);
		if (!e)
			e = cp_write(c->rdir, "proposal", kind_rec, strlen(kind_rec));
		if (e) {
			char d[300];
			snprintf(d, sizeof(d), "abort controller cannot write the proposal: %s",
				 strerror(-e));
			decide(c, d);
		}
	}
	cp_names_free(comms, nc);
	if (!rep->n_comms) {
		free(cc);
		snprintf(rep->msg, sizeof(rep->msg), "no live communicator registered in %s%s%s",
			 dir, o.comm ? " with id " : "", o.comm ? o.comm : "");
		return -ENOENT;
	}
	step(&o, 1);
	/* Acks. */
	uint64_t deadline = rt_now_ns() + (uint64_t)o.timeout_ms * 1000000ull;
	for (;;) {
		int open_ = 0;
		for (uint32_t i = 0; i < rep->n_comms; i++) {
			if (cc[i].decided)
				continue;
			/* A member may have decided abort at its fence already. */
			char path[CP_PATH + 600];
			snprintf(path, sizeof(path), "%s/decision", cc[i].rdir);
			if (access(path, F_OK) == 0)
				decide(&cc[i], "abort (decided elsewhere)");
			else
				collect_acks(&cc[i], &o);
			open_ += !cc[i].decided;
		}
		if (!open_)
			break;
		if (rt_now_ns() >= deadline) {
			for (uint32_t i = 0; i < rep->n_comms; i++)
				if (!cc[i].decided) {
					char d[200];
					snprintf(d, sizeof(d),
						 "abort timeout: %u of %u ranks acked", cc[i].oks,
						 cc[i].rep->n_ranks);
					decide(&cc[i], d);
				}
			break;
		}
		cp_sleep_ms((unsigned)o.poll_ms);
	}
	step(&o, 3);
	/* Done files. */
	deadline = rt_now_ns() + (uint64_t)o.done_timeout_ms * 1000000ull;
	for (;;) {
		int open_ = 0;
		for (uint32_t i = 0; i < rep->n_comms; i++)
			if (!cc[i].finished) {
				cc[i].finished = collect_done(&cc[i]);
				open_ += !cc[i].finished;
			}
		if (!open_ || rt_now_ns() >= deadline)
			break;
		cp_sleep_ms((unsigned)o.poll_ms);
	}
	step(&o, 4);
	for (uint32_t i = 0; i < rep->n_comms; i++) {
		if (cc[i].rep->committed)
			rep->committed++;
		else
			rep->aborted++;
		if (cc[i].finished && !o.keep)
			cp_rmtree(cc[i].rdir);
	}
	free(cc);
	rep->total_ns = rt_now_ns() - t0;
	snprintf(rep->msg, sizeof(rep->msg), "%u communicator%s: %u committed, %u aborted",
		 rep->n_comms, rep->n_comms == 1 ? "" : "s", rep->committed, rep->aborted);
	return rep->aborted ? 1 : 0;
}

static void rep_init(struct ncclbpf_cp_report *r)
{
	memset(r, 0, sizeof(*r));
	r->sz = sizeof(*r);
}

int ncclbpf_cp_reload(const char *dir, const char *bundle_path, const struct ncclbpf_cp_opts *o,
		      struct ncclbpf_cp_report *rep)
{
	struct ncclbpf_cp_report local;
	struct ncclbpf_cp_report *r = rep ? rep : &local;
	rep_init(r);
	void *img;
	size_t len;
	char why[400];
	int e =
	    ncclbpf_path_read_file(bundle_path, EBPF_OBJECT_MAX_SIZE, &img, &len, why, sizeof(why));
	if (e) {
		snprintf(r->msg, sizeof(r->msg), "cannot read the bundle: %s", why);
		return e;
	}
	uint64_t h = ncclbpf_cp_hash(img, len);
	char prop[4600];
	snprintf(prop, sizeof(prop), "kind=bundle\nhash=%016llx\nname=%.4000s\n",
		 (unsigned long long)h, bundle_path);
	e = propose(dir, prop, img, len, h, o, r);
	free(img);
	if (!rep)
		ncclbpf_cp_report_free(r);
	return e;
}

int ncclbpf_cp_map_update(const char *dir, const char *map, const void *key, size_t klen,
			  const void *val, size_t vlen, const struct ncclbpf_cp_opts *o,
			  struct ncclbpf_cp_report *rep)
{
	struct ncclbpf_cp_report local;
	struct ncclbpf_cp_report *r = rep ? rep : &local;
	rep_init(r);
	if (!map || !*map || strlen(map) > 100 || strchr(map, '\n') || !klen || !vlen ||
	    klen > 4096 || vlen > 4096) {
		snprintf(r->msg, sizeof(r->msg), "bad map update (name, or key/value size)");
		return -EINVAL;
	}
	size_t cap = 2 * (klen + vlen) + strlen(map) + 128;
	char *prop = malloc(cap), *hk = malloc(2 * klen + 1), *hv = malloc(2 * vlen + 1);
	if (!prop || !hk || !hv) {
		free(prop);
		free(hk);
		free(hv);
		return -ENOMEM;
	}
	ncclbpf_hex(key, klen, hk);
	ncclbpf_hex(val, vlen, hv);
	/* The hash names the change itself (map, key, value). */
	char *body = malloc(cap);
	int e = -ENOMEM;
	if (body) {
		int n = snprintf(body, cap, "name=%s\nkey=%s\nvalue=%s\n", map, hk, hv);
		uint64_t h = ncclbpf_cp_hash(body, (size_t)n);
		snprintf(prop, cap, "kind=map\nhash=%016llx\n%s", (unsigned long long)h, body);
		e = propose(dir, prop, NULL, 0, h, o, r);
	}
	free(body);
	free(prop);
	free(hk);
	free(hv);
	if (!rep)
		ncclbpf_cp_report_free(r);
	return e;
}

void ncclbpf_cp_report_free(struct ncclbpf_cp_report *rep)
{
	if (!rep)
		return;
	for (uint32_t i = 0; rep->comms && i < rep->n_comms; i++)
		free(rep->comms[i].members);
	free(rep->comms);
	rep->comms = NULL;
	rep->n_comms = 0;
}

void ncclbpf_cp_report_print(const struct ncclbpf_cp_report *rep, void *file)
{
	FILE *f = file;
	for (uint32_t i = 0; i < rep->n_comms; i++) {
		const struct ncclbpf_cp_comm_report *c = &rep->comms[i];
		fprintf(f, "comm %s: %s (reload %s, %u ranks, %u answered)\n", c->comm, c->decision,
			c->reload, c->n_ranks, c->n_members);
		for (uint32_t j = 0; j < c->n_members; j++) {
			const struct ncclbpf_cp_member_report *m = &c->members[j];
			fprintf(f, "comm %s member %s: ", c->comm, m->member);
			switch (m->state) {
			case NCCLBPF_CP_ACTIVE:
				fprintf(f, "active at seq %llu (g=%llu)\n",
					(unsigned long long)m->seq, (unsigned long long)m->g);
				break;
			case NCCLBPF_CP_PENDING:
				fprintf(
				    f, "commits at seq %llu, not reached yet (acked at seq %llu)\n",
				    (unsigned long long)c->seq, (unsigned long long)m->seq);
				break;
			case NCCLBPF_CP_ABORTED:
				fprintf(f, "not changed: %s\n", m->msg);
				break;
			default:
				fprintf(f, "not changed: failed: %s\n", m->msg);
				break;
			}
		}
	}
}
