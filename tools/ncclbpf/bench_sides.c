/* Tuner and profiler sides of `ncclbpf bench` (bench_sides.h). */
#include "ebpf/file.h"
#include "bench_sides.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclbpf/trace.h"
#include "prof_drive.h"

int bench_load_trace(const char *path, struct bench_rec **recs, size_t *n)
{
	char why[4200];
	FILE *f = ebpf_fopen_regular(path, why, sizeof(why));
	if (!f) {
		fprintf(stderr, "ncclbpf bench: %s\n", why);
		return -1;
	}
	char line[4096], err[200];
	size_t cap = 0;
	*recs = NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		struct ncclbpf_trace_rec r;
		if (ncclbpf_trace_parse(line, &r, err, sizeof(err)) != 1 ||
		    r.kind != NCCLBPF_TRACE_CALL || r.num_algo != 7 || r.num_proto != 3)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			struct bench_rec *m = realloc(*recs, cap * sizeof(**recs));
			if (!m)
				break;
			*recs = m;
		}
		struct bench_rec *b = &(*recs)[(*n)++];
		b->coll = (int)r.coll;
		b->bytes = r.n_bytes;
		memcpy(b->table, r.cost, sizeof(b->table));
	}
	fclose(f);
	if (*n)
		return 0;
	fprintf(stderr, "ncclbpf bench: %s: no tuner call with a 7 x 3 cost table\n", path);
	return -1;
}

static void set_policy(const char *policy)
{
	if (policy)
		setenv("NCCLBPF_POLICY", policy, 1);
	else
		unsetenv("NCCLBPF_POLICY");
}

/* 1 when the library logged since line `from` that the policy did not load. */
static int policy_refused(unsigned from)
{
	for (unsigned k = from; k < plugin_host_log_count(); k++)
		if (strstr(plugin_host_log_line(k), "not loaded"))
			return 1;
	return 0;
}

int tuner_side_open(struct tuner_side *s, const char *lib, const char *policy, const char *engine,
		    const struct bench_rec *recs, size_t n_recs)
{
	memset(s, 0, sizeof(*s));
	s->recs = recs;
	s->n_recs = n_recs;
	set_policy(policy);
	setenv("NCCLBPF_ENGINE", engine ? engine : "jit", 1);
	if (plugin_host_open(&s->h, lib))
		return -1;
	unsigned from = plugin_host_log_count();
	s->h.v5->init(&s->ctx, 0x1234, 8, 1, plugin_host_logger, NULL, NULL);
	if (!s->ctx || (policy && policy_refused(from))) {
		tuner_side_close(s);
		return -1;
	}
	return 0;
}

typedef ncclResult_t (*coll_info_fn)(void *, ncclFunc_t, size_t, int, float **, int, int, int,
				     int *);

/* One getCollInfo call as the trace recorded it, on t (a fresh copy of its table), channels
 * starting at 0: the call the rounds time and the decision check makes. */
static inline void call_rec(coll_info_fn fn, void *ctx, const struct bench_rec *r, float t[21],
			    int *ch)
{
	memcpy(t, r->table, sizeof(r->table));
	*ch = 0;
	fn(ctx, (ncclFunc_t)r->coll, r->bytes, 1, (float **)t, 7, 3, 0, ch);
}

int tuner_side_round(void *arg, long calls)
{
	struct tuner_side *s = arg;
	coll_info_fn fn = s->h.v5->getCollInfo;
	size_t i = s->pos;
	float t[21];
	for (long k = 0; k < calls; k++) {
		const struct bench_rec *r = &s->recs[i];
		i = i + 1 == s->n_recs ? 0 : i + 1;
		int ch;
		call_rec(fn, s->ctx, r, t, &ch);
	}
	s->pos = i;
	return 0;
}

void tuner_side_decide(struct tuner_side *s, const struct bench_rec *r, struct tuner_decision *d)
{
	float t[21];
	call_rec(s->h.v5->getCollInfo, s->ctx, r, t, &d->channels);
	if (nccl_cost_winner(t, 7, 3, &d->algo, &d->proto))
		d->algo = d->proto = -1;
}

void tuner_side_close(struct tuner_side *s)
{
	if (s->ctx)
		s->h.v5->finalize(s->ctx);
	s->ctx = NULL;
	plugin_host_close(&s->h);
}

int prof_side_open(struct prof_side *s, const char *lib, const char *policy)
{
	memset(s, 0, sizeof(*s));
	set_policy(policy);
	s->t = plugin_host_load(lib, "ncclProfiler_v5", &s->handle);
	if (!s->t)
		return -1;
	unsigned from = plugin_host_log_count();
	s->t->init(&s->ctx, 0x1234, &s->mask, "bench", 1, 8, 0, plugin_host_logger);
	if (!s->ctx || !(s->mask & ncclProfileColl) || (policy && policy_refused(from))) {
		prof_side_close(s);
		return -1;
	}
	return 0;
}

int prof_side_round(void *arg, long calls)
{
	struct prof_side *s = arg;
	for (long k = 0; k < calls; k++)
		prof_drive_collective(s->t, s->ctx, &s->mask, s->seq++);
	return 0;
}

void prof_side_close(struct prof_side *s)
{
	if (s->ctx)
		s->t->finalize(s->ctx);
	s->ctx = NULL;
	if (s->handle)
		dlclose(s->handle);
	s->handle = NULL;
}
