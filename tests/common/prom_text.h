/* A strict parser of the Prometheus text exposition format (0.0.4), for tests: it accepts only
 * what the format allows and checks what a scraper relies on, with a message naming the line
 * that breaks a rule:
 * - every line is a comment ("# HELP name text", "# TYPE name counter|gauge|histogram|summary|
 *   untyped", or any other "#" text), a sample or empty; each line ends with '\n';
 * - metric names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* (and not
 *   "__"-prefixed), label values are "..." with only \\, \" and \n escapes, no label twice;
 * - values are Go floats (digits, ., e, +Inf, -Inf, NaN), an optional integer timestamp;
 * - TYPE comes before the family's first sample and at most once; HELP at most once; all lines
 *   of a family are one group; no series (name and label set) appears twice;
 * - histograms: samples NAME_bucket (with le), NAME_sum, NAME_count only; per label set the
 *   buckets are cumulative in increasing le, the last le is +Inf, and its count equals _count.
 * Header-only; allocations are freed by prom_free. */
#ifndef NCCLBPF_TEST_PROM_TEXT_H
#define NCCLBPF_TEST_PROM_TEXT_H

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROM_MAX_LABELS 32

struct prom_sample {
	char *name;
	int n_labels;
	char *lname[PROM_MAX_LABELS], *lvalue[PROM_MAX_LABELS];
	double value;
	char *family; /* the family it belongs to */
	int line;
};

struct prom_family {
	char *name, *type, *help;
	int first_line, closed;
};

struct prom_doc {
	struct prom_sample *s;
	int n, cap;
	char **set; /* series seen: canonical "name{sorted labels}", open addressing */
	size_t set_cap, set_n;
	struct prom_family *f;
	int nf, fcap;
	char err[512];
};

static inline void prom_free(struct prom_doc *d)
{
	for (int i = 0; i < d->n; i++) {
		free(d->s[i].name);
		for (int k = 0; k < d->s[i].n_labels; k++) {
			free(d->s[i].lname[k]);
			free(d->s[i].lvalue[k]);
		}
	}
	for (int i = 0; i < d->nf; i++) {
		free(d->f[i].name);
		free(d->f[i].type);
		free(d->f[i].help);
	}
	for (size_t i = 0; i < d->set_cap; i++)
		free(d->set[i]);
	free(d->set);
	free(d->s);
	free(d->f);
	memset(d, 0, sizeof(*d));
}

