/* Reads one named section from an ELF64 object with every offset and size bounds-checked
 * against the file (the object is untrusted input, as for the engine's loader). Kept separate
 * from the engine's loader so that the env plugin stays self-contained: it runs before any
 * communicator exists and must not touch the runtime. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_bundle.h"

#define MAX_OBJECT_SIZE (64u << 20)

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static int in_file(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

static int slurp(const char *path, uint8_t **buf, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	int rc = 0;
	long end = -1;
	if (fseek(f, 0, SEEK_END) == 0)
		end = ftell(f);
	if (end < 0 || (unsigned long)end > MAX_OBJECT_SIZE || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return end < 0 ? -EIO : -EFBIG;
	}
	*buf = malloc(end ? (size_t)end : 1);
	if (!*buf)
		rc = -ENOMEM;
	else if (fread(*buf, 1, (size_t)end, f) != (size_t)end)
		rc = -EIO;
	fclose(f);
	if (rc) {
		free(*buf);
		*buf = NULL;
	}
	*size = (size_t)end;
	return rc;
}

static int find_section(const uint8_t *b, size_t size, const char *name, uint64_t *off,
			uint64_t *len)
{
	if (size < 64 || memcmp(b, "\177ELF", 4) != 0 || b[4] != 2 /* ELFCLASS64 */ ||
	    b[5] != 1 /* little endian */)
		return -ENOEXEC;
	uint64_t shoff = rd64(b + 0x28);
	uint16_t shentsize = rd16(b + 0x3a), shnum = rd16(b + 0x3c), shstrndx = rd16(b + 0x3e);
	if (shentsize != 64 || shstrndx >= shnum ||
	    !in_file(shoff, (uint64_t)shnum * shentsize, size))
		return -ENOEXEC;
	const uint8_t *strsh = b + shoff + (uint64_t)shstrndx * 64;
	uint64_t stroff = rd64(strsh + 0x18), strsize = rd64(strsh + 0x20);
	if (!in_file(stroff, strsize, size))
		return -ENOEXEC;
	size_t nl = strlen(name) + 1;
	for (uint16_t i = 1; i < shnum; i++) {
		const uint8_t *sh = b + shoff + (uint64_t)i * 64;
		uint32_t noff = rd32(sh), type = rd32(sh + 4);
		if (noff >= strsize || nl > strsize - noff ||
		    memcmp(b + stroff + noff, name, nl) != 0)
			continue;
		if (type == 8 /* SHT_NOBITS */) {
			*off = 0, *len = 0;
			return 0;
		}
		*off = rd64(sh + 0x18), *len = rd64(sh + 0x20);
		return in_file(*off, *len, size) ? 0 : -ENOEXEC;
	}
	return -ENOENT;
}

int env_bundle_read_section(const char *path, const char *name, char **out, size_t *len)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	int rc = slurp(path, &buf, &size);
	if (rc)
		return rc;
	uint64_t off, l;
	rc = find_section(buf, size, name, &off, &l);
	if (!rc) {
		*out = malloc(l + 1);
		if (!*out) {
			rc = -ENOMEM;
		} else {
			memcpy(*out, buf + off, l);
			(*out)[l] = 0;
			*len = l;
		}
	}
	free(buf);
	return rc;
}

int env_bundle_load(const char *path, struct env_settings *set)
{
	char *text;
	size_t len;
	memset(set, 0, sizeof(*set));
	int rc = env_bundle_read_section(path, ENV_BUNDLE_SECTION, &text, &len);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	env_settings_parse(text, len, set);
	free(text);
	return 0;
}
