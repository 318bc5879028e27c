/* Hex-byte input for the CLI: a small state machine fed one character at a time, so that the
 * same code serves strings and streams of any size and reports the first bad character with its
 * offset. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "hexio.h"
#include "ncclbpf/hex.h"
#include "ncclbpf/nccl_platform.h"

struct hexstate {
	struct hexbuf *out;
	size_t max;
	size_t off; /* characters consumed */
	int nibble; /* pending high nibble, or -1 */
	size_t tok; /* digits in the current token */
	char *err;
	size_t err_len;
};

static int push(struct hexstate *st, uint8_t byte)
{
	struct hexbuf *b = st->out;

	if (b->len >= st->max) {
		snprintf(st->err, st->err_len, "input larger than %zu bytes", st->max);
		return -1;
	}
	if (b->len == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		uint8_t *p;

		if (cap > st->max)
			cap = st->max;
		p = realloc(b->data, cap);
		if (!p) {
			snprintf(st->err, st->err_len, "out of memory reading %zu bytes", cap);
			return -1;
		}
		b->data = p;
		b->cap = cap;
	}
	b->data[b->len++] = byte;
	return 0;
}

static int end_token(struct hexstate *st)
{
	if (st->nibble >= 0) {
		snprintf(st->err, st->err_len,
			 "odd number of hex digits (%zu) in the token ending at offset %zu",
			 st->tok, st->off);
		return -1;
	}
	st->tok = 0;
	return 0;
}

static int feed(struct hexstate *st, int c)
{
	int v;

	if (isspace(c)) {
		if (end_token(st))
			return -1;
		st->off++;
		return 0;
	}
	v = ncclbpf_hex_digit(c);
	if (v < 0) {
		if (isprint(c))
			snprintf(st->err, st->err_len, "invalid hex character '%c' at offset %zu",
				 c, st->off);
		else
			snprintf(st->err, st->err_len, "invalid hex character 0x%02x at offset %zu",
				 (unsigned)c & 0xff, st->off);
		return -1;
	}
	st->tok++;
	st->off++;
	if (st->nibble < 0) {
		st->nibble = v;
		return 0;
	}
	v |= st->nibble << 4;
	st->nibble = -1;
	return push(st, (uint8_t)v);
}

static void start(struct hexstate *st, struct hexbuf *out, size_t max, char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	*st =
	    (struct hexstate){.out = out, .max = max, .nibble = -1, .err = err, .err_len = err_len};
}

static int finish(struct hexstate *st, int rc)
{
	if (!rc)
		rc = end_token(st);
	if (rc)
		hexbuf_free(st->out);
	return rc;
}

int hex_parse_str(const char *s, size_t max_bytes, struct hexbuf *out, char *err, size_t err_len)
{
	struct hexstate st;
	int rc = 0;

	start(&st, out, max_bytes, err, err_len);
	for (; *s && !rc; s++)
		rc = feed(&st, (unsigned char)*s);
	return finish(&st, rc);
}

int hex_parse_file(FILE *f, size_t max_bytes, struct hexbuf *out, char *err, size_t err_len)
{
	struct hexstate st;
	char chunk[65536];
	size_t n;
	int rc = 0;

	start(&st, out, max_bytes, err, err_len);
	while (!rc && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		for (size_t i = 0; i < n && !rc; i++)
			rc = feed(&st, (unsigned char)chunk[i]);
	if (!rc && ferror(f)) {
		snprintf(err, err_len, "read error on input");
		rc = -1;
	}
	return finish(&st, rc);
}

int hex_read_raw(FILE *f, size_t max_bytes, struct hexbuf *out, char *err, size_t err_len)
{
	struct hexstate st;
	int c, rc = 0;

	start(&st, out, max_bytes, err, err_len);
	while (!rc && (c = getc(f)) != EOF)
		rc = push(&st, (uint8_t)c);
	if (!rc && ferror(f)) {
		snprintf(err, err_len, "read error on input");
		rc = -1;
	}
	if (rc)
		hexbuf_free(out);
	return rc;
}

void hexbuf_free(struct hexbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

int hex_to_insns(const struct hexbuf *b, struct ebpf_insn **insns, uint32_t *n, char *err,
		 size_t err_len)
{
	size_t cnt = b->len / sizeof(struct ebpf_insn);

	*insns = NULL;
	*n = 0;
	if (!b->len) {
		snprintf(err, err_len, "empty program");
		return -1;
	}
	if (b->len % sizeof(struct ebpf_insn)) {
		snprintf(err, err_len,
			 "program is %zu bytes, not a multiple of 8 (truncated instruction %zu)",
			 b->len, cnt);
		return -1;
	}
	if (cnt > EBPF_MAX_INSNS) {
		snprintf(err, err_len, "program has %zu instructions, more than %u", cnt,
			 EBPF_MAX_INSNS);
		return -1;
	}
	*insns = malloc(b->len);
	if (!*insns) {
		snprintf(err, err_len, "out of memory for %zu instructions", cnt);
		return -1;
	}
	/* The byte order on the wire is the eBPF encoding (little-endian), as is the host's. */
	memcpy(*insns, b->data, b->len);
	*n = (uint32_t)cnt;
	return 0;
}

struct ebpf_object *hex_open_object(FILE *f, const char *name, char *err, size_t err_len)
{
	struct ebpf_object_open_opts oo = {.sz = sizeof(oo), .name = name};
	struct ebpf_object *obj;
	struct hexbuf in;
	char why[512];
	int c = getc(f), rc;

	if (c != EOF)
		ungetc(c, f);
	if (c == 0x7f)
		rc = hex_read_raw(f, EBPF_OBJECT_MAX_SIZE, &in, why, sizeof(why));
	else
		rc = hex_parse_file(f, EBPF_OBJECT_MAX_SIZE, &in, why, sizeof(why));
	if (!rc && !in.len) {
		hexbuf_free(&in);
		snprintf(why, sizeof(why), "empty input");
		rc = -1;
	}
	if (rc) {
		snprintf(err, err_len, "--elf: %s", why);
		return NULL;
	}
	obj = ncclbpf_object_open_mem(in.data, in.len, &oo, err, err_len);
	hexbuf_free(&in);
	return obj;
}
