/* Bytes as hex text, the one codec of every text protocol that carries map keys and values: the
 * control plane's records, the inspection protocol's `map update` and the CLI's KEY and VALUE. */
#ifndef NCCLBPF_HEX_H
#define NCCLBPF_HEX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The value of hex digit c (either case), or -1. */
int ncclbpf_hex_digit(int c);

/* Lower-case hex of len bytes into out (2 * len + 1 bytes, NUL-terminated). */
void ncclbpf_hex(const void *buf, size_t len, char *out);

/* Decodes hex (pairs of digits of either case, nothing else) into out, at most max bytes.
 * Returns the number of bytes, or -EINVAL (odd number of digits, a character that is not a hex
 * digit) or -E2BIG (more than max bytes), with why in words when why is not NULL:
 * "3 hex digits, an odd number (two make a byte)", "'g' at position 5 is not a hex digit",
 * "9 bytes, more than 8". */
int ncclbpf_unhex(const char *hex, void *out, size_t max, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
