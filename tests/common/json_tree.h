/* A strict JSON parser (RFC 8259) for tests: the whole input must be one value (whitespace
 * around it), numbers follow the grammar exactly (no leading zeros, no '+', no bare '.'),
 * strings accept only the defined escapes (\uXXXX with surrogate pairs, decoded to UTF-8) and
 * no raw control characters, no trailing commas, depth at most 64. Header-only; json_free
 * releases a tree. */
#ifndef NCCLBPF_TEST_JSON_TREE_H
#define NCCLBPF_TEST_JSON_TREE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum json_kind { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

struct json {
	enum json_kind kind;
	int b;
	double num;
	char *str;	 /* JSON_STR (decoded, NUL-terminated) */
	int n;		 /* JSON_ARR, JSON_OBJ: elements */
	char **keys;	 /* JSON_OBJ */
	struct json **v; /* JSON_ARR, JSON_OBJ */
	char *num_text;	 /* JSON_NUM: as written */
};

struct json_in {
	const char *start, *p, *end;
	int depth;
	char err[256];
};

static inline void json_free(struct json *j)
{
	if (!j)
		return;
	for (int i = 0; i < j->n; i++) {
		if (j->keys)
			free(j->keys[i]);
		json_free(j->v[i]);
	}
	free(j->keys);
	free(j->v);
	free(j->str);
	free(j->num_text);
	free(j);
}

static inline struct json *json_fail(struct json_in *in, const char *what)
{
	if (!in->err[0])
		snprintf(in->err, sizeof(in->err), "%s at offset %td", what, in->p - in->start);
	return NULL;
}

static inline void json_ws(struct json_in *in)
{
	while (in->p < in->end &&
	       (*in->p == ' ' || *in->p == '\t' || *in->p == '\r' || *in->p == '\n'))
		in->p++;
}

static inline struct json *json_new(enum json_kind k)
{
	struct json *j = calloc(1, sizeof(*j));
	j->kind = k;
	return j;
}

static inline int json_hex4(const char *p, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return -1;
		*v = *v * 16 + (unsigned)d;
	}
	return 0;
}

static inline char *json_string(struct json_in *in)
{
	if (in->p >= in->end || *in->p != '"')
		return (char *)json_fail(in, "expected a string");
	in->p++;
	size_t cap = (size_t)(in->end - in->p) + 1;
	char *out = malloc(cap), *o = out;
	while (in->p < in->end && *in->p != '"') {
		unsigned char c = (unsigned char)*in->p;
		if (c < 0x20) {
			free(out);
			return (char *)json_fail(in, "raw control character in a string");
		}
		if (c != '\\') {
			*o++ = (char)c;
			in->p++;
			continue;
		}
		if (in->p + 1 >= in->end) {
			free(out);
			return (char *)json_fail(in, "truncated escape");
		}
		char e = in->p[1];
		in->p += 2;
		const char *simple = strchr("\"\\/bfnrt", e);
		if (e && simple) {
			static const char map[] = "\"\\/\b\f\n\r\t";
			*o++ = map[simple - "\"\\/bfnrt"];
			continue;
		}
		unsigned u, lo;
		if (e != 'u' || in->end - in->p < 4 || json_hex4(in->p, &u)) {
			free(out);
			return (char *)json_fail(in, "bad escape");
		}
		in->p += 4;
		if (u >= 0xd800 && u < 0xdc00) {
			if (in->end - in->p < 6 || in->p[0] != '\\' || in->p[1] != 'u' ||
			    json_hex4(in->p + 2, &lo) || lo < 0xdc00 || lo > 0xdfff) {
				free(out);
				return (char *)json_fail(in, "unpaired surrogate");
			}
			in->p += 6;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		} else if (u >= 0xdc00 && u < 0xe000) {
			free(out);
			return (char *)json_fail(in, "unpaired surrogate");
		}
		if (u < 0x80) {
			*o++ = (char)u;
		} else if (u < 0x800) {
			*o++ = (char)(0xc0 | u >> 6);
			*o++ = (char)(0x80 | (u & 0x3f));
		} else if (u < 0x10000) {
			*o++ = (char)(0xe0 | u >> 12);
			*o++ = (char)(0x80 | ((u >> 6) & 0x3f));
			*o++ = (char)(0x80 | (u & 0x3f));
		} else {
			*o++ = (char)(0xf0 | u >> 18);
			*o++ = (char)(0x80 | ((u >> 12) & 0x3f));
			*o++ = (char)(0x80 | ((u >> 6) & 0x3f));
			*o++ = (char)(0x80 | (u & 0x3f));
		}
	}
	if (in->p >= in->end) {
		free(out);
		return (char *)json_fail(in, "unterminated string");
	}
	in->p++;
	*o = 0;
	return out;
}

