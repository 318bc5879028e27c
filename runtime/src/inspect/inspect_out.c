/* The inspection server's response writer: record lines built in a buffer and written to the
 * client's socket in large pieces (a map dump can be long). A failed write (client gone, send
 * timeout) drops the rest of the answer; the server then closes the connection. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "inspect.h"

void insp_flush(struct insp_out *o)
{
	size_t off = 0;
	while (!o->err && off < o->len) {
		ssize_t n = send(o->fd, o->buf + off, o->len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = 1;
		else
			off += (size_t)n;
	}
	o->len = 0;
}

static void put(struct insp_out *o, const char *s, size_t n)
{
	while (n) {
		if (o->len == sizeof(o->buf))
			insp_flush(o);
		size_t k = sizeof(o->buf) - o->len;
		if (k > n)
			k = n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

static void puts_raw(struct insp_out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_escaped(struct insp_out *o, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	if (!*s) {
		puts_raw(o, "%00"); /* never an empty value: "k=" would read as a missing one */
		return;
	}
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c <= ' ' || c >= 0x7f || c == '%' || c == '=') {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};
			put(o, e, 3);
		} else {
			put(o, (const char *)&c, 1);
		}
	}
}

void insp_begin(struct insp_out *o, const char *word)
{
	puts_raw(o, word);
}

void insp_kv(struct insp_out *o, const char *key, const char *value)
{
	put(o, " ", 1);
	puts_raw(o, key);
	put(o, "=", 1);
	put_escaped(o, value ? value : "");
}

void insp_kvu(struct insp_out *o, const char *key, uint64_t value)
{
	char b[24];
	snprintf(b, sizeof(b), "%llu", (unsigned long long)value);
	insp_kv(o, key, b);
}

void insp_kvi(struct insp_out *o, const char *key, int64_t value)
{
	char b[24];
	snprintf(b, sizeof(b), "%lld", (long long)value);
	insp_kv(o, key, b);
}

void insp_kvhex(struct insp_out *o, const char *key, const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *d = data;
	put(o, " ", 1);
	puts_raw(o, key);
	put(o, "=", 1);
	if (!len)
		puts_raw(o, "%00");
	for (size_t i = 0; i < len; i++) {
		char e[2] = {hex[d[i] >> 4], hex[d[i] & 15]};
		put(o, e, 2);
	}
}

void insp_end(struct insp_out *o)
{
	put(o, "\n", 1);
}

void insp_ok(struct insp_out *o)
{
	puts_raw(o, "ok\n");
	insp_flush(o);
}

void insp_error(struct insp_out *o, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' ';
	puts_raw(o, "error ");
	puts_raw(o, msg);
	put(o, "\n", 1);
	insp_flush(o);
}
