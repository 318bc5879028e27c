/* A small streaming JSON writer for the commands' --json output: objects and arrays nest, commas
 * and key/value separators are placed by the writer, strings are escaped (control bytes as
 * \u00XX, other bytes passed through: our strings are UTF-8 or ASCII). One document per run,
 * ended by a newline. Schemas: docs/cli-json.md. */
#ifndef NCCLBPF_CLI_JSON_H
#define NCCLBPF_CLI_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int depth;
	unsigned items[JSON_MAX_DEPTH]; /* items written at each open level */
	char close[JSON_MAX_DEPTH];	/* '}' or ']' */
	int after_key;			/* a key was written; its value comes next */
};

void json_init(struct json *j, FILE *f);
void json_obj(struct json *j); /* { */
void json_arr(struct json *j); /* [ */
void json_end(struct json *j); /* } or ], whichever is open; the last one adds a newline */
void json_key(struct json *j, const char *k);

void json_str(struct json *j, const char *s); /* NULL writes null */
void json_strn(struct json *j, const char *s, size_t n);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_f64(struct json *j, double v); /* non-finite values as null */
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* A value that is already JSON text (e.g. a BTF-typed map value from the engine). */
void json_raw(struct json *j, const char *text);
/* Bytes as a lowercase hex string in memory order. */
void json_hex(struct json *j, const void *data, size_t n);

/* key + value in one call. */
void json_kstr(struct json *j, const char *k, const char *s);
void json_ku64(struct json *j, const char *k, uint64_t v);
void json_ki64(struct json *j, const char *k, int64_t v);
void json_kf64(struct json *j, const char *k, double v);
void json_kbool(struct json *j, const char *k, int v);

#endif
