/* Small helpers shared by the loader tests: whole-file reads and ELF header edits. */
#ifndef NCCLBPF_LDR_UTIL_H
#define NCCLBPF_LDR_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint8_t *ldr_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*size = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* Offset of section header idx in an (unmodified, well-formed) ELF64 image. */
static inline uint8_t *ldr_shdr(uint8_t *img, uint32_t idx)
{
	uint64_t shoff;
	memcpy(&shoff, img + 40, 8);
	return img + shoff + (uint64_t)idx * 64;
}

static inline uint16_t ldr_shnum(const uint8_t *img)
{
	uint16_t n;
	memcpy(&n, img + 60, 2);
	return n;
}

/* Index of the section named name, or 0. */
static inline uint32_t ldr_find_shdr(uint8_t *img, const char *name)
{
	uint16_t strndx;
	uint64_t stroff;
	uint32_t n;
	memcpy(&strndx, img + 62, 2);
	memcpy(&stroff, ldr_shdr(img, strndx) + 24, 8);
	for (uint32_t i = 1; i < ldr_shnum(img); i++) {
		memcpy(&n, ldr_shdr(img, i), 4);
		if (!strcmp((const char *)img + stroff + n, name))
			return i;
	}
	return 0;
}

#endif
