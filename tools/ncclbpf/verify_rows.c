/* verify_rows.h: the rows, their table, CSV and JSON forms, and the before/after comparison. */
#define _GNU_SOURCE /* vasprintf */
#include "ebpf/file.h"
#include "verify_rows.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int vrows_add(struct vrows *rs, const struct vrow *r)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 16;
		struct vrow *v = realloc(rs->v, cap * sizeof(*v));
		if (!v)
			return -1;
		rs->v = v;
		rs->cap = cap;
	}
	struct vrow *d = &rs->v[rs->n];
	*d = *r;
	d->file = strdup(r->file);
	d->program = strdup(r->program);
	d->section = strdup(r->section);
	d->ctx_read = strdup(r->ctx_read ? r->ctx_read : "");
	d->error = dup_or_null(r->error);
	if (!d->file || !d->program || !d->section || !d->ctx_read || (r->error && !d->error)) {
		free(d->file);
		free(d->program);
		free(d->section);
		free(d->ctx_read);
		free(d->error);
		return -1;
	}
	rs->n++;
	return 0;
}

void vrows_free(struct vrows *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->v[i].file);
		free(rs->v[i].program);
		free(rs->v[i].section);
		free(rs->v[i].ctx_read);
		free(rs->v[i].error);
	}
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

const char *vrow_base(const struct vrow *r)
{
	const char *s = strrchr(r->file, '/');
	return s ? s + 1 : r->file;
}

/* --- Tables: cells as text, columns as wide as their widest cell ------------------------- */

#define MAX_COLS 20

struct table {
	int cols;
	const char *head[MAX_COLS];
	int right[MAX_COLS]; /* numbers: right-aligned */
	char **cell;	     /* rows * cols, malloc'd strings */
	size_t rows, cap;
};

static void cellf(struct table *t, size_t row, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void cellf(struct table *t, size_t row, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	t->cell[row * (size_t)t->cols + (size_t)col] = s;
}

static size_t add_row(struct table *t)
{
	if (t->rows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		char **c = realloc(t->cell, cap * (size_t)t->cols * sizeof(*c));
		if (!c)
			return (size_t)-1;
		t->cell = c;
		t->cap = cap;
	}
	memset(&t->cell[t->rows * (size_t)t->cols], 0, (size_t)t->cols * sizeof(*t->cell));
	return t->rows++;
}

static void print_table(struct table *t, FILE *f)
{
	size_t w[MAX_COLS];
	for (int c = 0; c < t->cols; c++) {
		w[c] = strlen(t->head[c]);
		for (size_t r = 0; r < t->rows; r++) {
			const char *s = t->cell[r * (size_t)t->cols + (size_t)c];
			if (s && strlen(s) > w[c])
				w[c] = strlen(s);
		}
	}
	for (size_t r = 0; r <= t->rows; r++) {
		for (int c = 0; c < t->cols; c++) {
			const char *s =
			    r ? t->cell[(r - 1) * (size_t)t->cols + (size_t)c] : t->head[c];
			int last = c == t->cols - 1;
			if (!s)
				s = "?";
			if (last && !t->right[c])
				fprintf(f, "%s", s);
			else
				fprintf(f, t->right[c] ? "%*s%s" : "%-*s%s", (int)w[c], s,
					last ? "" : "  ");
		}
		fputc('\n', f);
	}
	for (size_t i = 0; i < t->rows * (size_t)t->cols; i++)
		free(t->cell[i]);
	free(t->cell);
}

void vrows_print_table(const struct vrows *rs, FILE *f)
{
	struct table t = {.cols = 11,
			  .head = {"File", "Program", "Section", "Verdict", "Insns", "Processed",
				   "Peak states", "Worst path", "Budget", "Time (us)",
				   "Ctx fields read"},
			  .right = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0}};
	for (size_t i = 0; i < rs->n; i++) {
		const struct vrow *r = &rs->v[i];
		size_t k = add_row(&t);
		if (k == (size_t)-1)
			break;
		cellf(&t, k, 0, "%s", r->file);
		cellf(&t, k, 1, "%s", r->program);
		cellf(&t, k, 2, "%s", r->section);
		cellf(&t, k, 3, "%s", r->accepted ? "accepted" : "rejected");
		cellf(&t, k, 4, "%" PRIu64, r->insns);
		cellf(&t, k, 5, "%" PRIu64, r->processed);
		cellf(&t, k, 6, "%" PRIu64, r->peak_states);
		cellf(&t, k, 7, "%" PRIu64, r->worst_case);
		cellf(&t, k, 8, "%" PRIu64, r->budget);
		cellf(&t, k, 9, "%.1f", r->time_us);
		cellf(&t, k, 10, "%s", r->ctx_read[0] ? r->ctx_read : "none");
	}
	print_table(&t, f);
}