static inline int prom_fail(struct prom_doc *d, int line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(d->err, sizeof(d->err), "line %d: ", line);
	va_start(ap, fmt);
	vsnprintf(d->err + n, sizeof(d->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static inline int prom_name_ok(const char *s, size_t n, int metric)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int ok = isalpha((unsigned char)c) || c == '_' || (metric && c == ':') ||
			 (i && isdigit((unsigned char)c));
		if (!ok || (unsigned char)c >= 0x80)
			return 0;
	}
	return metric || n < 2 || s[0] != '_' || s[1] != '_';
}

static inline char *prom_dup(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* A Go float as Prometheus writes and reads it. */
static inline int prom_value(const char *s, size_t n, double *v)
{
	if (n == 4 && !memcmp(s, "+Inf", 4)) {
		*v = INFINITY;
		return 0;
	}
	if (n == 4 && !memcmp(s, "-Inf", 4)) {
		*v = -INFINITY;
		return 0;
	}
	if (n == 3 && !memcmp(s, "NaN", 3)) {
		*v = NAN;
		return 0;
	}
	char buf[64];
	if (!n || n >= sizeof(buf))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789.eE+-", s[i]))
			return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *end;
	*v = strtod(buf, &end);
	return *end ? -1 : 0;
}

static inline struct prom_family *prom_family_of(struct prom_doc *d, const char *name)
{
	for (int i = 0; i < d->nf; i++)
		if (!strcmp(d->f[i].name, name))
			return &d->f[i];
	return NULL;
}

/* A new family; *cur (the family being read, a pointer into d->f) follows the array when it
 * moves. */
static inline struct prom_family *prom_family_add(struct prom_doc *d, const char *name, size_t n,
						  int line, struct prom_family **cur)
{
	if (d->nf == d->fcap) {
		ptrdiff_t at = *cur ? *cur - d->f : -1;
		d->fcap = d->fcap ? 2 * d->fcap : 16;
		d->f = realloc(d->f, (size_t)d->fcap * sizeof(*d->f));
		if (at >= 0)
			*cur = &d->f[at];
	}
	struct prom_family *f = &d->f[d->nf++];
	memset(f, 0, sizeof(*f));
	f->name = prom_dup(name, n);
	f->first_line = line;
	return f;
}

/* The family a sample name belongs to: a histogram's or summary's for their suffixes. */
static inline struct prom_family *prom_owner(struct prom_doc *d, const char *name, size_t n)
{
	static const char *const sfx[] = {"_bucket", "_sum", "_count", NULL};
	for (int i = 0; sfx[i]; i++) {
		size_t k = strlen(sfx[i]);
		if (n > k && !memcmp(name + n - k, sfx[i], k)) {
			char base[256];
			if (n - k >= sizeof(base))
				continue;
			memcpy(base, name, n - k);
			base[n - k] = 0;
			struct prom_family *f = prom_family_of(d, base);
			if (f && f->type &&
			    (!strcmp(f->type, "histogram") || !strcmp(f->type, "summary")))
				return f;
		}
	}
	char whole[256];
	if (n >= sizeof(whole))
		return NULL;
	memcpy(whole, name, n);
	whole[n] = 0;
	return prom_family_of(d, whole);
}

static inline int prom_comment(struct prom_doc *d, const char *l, size_t n, int line,
			       struct prom_family **cur)
{
	int help = n > 7 && !memcmp(l, "# HELP ", 7), type = n > 7 && !memcmp(l, "# TYPE ", 7);
	if (!help && !type)
		return 0; /* any other comment */
	const char *name = l + 7;
	size_t nl = 0;
	while (7 + nl < n && name[nl] != ' ')
		nl++;
	if (!prom_name_ok(name, nl, 1))
		return prom_fail(d, line, "bad metric name in %s", help ? "HELP" : "TYPE");
	if (7 + nl >= n)
		return prom_fail(d, line, "%s without text", help ? "HELP" : "TYPE");
	const char *rest = name + nl + 1;
	size_t nr = n - 7 - nl - 1;
	char nm[256];
	if (nl >= sizeof(nm))
		return prom_fail(d, line, "name too long");
	memcpy(nm, name, nl);
	nm[nl] = 0;
	struct prom_family *f = prom_family_of(d, nm);
	if (f && f != *cur)
		return prom_fail(d, line, "family %s is not one group (first at line %d)", nm,
				 f->first_line);
	if (!f)
		f = prom_family_add(d, nm, nl, line, cur);
	if (*cur && *cur != f)
		(*cur)->closed = 1;
	*cur = f;
	if (help) {
		if (f->help)
			return prom_fail(d, line, "second HELP for %s", nm);
		f->help = prom_dup(rest, nr);
		return 0;
	}
	if (f->type)
		return prom_fail(d, line, "second TYPE for %s", nm);
	static const char *const types[] = {"counter", "gauge",	  "histogram",
					    "summary", "untyped", NULL};
	int ok = 0;
	for (int i = 0; types[i]; i++)
		ok |= strlen(types[i]) == nr && !memcmp(types[i], rest, nr);
	if (!ok)
		return prom_fail(d, line, "unknown TYPE '%.*s'", (int)nr, rest);
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->s[i].family, nm))
			return prom_fail(d, line, "TYPE after samples of %s", nm);
	f->type = prom_dup(rest, nr);
	return 0;
}

