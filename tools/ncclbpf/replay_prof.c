/* replay_prof.h */
#include "replay_prof.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_profiler.h"

struct ctx {
	uint32_t pid, serial, rank;
	void *plugin_ctx;
};

/* Recorded (pid, handle) -> the handle the plugin returned for that event now. Entries are
 * overwritten when the recording process reused a handle value, never removed: a collective's
 * handle stays the parent of its channels after its own stop. */
struct slot {
	uint32_t pid, used;
	uint64_t rec;
	void *now;
};

struct replay_prof {
	const ncclProfiler_v5_t *t;
	ncclDebugLogger_t log;
	int mask; /* NCCL's activation mask: written by the plugin */
	struct ctx *ctxs;
	size_t n_ctx;
	struct slot *slots;
	size_t cap, used;
	struct replay_prof_counts n;
};

int replay_prof_is_record(const struct ncclbpf_trace_rec *r)
{
	return r->kind >= NCCLBPF_TRACE_PINIT && r->kind <= NCCLBPF_TRACE_PFINI;
}

struct replay_prof *replay_prof_new(void *handle, void *log)
{
	const ncclProfiler_v5_t *t = dlsym(handle, "ncclProfiler_v5");
	if (!t) {
		fprintf(stderr, "ncclbpf replay: the plugin exports no ncclProfiler_v5; profiler "
				"records are skipped\n");
		return NULL;
	}
	struct replay_prof *rp = calloc(1, sizeof(*rp));
	if (!rp) {
		perror("ncclbpf replay");
		exit(1);
	}
	rp->t = t;
	rp->log = (ncclDebugLogger_t)log;
	return rp;
}

static uint64_t hash(uint32_t pid, uint64_t h)
{
	uint64_t x = (h ^ ((uint64_t)pid << 32)) * 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29);
}

static struct slot *find(struct replay_prof *rp, uint32_t pid, uint64_t rec)
{
	if (!rp->cap)
		return NULL;
	for (size_t i = hash(pid, rec) & (rp->cap - 1);; i = (i + 1) & (rp->cap - 1)) {
		struct slot *s = &rp->slots[i];
		if (!s->used || (s->pid == pid && s->rec == rec))
			return s;
	}
}

static void put(struct replay_prof *rp, uint32_t pid, uint64_t rec, void *now)
{
	if (2 * (rp->used + 1) > rp->cap) {
		struct slot *old = rp->slots;
		size_t n = rp->cap;
		rp->cap = n ? 2 * n : 1024;
		rp->slots = calloc(rp->cap, sizeof(*rp->slots));
		if (!rp->slots) {
			perror("ncclbpf replay");
			exit(1);
		}
		rp->used = 0;
		for (size_t i = 0; i < n; i++)
			if (old[i].used)
				put(rp, old[i].pid, old[i].rec, old[i].now);
		free(old);
	}
	struct slot *s = find(rp, pid, rec);
	if (!s->used)
		rp->used++;
	*s = (struct slot){pid, 1, rec, now};
}

/* The plugin's handle for a recorded one (NULL: unknown, or an event it declined). */
static void *now_of(struct replay_prof *rp, uint32_t pid, uint64_t rec)
{
	struct slot *s = find(rp, pid, rec);
	return s && s->used ? s->now : NULL;
}

static struct ctx *ctx_of(struct replay_prof *rp, const struct ncclbpf_trace_rec *r)
{
	for (size_t i = 0; i < rp->n_ctx; i++)
		if (rp->ctxs[i].pid == r->pid && rp->ctxs[i].serial == r->ctx)
			return &rp->ctxs[i];
	return NULL;
}

/* NULL for the "-" a record writes for a missing name. */
static const char *name(const char *s)
{
	return strcmp(s, "-") ? s : NULL;
}

/* NCCL's gate before every start. A declined event's recorded handle maps to nothing, so that
 * its stop is not passed on under an older event's handle. */
static int wants(struct replay_prof *rp, const struct ncclbpf_trace_rec *r, int type)
{
	if (__atomic_load_n(&rp->mask, __ATOMIC_RELAXED) & type)
		return 1;
	rp->n.masked++;
	put(rp, r->pid, r->handle, NULL);
	return 0;
}