/* --- CSV (RFC 4180: a field with a comma, quote or newline is quoted, quotes doubled) ----- */

#define CSV_HEADER                                                                                 \
	"file,program,section,verdict,insns,processed,peak_states,worst_case_insns,insn_budget,"   \
	"time_us,ctx_read,error"

static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void vrows_print_csv(const struct vrows *rs, FILE *f)
{
	fprintf(f, "%s\n", CSV_HEADER);
	for (size_t i = 0; i < rs->n; i++) {
		const struct vrow *r = &rs->v[i];
		csv_field(f, r->file);
		fputc(',', f);
		csv_field(f, r->program);
		fputc(',', f);
		csv_field(f, r->section);
		fprintf(f, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.1f,",
			r->accepted ? "accepted" : "rejected", r->insns, r->processed,
			r->peak_states, r->worst_case, r->budget, r->time_us);
		csv_field(f, r->ctx_read);
		fputc(',', f);
		csv_field(f, r->error ? r->error : "");
		fputc('\n', f);
	}
}

/* One CSV record (it may span lines inside quotes) into fields, in place in *buf (grown). The
 * number of fields, 0 at the end of the file, -1 for a malformed record. */
static int csv_record(FILE *in, char **buf, size_t *cap, char **fields, int max)
{
	size_t n = 0;
	int quoted = 0, c, nf = 0, any = 0;
	size_t start = 0;
	size_t starts[MAX_COLS];
	while ((c = fgetc(in)) != EOF) {
		any = 1;
		if (n + 2 > *cap) {
			size_t ncap = *cap ? 2 * *cap : 256;
			char *b = realloc(*buf, ncap);
			if (!b)
				return -1;
			*buf = b;
			*cap = ncap;
		}
		if (quoted) {
			if (c == '"') {
				int d = fgetc(in);
				if (d == '"') {
					(*buf)[n++] = '"';
					continue;
				}
				if (d != EOF)
					ungetc(d, in);
				quoted = 0;
				continue;
			}
			(*buf)[n++] = (char)c;
			continue;
		}
		if (c == '"' && n == start) {
			quoted = 1;
			continue;
		}
		if (c == ',' || c == '\n') {
			if (nf >= max)
				return -1;
			(*buf)[n++] = 0;
			starts[nf++] = start;
			start = n;
			if (c == '\n')
				break;
			continue;
		}
		if (c != '\r')
			(*buf)[n++] = (char)c;
	}
	if (!any)
		return 0;
	if (quoted)
		return -1;
	if (c == EOF) { /* the last record without a newline */
		if (nf >= max || n + 1 > *cap)
			return -1;
		(*buf)[n++] = 0;
		starts[nf++] = start;
	}
	for (int i = 0; i < nf; i++)
		fields[i] = *buf + starts[i];
	return nf;
}

int vrows_read_csv(const char *path, struct vrows *rs, char *err, size_t err_len)
{
	static const char *const want[] = {
	    "file",	   "program",	       "section",     "verdict", "insns",    "processed",
	    "peak_states", "worst_case_insns", "insn_budget", "time_us", "ctx_read", "error"};
	enum { NCOL = sizeof(want) / sizeof(want[0]) };
	FILE *in = ebpf_fopen_regular(path, err, err_len);
	if (!in) {
		return -1;
	}
	char *buf = NULL, *fld[MAX_COLS];
	size_t cap = 0;
	int col[NCOL], line = 1, ret = 0;
	int nf = csv_record(in, &buf, &cap, fld, MAX_COLS);
	for (int k = 0; k < NCOL; k++) {
		col[k] = -1;
		for (int i = 0; i < nf; i++)
			if (!strcmp(fld[i], want[k]))
				col[k] = i;
		if (col[k] < 0 && k < NCOL - 1) { /* error may be absent */
			snprintf(err, err_len,
				 "%s:1: not a CSV of `ncclbpf verify -o csv` (no column '%s')",
				 path, want[k]);
			ret = -1;
			break;
		}
	}
	while (!ret && (nf = csv_record(in, &buf, &cap, fld, MAX_COLS)) != 0) {
		line++;
		int bad = nf < 0;
		for (int k = 0; !bad && k < NCOL; k++)
			bad = col[k] >= nf;
		if (bad) {
			snprintf(err, err_len, "%s:%d: malformed record", path, line);
			ret = -1;
			break;
		}
		char *e = col[11] >= 0 ? fld[col[11]] : "";
		struct vrow r = {.file = fld[col[0]],
				 .program = fld[col[1]],
				 .section = fld[col[2]],
				 .accepted = !strcmp(fld[col[3]], "accepted"),
				 .insns = strtoull(fld[col[4]], NULL, 10),
				 .processed = strtoull(fld[col[5]], NULL, 10),
				 .peak_states = strtoull(fld[col[6]], NULL, 10),
				 .worst_case = strtoull(fld[col[7]], NULL, 10),
				 .budget = strtoull(fld[col[8]], NULL, 10),
				 .time_us = strtod(fld[col[9]], NULL),
				 .ctx_read = fld[col[10]],
				 .error = *e ? e : NULL};
		if (vrows_add(rs, &r)) {
			snprintf(err, err_len, "out of memory");
			ret = -1;
		}
	}
	free(buf);
	fclose(in);
	return ret;
}

