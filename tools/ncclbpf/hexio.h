/* Reading the hex-byte format of `ncclbpf exec` / `ncclbpf disasm` (and the conformance suite):
 * whitespace-separated tokens of hex digits, each token an even number of digits read as
 * consecutive bytes ("b7 00 00 00" or "b7000000"). Errors are one line, never a crash. */
#ifndef NCCLBPF_HEXIO_H
#define NCCLBPF_HEXIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ebpf/isa.h"

struct hexbuf {
	uint8_t *data; /* malloc'd; NULL when empty */
	size_t len;
	size_t cap;
};

/* Parses a whole string (e.g. a command-line argument). Returns 0, or -1 with err set. */
int hex_parse_str(const char *s, size_t max_bytes, struct hexbuf *out, char *err, size_t err_len);

/* Parses a stream to its end. Returns 0, or -1 with err set. */
int hex_parse_file(FILE *f, size_t max_bytes, struct hexbuf *out, char *err, size_t err_len);

/* Reads a stream to its end without decoding (binary input, e.g. an ELF object). */
int hex_read_raw(FILE *f, size_t max_bytes, struct hexbuf *out, char *err, size_t err_len);

void hexbuf_free(struct hexbuf *b);

struct ebpf_object;
/* An ELF object from f (`--elf` of exec and disasm): the bytes themselves when they start with
 * the ELF magic, else in the hex format; opened with the NCCL platform and named name. NULL
 * with err "--elf: <why>" when the input is unreadable or empty, else the loader's message. */
struct ebpf_object *hex_open_object(FILE *f, const char *name, char *err, size_t err_len);

/* Turns bytes into instructions: the length must be a non-zero multiple of 8 and at most
 * EBPF_MAX_INSNS instructions. *insns is malloc'd. Returns 0, or -1 with err set. */
int hex_to_insns(const struct hexbuf *b, struct ebpf_insn **insns, uint32_t *n, char *err,
		 size_t err_len);

#endif
