/* Sweep CSV -> per-size oracle -> table rows (tune.h). The CSV is what ncclbpf-gpubench --csv
 * writes: a header naming the columns (order free; extra columns ignored), then one row per
 * (collective, size, configuration). Any malformed row stops the run with its line number: a
 * policy built from half-read data would silently decide wrongly. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/file.h"
#include "ncclbpf.h"
#include "tune.h"

#define MAX_LINE   4096
#define MAX_FIELDS 64

static const char *const coll_names[] = {[NCCLBPF_COLL_BROADCAST] = "broadcast",
					 [NCCLBPF_COLL_REDUCE] = "reduce",
					 [NCCLBPF_COLL_ALLGATHER] = "allgather",
					 [NCCLBPF_COLL_REDUCESCATTER] = "reducescatter",
					 [NCCLBPF_COLL_ALLREDUCE] = "allreduce"};
static const char *const algo_names[NCCLBPF_NUM_ALGOS] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
static const char *const proto_names[NCCLBPF_NUM_PROTOS] = {"ll", "ll128", "simple"};

static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

int tune_coll_id(const char *name)
{
	return lookup(coll_names, (int)(sizeof coll_names / sizeof coll_names[0]), name);
}

const char *tune_coll_name(uint32_t id)
{
	return id < sizeof coll_names / sizeof coll_names[0] ? coll_names[id] : "?";
}

const char *tune_algo_name(int32_t id)
{
	return id >= 0 && id < NCCLBPF_NUM_ALGOS ? algo_names[id] : "-";
}

const char *tune_proto_name(int32_t id)
{
	return id >= 0 && id < NCCLBPF_NUM_PROTOS ? proto_names[id] : "-";
}

const char *tune_cfg_str(const struct tune_cfg *c, char *buf, size_t len)
{
	if (c->is_default)
		snprintf(buf, len, "default");
	else if (c->channels > 0)
		snprintf(buf, len, "%s/%s/%d", tune_algo_name(c->algo), tune_proto_name(c->proto),
			 c->channels);
	else
		snprintf(buf, len, "%s/%s/-", tune_algo_name(c->algo), tune_proto_name(c->proto));
	return buf;
}

/* "default" or "ALGO/PROTO/CHANNELS" with '-' for a dimension not forced. 1 parsed, 0 a
 * configuration of another kind (a policy run: not a candidate), -1 malformed forced config. */