/* --- JSON ---------------------------------------------------------------------------------- */

static void json_ctx_read(struct json *j, const char *list)
{
	json_arr(j);
	const char *s = list;
	while (*s) {
		size_t n = strcspn(s, " ");
		if (n)
			json_strn(j, s, n);
		s += n;
		s += strspn(s, " ");
	}
	json_end(j);
}

static void json_row(struct json *j, const struct vrow *r)
{
	json_obj(j);
	json_kstr(j, "name", r->program);
	json_kstr(j, "section", r->section);
	json_kstr(j, "verdict", r->accepted ? "accepted" : "rejected");
	json_ku64(j, "insns", r->insns);
	json_ku64(j, "processed", r->processed);
	json_ku64(j, "peak_states", r->peak_states);
	json_ku64(j, "worst_case_insns", r->worst_case);
	json_ku64(j, "insn_budget", r->budget);
	json_kf64(j, "time_us", r->time_us);
	json_key(j, "ctx_read");
	json_ctx_read(j, r->ctx_read);
	json_kstr(j, "error", r->error);
	json_end(j);
}

void vrows_json_programs(const struct vrows *rs, const char *file, struct json *j)
{
	json_arr(j);
	for (size_t i = 0; i < rs->n; i++)
		if (!strcmp(rs->v[i].file, file))
			json_row(j, &rs->v[i]);
	json_end(j);
}

/* --- Before/after -------------------------------------------------------------------------- */

static const struct vrow *find_row(const struct vrows *rs, const struct vrow *like)
{
	for (size_t i = 0; i < rs->n; i++)
		if (!strcmp(vrow_base(&rs->v[i]), vrow_base(like)) &&
		    !strcmp(rs->v[i].program, like->program))
			return &rs->v[i];
	return NULL;
}

/* The measures compared, by name (JSON and CSV) and title (table). */
static const struct {
	const char *key, *title;
} measures[] = {{"insns", "Insns"},
		{"processed", "Processed"},
		{"peak_states", "Peak states"},
		{"worst_case_insns", "Worst path"}};
enum { N_MEASURES = sizeof(measures) / sizeof(measures[0]) };

static uint64_t measure(const struct vrow *r, int m)
{
	return m == 0 ? r->insns : m == 1 ? r->processed : m == 2 ? r->peak_states : r->worst_case;
}

static void diff_text(char *buf, size_t len, const struct vrow *a, const struct vrow *b, int m)
{
	if (!a || !b) {
		snprintf(buf, len, "-");
		return;
	}
	double x = (double)measure(a, m), y = (double)measure(b, m);
	if (x == 0)
		snprintf(buf, len, "%+.0f", y - x);
	else
		snprintf(buf, len, "%+.0f (%+.1f%%)", y - x, 100.0 * (y - x) / x);
}

/* Rows of either run, each pair once: a's order, then what only b has. */
static size_t pairs(const struct vrows *a, const struct vrows *b, const struct vrow ***pa,
		    const struct vrow ***pb)
{
	size_t n = 0;
	*pa = calloc(a->n + b->n + 1, sizeof(**pa));
	*pb = calloc(a->n + b->n + 1, sizeof(**pb));
	if (!*pa || !*pb)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		(*pa)[n] = &a->v[i];
		(*pb)[n++] = find_row(b, &a->v[i]);
	}
	for (size_t i = 0; i < b->n; i++)
		if (!find_row(a, &b->v[i])) {
			(*pa)[n] = NULL;
			(*pb)[n++] = &b->v[i];
		}
	return n;
}

