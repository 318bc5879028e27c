/* The --json writer (cli_json.h). */
#include "cli_json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

/* Separator before a value or key at the current level. */
static void sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth > 0 && j->items[j->depth - 1]++)
		fputc(',', j->f);
}

/* Nesting deeper than JSON_MAX_DEPTH is a programming error: the writer stays at the limit. */
static void begin(struct json *j, char c)
{
	sep(j);
	fputc(c, j->f);
	if (j->depth == JSON_MAX_DEPTH)
		return;
	j->items[j->depth] = 0;
	j->close[j->depth] = c == '[' ? ']' : '}';
	j->depth++;
}

void json_obj(struct json *j)
{
	begin(j, '{');
}

void json_arr(struct json *j)
{
	begin(j, '[');
}

void json_end(struct json *j)
{
	if (j->depth <= 0)
		return;
	j->depth--;
	fputc(j->close[j->depth], j->f);
	if (!j->depth)
		fputc('\n', j->f);
}

static void escaped(struct json *j, const char *s, size_t n)
{
	fputc('"', j->f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(j->f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", j->f);
		else if (c == '\t')
			fputs("\\t", j->f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(j->f, "\\u%04x", c);
		else
			fputc(c, j->f);
	}
	fputc('"', j->f);
}

void json_key(struct json *j, const char *k)
{
	sep(j);
	escaped(j, k, strlen(k));
	fputc(':', j->f);
	j->after_key = 1;
}

void json_strn(struct json *j, const char *s, size_t n)
{
	sep(j);
	escaped(j, s, n);
}

void json_str(struct json *j, const char *s)
{
	if (!s)
		json_null(j);
	else
		json_strn(j, s, strlen(s));
}

void json_u64(struct json *j, uint64_t v)
{
	sep(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	sep(j);
	fprintf(j->f, "%" PRId64, v);
}

void json_f64(struct json *j, double v)
{
	sep(j);
	if (isfinite(v))
		fprintf(j->f, "%.15g", v);
	else
		fputs("null", j->f);
}

void json_bool(struct json *j, int v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	sep(j);
	fputs("null", j->f);
}

void json_raw(struct json *j, const char *text)
{
	sep(j);
	fputs(text, j->f);
}

void json_hex(struct json *j, const void *data, size_t n)
{
	const unsigned char *b = data;
	sep(j);
	fputc('"', j->f);
	for (size_t i = 0; i < n; i++)
		fprintf(j->f, "%02x", b[i]);
	fputc('"', j->f);
}

/* json_k<T>(j, key, v): the key, then v as json_<T> writes it. */
#define JSON_KEYED(T, CTYPE)                                                                       \
	void json_k##T(struct json *j, const char *k, CTYPE v)                                     \
	{                                                                                          \
		json_key(j, k);                                                                    \
		json_##T(j, v);                                                                    \
	}
JSON_KEYED(str, const char *)
JSON_KEYED(u64, uint64_t)
JSON_KEYED(i64, int64_t)
JSON_KEYED(f64, double)
JSON_KEYED(bool, int)