static int parse_cfg(const char *s, struct tune_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->algo = c->proto = -1;
	if (!strcmp(s, "default")) {
		c->is_default = 1;
		return 1;
	}
	if (!strncmp(s, "policy:", 7) || !strncmp(s, "env:", 4))
		return 0; /* a policy run, or NCCL settings from outside: not a candidate */
	char a[32], p[32], ch[32], extra;
	const char *s1 = strchr(s, '/');
	const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
	if (!s1 || !s2 || strchr(s2 + 1, '/') || (size_t)(s1 - s) >= sizeof a ||
	    (size_t)(s2 - s1 - 1) >= sizeof p || strlen(s2 + 1) >= sizeof ch)
		return -1;
	memcpy(a, s, (size_t)(s1 - s));
	a[s1 - s] = 0;
	memcpy(p, s1 + 1, (size_t)(s2 - s1 - 1));
	p[s2 - s1 - 1] = 0;
	strcpy(ch, s2 + 1);
	if (strcmp(a, "-") && (c->algo = lookup(algo_names, NCCLBPF_NUM_ALGOS, a)) < 0)
		return -1;
	if (strcmp(p, "-") && (c->proto = lookup(proto_names, NCCLBPF_NUM_PROTOS, p)) < 0)
		return -1;
	if (strcmp(ch, "-")) {
		int v;
		if (sscanf(ch, "%d%c", &v, &extra) != 1 || v < 1 || v > 64)
			return -1;
		c->channels = v;
	}
	if (c->algo < 0 && c->proto < 0 && c->channels == 0)
		return -1; /* "-/-/-" forces nothing: write "default" */
	return 1;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

static int parse_double(const char *s, double *v)
{
	char *end;
	if (!*s)
		return -1;
	errno = 0;
	*v = strtod(s, &end);
	if (errno || *end || !isfinite(*v))
		return -1;
	return 0;
}

/* Splits line in place at commas; returns the field count or -1 when there are too many. */
static int split(char *line, char **f)
{
	int n = 0;
	for (char *p = line;;) {
		if (n == MAX_FIELDS)
			return -1;
		f[n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = 0;
		p = c + 1;
	}
	return n;
}

enum col { C_COLL, C_BYTES, C_RANKS, C_CONFIG, C_TIME, C_WRONG, C_BUSBW, C_COUNT };
static const char *const col_names[C_COUNT] = {"coll",	       "bytes", "ranks",    "config",
					       "time_us_mean", "wrong", "busbw_gbs"};
#define C_REQUIRED C_BUSBW /* columns before this one are required */

static int add_point(struct tune_data *d, const struct tune_point *p)
{
	for (size_t i = 0; i < d->n; i++) {
		struct tune_point *q = &d->pts[i];
		if (q->coll == p->coll && q->ranks == p->ranks && q->bytes == p->bytes &&
		    !memcmp(&q->cfg, &p->cfg, sizeof q->cfg)) {
			q->time_sum += p->time_sum;
			q->busbw_sum += p->busbw_sum;
			q->n += p->n;
			q->wrong += p->wrong;
			return 0;
		}
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 256;
		struct tune_point *np = realloc(d->pts, cap * sizeof *np);
		if (!np)
			return -1;
		d->pts = np;
		d->cap = cap;
	}
	d->pts[d->n++] = *p;
	return 0;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		int k_ = snprintf(err, err_len, "%s:%u: ", path, lineno);                          \
		if (k_ >= 0 && (size_t)k_ < err_len)                                               \
			snprintf(err + k_, err_len - (size_t)k_, __VA_ARGS__);                     \
		goto fail;                                                                         \
	} while (0)

int tune_read_csv(const char *path, struct tune_data *d, char *err, size_t err_len)
{
	FILE *f = ebpf_fopen_regular(path, err, err_len);
	unsigned lineno = 0;
	if (!f) {
		return -1;
	}
	char line[MAX_LINE], header[MAX_LINE] = "";
	char *fld[MAX_FIELDS];
	int col[C_COUNT], n_cols = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		size_t len = strlen(line);
		if (len == sizeof line - 1 && line[len - 1] != '\n')
			FAIL("line longer than %d characters", MAX_LINE - 2);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (!len || line[0] == '#')
			continue;
		if (!header[0] || !strcmp(line, header)) {
			if (header[0])
				continue; /* the header again: concatenated files */
			strcpy(header, line);
			n_cols = split(line, fld);
			if (n_cols < 0)
				FAIL("more than %d columns", MAX_FIELDS);
			for (int c = 0; c < C_COUNT; c++) {
				col[c] = -1;
				for (int i = 0; i < n_cols; i++)
					if (!strcmp(fld[i], col_names[c]))
						col[c] = i;
				if (col[c] < 0 && c < C_REQUIRED)
					FAIL("header lacks column '%s' (is this ncclbpf-gpubench "
					     "--csv output?)",
					     col_names[c]);
			}
			continue;
		}
		int n = split(line, fld);
		if (n != n_cols)
			FAIL("%d fields, the header has %d", n < 0 ? MAX_FIELDS + 1 : n, n_cols);
		struct tune_point p = {.n = 1};
		uint64_t v;
		int id = tune_coll_id(fld[col[C_COLL]]);
		if (id < 0)
			FAIL("unknown collective '%s'", fld[col[C_COLL]]);
		p.coll = (uint32_t)id;
		if (parse_u64(fld[col[C_BYTES]], &p.bytes) || p.bytes == 0)
			FAIL("bytes '%s' is not a positive integer", fld[col[C_BYTES]]);
		if (parse_u64(fld[col[C_RANKS]], &v) || v < 1 || v > 65536)
			FAIL("ranks '%s' is not an integer in 1..65536", fld[col[C_RANKS]]);
		p.ranks = (uint32_t)v;
		if (parse_double(fld[col[C_TIME]], &p.time_sum) || p.time_sum <= 0)
			FAIL("time_us_mean '%s' is not a positive number", fld[col[C_TIME]]);
		if (parse_u64(fld[col[C_WRONG]], &p.wrong))
			FAIL("wrong '%s' is not a non-negative integer", fld[col[C_WRONG]]);
		if (col[C_BUSBW] >= 0 && parse_double(fld[col[C_BUSBW]], &p.busbw_sum))
			FAIL("busbw_gbs '%s' is not a number", fld[col[C_BUSBW]]);
		int k = parse_cfg(fld[col[C_CONFIG]], &p.cfg);
		if (k < 0)
			FAIL("config '%s' is neither 'default' nor ALGO/PROTO/CHANNELS (e.g. "
			     "ring/ll/2, tree/simple/-)",
			     fld[col[C_CONFIG]]);
		d->rows_read++;
		if (k == 0) {
			d->rows_ignored++;
			continue;
		}
		if (add_point(d, &p))
			FAIL("out of memory");
	}
	if (ferror(f))
		FAIL("read error");
	if (!header[0]) {
		lineno = 0;
		FAIL("no header line (empty file?)");
	}
	fclose(f);
	return 0;
fail:
	fclose(f);
	return -1;
}

void tune_data_free(struct tune_data *d)
{
	free(d->pts);
	memset(d, 0, sizeof *d);
}

static int cmp_point(const void *a, const void *b)
{
	const struct tune_point *x = a, *y = b;
	if (x->coll != y->coll)
		return x->coll < y->coll ? -1 : 1;
	if (x->ranks != y->ranks)
		return x->ranks < y->ranks ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return 0;
}

int tune_choose(const struct tune_data *d, uint32_t coll_mask, double margin,
		struct tune_choice **out, char *err, size_t err_len)
{
	*out = NULL;
	struct tune_point *p = malloc((d->n ? d->n : 1) * sizeof *p);
	struct tune_choice *c = malloc((d->n ? d->n : 1) * sizeof *c);
	if (!p || !c) {
		free(p);
		free(c);
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	size_t np = 0, nc = 0;
	for (size_t i = 0; i < d->n; i++)
		if (d->pts[i].coll < 32 && (coll_mask >> d->pts[i].coll & 1))
			p[np++] = d->pts[i];
	/* Stable order inside a group is not needed: ties are broken below by configuration. */
	qsort(p, np, sizeof *p, cmp_point);
	for (size_t i = 0; i < np;) {
		size_t j = i;
		while (j < np && !cmp_point(&p[i], &p[j]))
			j++;
		struct tune_choice ch = {.coll = p[i].coll,
					 .ranks = p[i].ranks,
					 .bytes = p[i].bytes,
					 .best_us = -1,
					 .default_us = -1};
		for (size_t k = i; k < j; k++) {
			double t = p[k].time_sum / p[k].n;
			if (p[k].cfg.is_default)
				ch.default_us = t; /* even when wrong: reported, never chosen */
			if (p[k].wrong)
				continue;
			char a[48], b[48];
			/* Ties: the lexically smaller configuration, so the result does not depend
			 * on the order of the input rows. */
			if (ch.best_us < 0 || t < ch.best_us ||
			    (t == ch.best_us && strcmp(tune_cfg_str(&p[k].cfg, a, sizeof a),
						       tune_cfg_str(&ch.best, b, sizeof b)) < 0)) {
				ch.best_us = t;
				ch.best = p[k].cfg;
			}
		}
		int default_ok = 0;
		for (size_t k = i; k < j; k++)
			if (p[k].cfg.is_default && !p[k].wrong)
				default_ok = 1;
		if (ch.best_us < 0) {
			/* Every configuration computed wrong results: leave it to NCCL. */
			ch.best.is_default = 1;
			ch.best.algo = ch.best.proto = -1;
			ch.chosen = ch.best;
			ch.chosen_us = ch.default_us;
		} else if (default_ok && ch.default_us <= ch.best_us * (1.0 + margin)) {
			ch.chosen = (struct tune_cfg){.is_default = 1, .algo = -1, .proto = -1};
			ch.chosen_us = ch.default_us;
		} else {
			ch.chosen = ch.best;
			ch.chosen_us = ch.best_us;
		}
		c[nc++] = ch;
		i = j;
	}
	free(p);
	*out = c;
	return (int)nc;
}

static int same_outputs(const struct tune_row *a, const struct tune_row *b)
{
	return a->coll == b->coll && a->n_ranks == b->n_ranks && a->algo == b->algo &&
	       a->proto == b->proto && a->channels == b->channels;
}

static int is_default_row(const struct tune_row *r)
{
	return r->algo < 0 && r->proto < 0 && r->channels == 0;
}

/* floor(sqrt(a * b)) exactly, without floating point or libm. */
static uint64_t isqrt_product(uint64_t a, uint64_t b)
{
	unsigned __int128 p = (unsigned __int128)a * b;
	uint64_t lo = 0, hi = UINT64_MAX;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2 + 1; /* in (lo, hi] */
		if ((unsigned __int128)mid * mid <= p)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int tune_rows(const struct tune_choice *c, size_t n, int any_ranks, struct tune_row **out)
{
	struct tune_row *r = malloc((n ? n : 1) * sizeof *r);
	size_t nr = 0;
	if (!r)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int last = i + 1 == n || c[i + 1].coll != c[i].coll || c[i + 1].ranks != c[i].ranks;
		uint64_t max = c[i].bytes;
		if (!last) {
			/* Geometric mean, rounded down: sizes nearer (in log scale) to this
			 * measured size than to the next take its choice. */
			max = isqrt_product(c[i].bytes, c[i + 1].bytes);
			if (max < c[i].bytes)
				max = c[i].bytes;
			if (max >= c[i + 1].bytes)
				max = c[i + 1].bytes - 1;
		}
		struct tune_row row = {.max_bytes = max,
				       .coll = c[i].coll,
				       .n_ranks = any_ranks ? 0 : c[i].ranks,
				       .algo = c[i].chosen.is_default ? -1 : c[i].chosen.algo,
				       .proto = c[i].chosen.is_default ? -1 : c[i].chosen.proto,
				       .channels =
					   c[i].chosen.is_default ? 0 : c[i].chosen.channels};
		if (nr && same_outputs(&r[nr - 1], &row) && r[nr - 1].max_bytes < row.max_bytes)
			r[nr - 1].max_bytes = row.max_bytes;
		else
			r[nr++] = row;
		if (last)
			while (nr && is_default_row(&r[nr - 1]) && r[nr - 1].coll == c[i].coll &&
			       r[nr - 1].n_ranks == row.n_ranks)
				nr--;
	}
	*out = r;
	return (int)nr;
}