static const char *verdict(const struct vrow *r)
{
	return !r ? "-" : r->accepted ? "accepted" : "rejected";
}

void vrows_compare(const struct vrows *a, const struct vrows *b, enum vformat fmt, FILE *f)
{
	const struct vrow **pa, **pb;
	size_t n = pairs(a, b, &pa, &pb);
	if (fmt == VF_JSON) {
		struct json j;
		json_init(&j, f);
		json_obj(&j);
		json_key(&j, "programs");
		json_arr(&j);
		for (size_t i = 0; i < n; i++) {
			const struct vrow *any = pa[i] ? pa[i] : pb[i];
			json_obj(&j);
			json_kstr(&j, "file", vrow_base(any));
			json_kstr(&j, "program", any->program);
			json_key(&j, "before");
			if (pa[i])
				json_row(&j, pa[i]);
			else
				json_null(&j);
			json_key(&j, "after");
			if (pb[i])
				json_row(&j, pb[i]);
			else
				json_null(&j);
			json_end(&j);
		}
		json_end(&j);
		json_end(&j);
	} else if (fmt == VF_CSV) {
		fprintf(f, "file,program,verdict_before,verdict_after");
		for (int m = 0; m < N_MEASURES; m++)
			fprintf(f, ",%s_before,%s_after,%s_diff", measures[m].key, measures[m].key,
				measures[m].key);
		fprintf(f, "\n");
		for (size_t i = 0; i < n; i++) {
			const struct vrow *any = pa[i] ? pa[i] : pb[i];
			csv_field(f, vrow_base(any));
			fputc(',', f);
			csv_field(f, any->program);
			fprintf(f, ",%s,%s", verdict(pa[i]), verdict(pb[i]));
			for (int m = 0; m < N_MEASURES; m++) {
				if (pa[i])
					fprintf(f, ",%" PRIu64, measure(pa[i], m));
				else
					fprintf(f, ",");
				if (pb[i])
					fprintf(f, ",%" PRIu64, measure(pb[i], m));
				else
					fprintf(f, ",");
				if (pa[i] && pb[i])
					fprintf(f, ",%" PRId64,
						(int64_t)(measure(pb[i], m) - measure(pa[i], m)));
				else
					fprintf(f, ",");
			}
			fprintf(f, "\n");
		}
	} else {
		struct table t = {.cols = 4 + 3 * N_MEASURES,
				  .head = {"File", "Program", "Verdict (A)", "Verdict (B)"}};
		static char heads[3 * N_MEASURES][40];
		for (int m = 0; m < N_MEASURES; m++)
			for (int k = 0; k < 3; k++) {
				snprintf(heads[3 * m + k], sizeof(heads[0]), "%s (%s)",
					 measures[m].title,
					 k == 0	  ? "A"
					 : k == 1 ? "B"
						  : "DIFF");
				t.head[4 + 3 * m + k] = heads[3 * m + k];
				t.right[4 + 3 * m + k] = 1;
			}
		for (size_t i = 0; i < n; i++) {
			const struct vrow *any = pa[i] ? pa[i] : pb[i];
			size_t k = add_row(&t);
			if (k == (size_t)-1)
				break;
			cellf(&t, k, 0, "%s", vrow_base(any));
			cellf(&t, k, 1, "%s", any->program);
			cellf(&t, k, 2, "%s", verdict(pa[i]));
			cellf(&t, k, 3, "%s", verdict(pb[i]));
			for (int m = 0; m < N_MEASURES; m++) {
				char d[64];
				int c = 4 + 3 * m;
				if (pa[i])
					cellf(&t, k, c, "%" PRIu64, measure(pa[i], m));
				else
					cellf(&t, k, c, "-");
				if (pb[i])
					cellf(&t, k, c + 1, "%" PRIu64, measure(pb[i], m));
				else
					cellf(&t, k, c + 1, "-");
				diff_text(d, sizeof(d), pa[i], pb[i], m);
				cellf(&t, k, c + 2, "%s", d);
			}
		}
		print_table(&t, f);
	}
	free(pa);
	free(pb);
}