static void start(struct replay_prof *rp, struct ctx *c, const struct ncclbpf_trace_rec *r)
{
	ncclProfilerEventDescr_v5_t d;
	memset(&d, 0, sizeof(d));
	d.rank = (int)c->rank;
	d.parentObj = r->parent ? now_of(rp, r->pid, r->parent) : NULL;
	switch (r->kind) {
	case NCCLBPF_TRACE_PCOLL:
		if (!wants(rp, r, ncclProfileColl))
			return;
		d.type = ncclProfileColl;
		d.coll.seqNumber = r->seq;
		d.coll.func = name(r->func);
		d.coll.count = r->n_bytes;
		d.coll.datatype = name(r->dtype);
		d.coll.nChannels = (uint8_t)r->channels;
		d.coll.algo = name(r->alg);
		d.coll.proto = name(r->prot);
		rp->n.colls++;
		break;
	case NCCLBPF_TRACE_PKCH:
		if (!wants(rp, r, ncclProfileKernelCh))
			return;
		d.type = ncclProfileKernelCh;
		d.kernelCh.channelId = (uint8_t)r->channels;
		d.kernelCh.pTimer = r->timer;
		rp->n.channels++;
		break;
	default: /* NCCLBPF_TRACE_PPROXY */
		if (!wants(rp, r, ncclProfileProxyOp))
			return;
		d.type = ncclProfileProxyOp;
		/* The recording process's own operations (the plugin ignores other processes'):
		 * they are this process's now. */
		d.proxyOp.pid = r->proxy_pid == r->pid ? getpid() : (pid_t)r->proxy_pid;
		d.proxyOp.channelId = (uint8_t)r->channels;
		d.proxyOp.peer = r->peer;
		d.proxyOp.nSteps = r->steps;
		d.proxyOp.chunkSize = r->chunk;
		rp->n.proxies++;
		break;
	}
	void *h = NULL;
	rp->t->startEvent(c->plugin_ctx, &h, &d);
	put(rp, r->pid, r->handle, h);
}

int replay_prof_record(struct replay_prof *rp, const struct ncclbpf_trace_rec *r)
{
	if (!replay_prof_is_record(r))
		return 0;
	if (!rp)
		return 1;
	if (r->kind == NCCLBPF_TRACE_PINIT) {
		void *pc = NULL;
		rp->t->init(&pc, r->comm_id, &rp->mask, "replay", (int)r->n_nodes, (int)r->n_ranks,
			    (int)r->rank, rp->log);
		struct ctx *n = realloc(rp->ctxs, (rp->n_ctx + 1) * sizeof(*n));
		if (!n) {
			perror("ncclbpf replay");
			exit(1);
		}
		rp->ctxs = n;
		rp->ctxs[rp->n_ctx++] = (struct ctx){r->pid, r->ctx, r->rank, pc};
		rp->n.comms++;
		return 1;
	}
	struct ctx *c = ctx_of(rp, r);
	if (!c) {
		rp->n.orphans++;
		return 1;
	}
	void *h;
	switch (r->kind) {
	case NCCLBPF_TRACE_PFINI:
		rp->t->finalize(c->plugin_ctx);
		*c = rp->ctxs[--rp->n_ctx];
		break;
	case NCCLBPF_TRACE_PCOLL:
	case NCCLBPF_TRACE_PKCH:
	case NCCLBPF_TRACE_PPROXY:
		start(rp, c, r);
		break;
	case NCCLBPF_TRACE_PKCH_END:
		if ((h = now_of(rp, r->pid, r->handle))) {
			ncclProfilerEventStateArgs_v5_t a = {.kernelCh = {.pTimer = r->timer}};
			rp->t->recordEventState(h, ncclProfilerKernelChStop, &a);
		}
		break;
	case NCCLBPF_TRACE_PSTOP:
		if ((h = now_of(rp, r->pid, r->handle)))
			rp->t->stopEvent(h);
		break;
	}
	return 1;
}

void replay_prof_end(struct replay_prof *rp, struct replay_prof_counts *counts)
{
	if (counts)
		memset(counts, 0, sizeof(*counts));
	if (!rp)
		return;
	for (size_t i = 0; i < rp->n_ctx; i++)
		rp->t->finalize(rp->ctxs[i].plugin_ctx);
	if (counts)
		*counts = rp->n;
	free(rp->ctxs);
	free(rp->slots);
	free(rp);
}