static inline struct json *json_number(struct json_in *in)
{
	const char *s = in->p, *p = s;
#define JDIG(q) ((q) < in->end && *(q) >= '0' && *(q) <= '9')
	if (p < in->end && *p == '-')
		p++;
	if (!JDIG(p))
		return json_fail(in, "bad number");
	if (*p == '0')
		p++;
	else
		while (JDIG(p))
			p++;
	if (p < in->end && *p == '.') {
		p++;
		if (!JDIG(p))
			return json_fail(in, "bad fraction");
		while (JDIG(p))
			p++;
	}
	if (p < in->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < in->end && (*p == '+' || *p == '-'))
			p++;
		if (!JDIG(p))
			return json_fail(in, "bad exponent");
		while (JDIG(p))
			p++;
	}
#undef JDIG
	struct json *j = json_new(JSON_NUM);
	j->num_text = malloc((size_t)(p - s) + 1);
	memcpy(j->num_text, s, (size_t)(p - s));
	j->num_text[p - s] = 0;
	j->num = strtod(j->num_text, NULL);
	in->p = p;
	return j;
}

static inline struct json *json_value(struct json_in *in);

static inline int json_push(struct json *j, char *key, struct json *v)
{
	j->v = realloc(j->v, (size_t)(j->n + 1) * sizeof(*j->v));
	if (j->kind == JSON_OBJ)
		j->keys = realloc(j->keys, (size_t)(j->n + 1) * sizeof(*j->keys));
	if (j->keys)
		j->keys[j->n] = key;
	j->v[j->n++] = v;
	return 0;
}

static inline struct json *json_container(struct json_in *in, int obj)
{
	if (++in->depth > 64)
		return json_fail(in, "nested too deeply");
	struct json *j = json_new(obj ? JSON_OBJ : JSON_ARR);
	in->p++;
	json_ws(in);
	if (in->p < in->end && *in->p == (obj ? '}' : ']')) {
		in->p++;
		in->depth--;
		return j;
	}
	for (;;) {
		char *key = NULL;
		json_ws(in);
		if (obj) {
			key = json_string(in);
			if (!key)
				goto fail;
			for (int i = 0; i < j->n; i++)
				if (!strcmp(j->keys[i], key)) {
					free(key);
					json_fail(in, "duplicate key");
					goto fail;
				}
			json_ws(in);
			if (in->p >= in->end || *in->p != ':') {
				free(key);
				json_fail(in, "expected ':'");
				goto fail;
			}
			in->p++;
		}
		struct json *v = json_value(in);
		if (!v) {
			free(key);
			goto fail;
		}
		json_push(j, key, v);
		json_ws(in);
		if (in->p < in->end && *in->p == ',') {
			in->p++;
			continue;
		}
		if (in->p < in->end && *in->p == (obj ? '}' : ']')) {
			in->p++;
			in->depth--;
			return j;
		}
		json_fail(in, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		goto fail;
	}
fail:
	json_free(j);
	return NULL;
}

static inline struct json *json_value(struct json_in *in)
{
	json_ws(in);
	if (in->p >= in->end)
		return json_fail(in, "unexpected end");
	char c = *in->p;
	if (c == '{' || c == '[')
		return json_container(in, c == '{');
	if (c == '"') {
		char *s = json_string(in);
		if (!s)
			return NULL;
		struct json *j = json_new(JSON_STR);
		j->str = s;
		return j;
	}
	static const struct {
		const char *w;
		enum json_kind k;
		int b;
	} lit[] = {{"true", JSON_BOOL, 1}, {"false", JSON_BOOL, 0}, {"null", JSON_NULL, 0}};
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(lit[i].w);
		if ((size_t)(in->end - in->p) >= n && !memcmp(in->p, lit[i].w, n)) {
			in->p += n;
			struct json *j = json_new(lit[i].k);
			j->b = lit[i].b;
			return j;
		}
	}
	return json_number(in);
}

/* Parses text[0..len); NULL with the reason in err (may be NULL). */
static inline struct json *json_parse(const char *text, size_t len, char *err, size_t err_len)
{
	struct json_in in = {.start = text, .p = text, .end = text + len};
	struct json *j = json_value(&in);
	if (j) {
		json_ws(&in);
		if (in.p != in.end) {
			json_free(j);
			j = NULL;
			snprintf(in.err, sizeof(in.err), "trailing data at offset %td",
				 in.p - text);
		}
	}
	if (!j && err)
		snprintf(err, err_len, "%s", in.err);
	return j;
}

/* Member key of an object, or NULL. */
static inline const struct json *json_get(const struct json *j, const char *key)
{
	if (!j || j->kind != JSON_OBJ)
		return NULL;
	for (int i = 0; i < j->n; i++)
		if (!strcmp(j->keys[i], key))
			return j->v[i];
	return NULL;
}

static inline const char *json_str(const struct json *j, const char *key)
{
	const struct json *v = json_get(j, key);
	return v && v->kind == JSON_STR ? v->str : NULL;
}

static inline double json_num(const struct json *j, const char *key, double dflt)
{
	const struct json *v = json_get(j, key);
	return v && v->kind == JSON_NUM ? v->num : dflt;
}

#endif
