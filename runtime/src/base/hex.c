/* Bytes as hex text (ncclbpf/hex.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ncclbpf/hex.h"

void ncclbpf_hex(const void *buf, size_t len, char *out)
{
	static const char d[] = "0123456789abcdef";
	const unsigned char *p = buf;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = d[p[i] >> 4];
		out[2 * i + 1] = d[p[i] & 15];
	}
	out[2 * len] = 0;
}

int ncclbpf_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int ncclbpf_unhex(const char *hex, void *out, size_t max, char *why, size_t why_len)
{
	size_t n = strlen(hex);
	char scratch[1];
	if (!why) {
		why = scratch;
		why_len = sizeof(scratch);
	}
	for (size_t i = 0; i < n; i++)
		if (ncclbpf_hex_digit(hex[i]) < 0) {
			unsigned char c = (unsigned char)hex[i];
			if (c > ' ' && c < 127)
				snprintf(why, why_len, "'%c' at position %zu is not a hex digit", c,
					 i + 1);
			else
				snprintf(why, why_len,
					 "byte 0x%02x at position %zu is not a hex digit", c,
					 i + 1);
			return -EINVAL;
		}
	if (n % 2) {
		snprintf(why, why_len, "%zu hex digits, an odd number (two make a byte)", n);
		return -EINVAL;
	}
	if (n / 2 > max) {
		snprintf(why, why_len, "%zu bytes, more than %zu", n / 2, max);
		return -E2BIG;
	}
	unsigned char *o = out;
	for (size_t i = 0; i < n / 2; i++)
		o[i] = (unsigned char)(ncclbpf_hex_digit(hex[2 * i]) << 4 |
				       ncclbpf_hex_digit(hex[2 * i + 1]));
	return (int)(n / 2);
}
