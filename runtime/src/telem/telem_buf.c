/* Bounded text buffer for the exporter's outputs (telem_internal.h): it never grows, and what
 * does not fit is dropped a whole line at a time, so a reader never sees a partial line. */
#include <stdio.h>
#include <string.h>

#include "telem_internal.h"

void tb_vprintf(struct tbuf *b, const char *fmt, va_list ap)
{
	if (b->full)
		return;
	size_t room = b->cap - b->len;
	int n = vsnprintf(b->p + b->len, room, fmt, ap);
	if (n < 0 || (size_t)n >= room) {
		b->full = 1;
		b->len = b->line; /* drop the partial line */
		return;
	}
	b->len += (size_t)n;
}

void tb_printf(struct tbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tb_vprintf(b, fmt, ap);
	va_end(ap);
}

void tb_puts(struct tbuf *b, const char *s)
{
	tb_printf(b, "%s", s);
}

void tb_escaped(struct tbuf *b, const char *s)
{
	for (; s && *s && !b->full; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\\')
			tb_puts(b, "\\\\");
		else if (c == '"')
			tb_puts(b, "\\\"");
		else if (c == '\n')
			tb_puts(b, "\\n");
		else
			tb_printf(b, "%c", c < 0x20 || c == 0x7f ? '?' : (char)c);
	}
}

void tb_eol(struct tbuf *b)
{
	tb_puts(b, "\n");
	if (!b->full)
		b->line = b->len;
}