static inline int prom_cmp_label(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline uint64_t prom_hash(const char *k)
{
	uint64_t h = 1469598103934665603ull;
	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 1099511628211ull;
	return h;
}

/* Records the sample's series; the line it was first seen on when it was seen before. */
static inline int prom_series_seen(struct prom_doc *d, const struct prom_sample *s)
{
	char *pairs[PROM_MAX_LABELS];
	size_t len = strlen(s->name) + 3;
	for (int k = 0; k < s->n_labels; k++) {
		size_t n = strlen(s->lname[k]) + strlen(s->lvalue[k]) + 3;
		pairs[k] = malloc(n);
		snprintf(pairs[k], n, "%s=%s", s->lname[k], s->lvalue[k]);
		len += n + 1;
	}
	qsort(pairs, (size_t)s->n_labels, sizeof(pairs[0]), prom_cmp_label);
	/* "name{l=v\x01...}" (label pairs sorted; \x01 cannot end a name) + NUL + first line */
	char *key = malloc(len + 16);
	size_t o = (size_t)sprintf(key, "%s{", s->name);
	for (int k = 0; k < s->n_labels; k++) {
		o += (size_t)sprintf(key + o, "%s\x01", pairs[k]);
		free(pairs[k]);
	}
	key[o++] = '}';
	key[o] = 0;
	sprintf(key + o + 1, "%d", s->line);
	if (2 * (d->set_n + 1) > d->set_cap) {
		size_t cap = d->set_cap ? 2 * d->set_cap : 256;
		char **set = calloc(cap, sizeof(*set));
		for (size_t i = 0; i < d->set_cap; i++)
			if (d->set[i]) {
				size_t h = (size_t)prom_hash(d->set[i]) & (cap - 1);
				while (set[h])
					h = (h + 1) & (cap - 1);
				set[h] = d->set[i];
			}
		free(d->set);
		d->set = set;
		d->set_cap = cap;
	}
	size_t h = (size_t)prom_hash(key) & (d->set_cap - 1);
	for (; d->set[h]; h = (h + 1) & (d->set_cap - 1))
		if (!strcmp(d->set[h], key)) {
			int first = atoi(d->set[h] + o + 1);
			free(key);
			return first;
		}
	d->set[h] = key;
	d->set_n++;
	return 0;
}

static inline int prom_sample_line(struct prom_doc *d, const char *l, size_t n, int line,
				   struct prom_family **cur)
{
	size_t i = 0;
	while (i < n && l[i] != '{' && l[i] != ' ')
		i++;
	if (!prom_name_ok(l, i, 1))
		return prom_fail(d, line, "bad metric name '%.*s'", (int)i, l);
	struct prom_sample s;
	memset(&s, 0, sizeof(s));
	s.line = line;
	s.name = prom_dup(l, i);
	if (i < n && l[i] == '{') {
		i++;
		while (i < n && l[i] != '}') {
			size_t a = i;
			while (i < n && l[i] != '=')
				i++;
			size_t alen = i - a;
			if (!prom_name_ok(l + a, alen, 0))
				goto bad_label;
			if (i + 1 >= n || l[i + 1] != '"')
				goto bad_label;
			char *val = malloc(n), *o = val;
			for (i += 2; i < n && l[i] != '"'; i++) {
				if (l[i] == '\\') {
					if (i + 1 >= n || !strchr("\\\"n", l[i + 1])) {
						free(val);
						goto bad_label;
					}
					*o++ = l[i + 1] == 'n' ? '\n' : l[i + 1];
					i++;
				} else {
					*o++ = l[i];
				}
			}
			*o = 0;
			if (i >= n || s.n_labels == PROM_MAX_LABELS) {
				free(val);
				goto bad_label;
			}
			char *lname = prom_dup(l + a, alen);
			for (int k = 0; k < s.n_labels; k++)
				if (!strcmp(s.lname[k], lname)) {
					free(val);
					free(lname);
					goto bad_label;
				}
			s.lname[s.n_labels] = lname;
			s.lvalue[s.n_labels++] = val;
			i++; /* closing quote */
			if (i < n && l[i] == ',')
				i++;
			else if (i >= n || l[i] != '}')
				goto bad_label;
		}
		if (i >= n)
			goto bad_label;
		i++;
	}
	if (i >= n || l[i] != ' ') {
		prom_fail(d, line, "no value");
		goto fail;
	}
	i++;
	size_t v0 = i;
	while (i < n && l[i] != ' ')
		i++;
	if (prom_value(l + v0, i - v0, &s.value) != 0) {
		prom_fail(d, line, "bad value '%.*s'", (int)(i - v0), l + v0);
		goto fail;
	}
	if (i < n) {
		for (size_t k = i + 1; k < n; k++)
			if (!isdigit((unsigned char)l[k]) && !(k == i + 1 && l[k] == '-')) {
				prom_fail(d, line, "bad timestamp");
				goto fail;
			}
		if (i + 1 >= n) {
			prom_fail(d, line, "trailing space");
			goto fail;
		}
	}
	struct prom_family *f = prom_owner(d, s.name, strlen(s.name));
	if (!f) {
		f = prom_family_add(d, s.name, strlen(s.name), line, cur); /* untyped */
	} else if (f != *cur) {
		prom_fail(d, line, "family %s is not one group (first at line %d)", f->name,
			  f->first_line);
		goto fail;
	}
	if (*cur && *cur != f)
		(*cur)->closed = 1;
	*cur = f;
	if (f->type && !strcmp(f->type, "histogram")) {
		size_t fl = strlen(f->name);
		const char *sfx = s.name + fl;
		int has_le = 0;
		for (int k = 0; k < s.n_labels; k++)
			has_le |= !strcmp(s.lname[k], "le");
		if (strcmp(sfx, "_bucket") && strcmp(sfx, "_sum") && strcmp(sfx, "_count")) {
			prom_fail(d, line, "histogram %s has a sample %s", f->name, s.name);
			goto fail;
		}
		if ((strcmp(sfx, "_bucket") == 0) != has_le) {
			prom_fail(d, line, "le label on %s", s.name);
			goto fail;
		}
	}
	s.family = f->name;
	/* No series twice. */
	int dup = prom_series_seen(d, &s);
	if (dup) {
		prom_fail(d, line, "series repeated (first at line %d)", dup);
		goto fail;
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->s = realloc(d->s, (size_t)d->cap * sizeof(*d->s));
	}
	d->s[d->n++] = s;
	return 0;
bad_label:
	prom_fail(d, line, "bad label syntax");
fail:
	free(s.name);
	for (int k = 0; k < s.n_labels; k++) {
		free(s.lname[k]);
		free(s.lvalue[k]);
	}
	return -1;
}

static inline const char *prom_label(const struct prom_sample *s, const char *name)
{
	for (int k = 0; k < s->n_labels; k++)
		if (!strcmp(s->lname[k], name))
			return s->lvalue[k];
	return NULL;
}

/* The TYPE of family name in a parsed text, NULL when it has no such family. */
static inline const char *prom_type_of(const struct prom_doc *d, const char *name)
{
	const struct prom_family *f = prom_family_of((struct prom_doc *)d, name);
	return f ? f->type : NULL;
}

/* A histogram series' key: its family and its labels but le, sorted ("\x01"-separated). */
static inline char *prom_series_key(const struct prom_sample *s)
{
	const char *pairs[PROM_MAX_LABELS];
	int n = 0;
	size_t len = strlen(s->family) + 2;
	for (int k = 0; k < s->n_labels; k++)
		if (strcmp(s->lname[k], "le")) {
			pairs[n++] = s->lname[k];
			len += strlen(s->lname[k]) + strlen(prom_label(s, s->lname[k])) + 2;
		}
	qsort(pairs, (size_t)n, sizeof(pairs[0]), prom_cmp_label);
	char *key = malloc(len + 1);
	size_t o = (size_t)sprintf(key, "%s{", s->family);
	for (int k = 0; k < n; k++)
		o += (size_t)sprintf(key + o, "%s=%s\x01", pairs[k], prom_label(s, pairs[k]));
	return key;
}

/* What one histogram series showed so far. */
struct prom_hist {
	char *key;
	double prev_le, prev, inf, count;
	int sum, count_line, first_line;
};

/* The histogram rules, per label set: one pass, series found by hashing their keys. */
static inline int prom_check_histograms(struct prom_doc *d)
{
	size_t cap = 64;
	while (cap < 2 * (size_t)d->n + 2)
		cap *= 2;
	struct prom_hist *h = calloc(cap, sizeof(*h));
	int r = 0;
	for (int i = 0; i < d->n && !r; i++) {
		struct prom_sample *b = &d->s[i];
		struct prom_family *f = prom_family_of(d, b->family);
		if (!f->type || strcmp(f->type, "histogram"))
			continue;
		const char *sfx = b->name + strlen(f->name);
		char *key = prom_series_key(b);
		size_t at = (size_t)prom_hash(key) & (cap - 1);
		while (h[at].key && strcmp(h[at].key, key))
			at = (at + 1) & (cap - 1);
		struct prom_hist *e = &h[at];
		if (e->key) {
			free(key);
		} else {
			*e = (struct prom_hist){key, -INFINITY, 0, NAN, NAN, 0, 0, b->line};
		}
		if (!strcmp(sfx, "_sum")) {
			e->sum = 1;
		} else if (!strcmp(sfx, "_count")) {
			e->count = b->value;
			e->count_line = b->line;
		} else {
			double le = NAN; /* stays NAN (no comparison holds) when the value is bad */
			const char *lv = prom_label(b, "le");
			if (prom_value(lv, strlen(lv), &le) != 0)
				r = prom_fail(d, b->line, "bad le '%s'", lv);
			else if (le <= e->prev_le)
				r = prom_fail(d, b->line, "le not increasing");
			else if (b->value < e->prev)
				r = prom_fail(d, b->line, "bucket counts not cumulative");
			e->prev_le = le;
			e->prev = b->value;
			if (isinf(le))
				e->inf = b->value;
		}
	}
	for (size_t i = 0; i < cap; i++) {
		struct prom_hist *e = &h[i];
		if (!e->key)
			continue;
		if (r)
			;
		else if (!e->count_line)
			r = prom_fail(d, e->first_line, "histogram without _count");
		else if (isnan(e->inf))
			r = prom_fail(d, e->count_line, "histogram without le=\"+Inf\"");
		else if (e->inf != e->count)
			r = prom_fail(d, e->count_line, "+Inf bucket %g != _count %g", e->inf,
				      e->count);
		else if (!e->sum)
			r = prom_fail(d, e->count_line, "histogram without _sum");
		free(e->key);
	}
	free(h);
	return r;
}

/* Parses text (len bytes). 0, or -1 with d->err. */
static inline int prom_parse(struct prom_doc *d, const char *text, size_t len)
{
	memset(d, 0, sizeof(*d));
	struct prom_family *cur = NULL;
	int line = 0;
	size_t i = 0;
	if (len && text[len - 1] != '\n')
		return prom_fail(d, 0, "text does not end with a newline");
	while (i < len) {
		line++;
		const char *l = text + i;
		const char *nl = memchr(l, '\n', len - i);
		size_t n = (size_t)(nl - l);
		i += n + 1;
		if (memchr(l, 0, n))
			return prom_fail(d, line, "NUL byte");
		if (!n)
			continue;
		int r = l[0] == '#' ? prom_comment(d, l, n, line, &cur)
				    : prom_sample_line(d, l, n, line, &cur);
		if (r)
			return -1;
	}
	return prom_check_histograms(d);
}

#endif
