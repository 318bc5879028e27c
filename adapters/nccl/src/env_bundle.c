/* Finds one named section of an ELF64 object in memory with every offset and size
 * bounds-checked against the image (the object is untrusted input, as for the engine's loader).
 * Kept separate from the engine's loader so that the env plugin stays small: it runs before any
 * communicator exists and must not start the runtime (it only takes the launch bundle's bytes
 * from it). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_bundle.h"

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

int env_bundle_section(const void *img, size_t size, const char *name, char **out, size_t *len)
{
	uint64_t off, l;
	int rc = find_section(img, size, name, &off, &l);
	if (rc)
		return rc;
	*out = malloc(l + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, (const uint8_t *)img + off, l);
	(*out)[l] = 0;
	*len = l;
	return 0;
}

int env_bundle_parse(const void *img, size_t size, struct env_settings *set)
{
	char *text;
	size_t len;
	memset(set, 0, sizeof(*set));
	int rc = env_bundle_section(img, size, ENV_BUNDLE_SECTION, &text, &len);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	env_settings_parse(text, len, set);
	free(text);
	return 0;
}
