/* One named section of an ELF64 image in memory, without opening it as an object (ebpf/elf.h):
 * every offset and size read from the image is checked against it before use. */
#include <errno.h>
#include <string.h>

#include "ebpf/elf.h"
#include "loader.h"

#define EH_SIZE 64
#define SH_SIZE 64

int ebpf_elf_find_section(const void *img, size_t size, const char *name, uint64_t *off,
			  uint64_t *len, uint32_t *type, char *err, size_t err_len)
{
	const uint8_t *b = img;
	if (!b || size < EH_SIZE || memcmp(b, "\177ELF", 4) != 0 || b[4] != 2 /* ELFCLASS64 */ ||
	    b[5] != 1 /* ELFDATA2LSB */)
		return ldr_err(err, err_len, ENOEXEC, "not a little-endian ELF64 object");
	uint64_t shoff = ebpf_le64(b + 0x28);
	uint16_t shentsize = ebpf_le16(b + 0x3a), shnum = ebpf_le16(b + 0x3c),
		 shstrndx = ebpf_le16(b + 0x3e);
	if (shentsize != SH_SIZE || shstrndx >= shnum ||
	    !ldr_in_bounds(shoff, (uint64_t)shnum * SH_SIZE, size))
		return ldr_err(err, err_len, ENOEXEC, "bad section header table");
	const uint8_t *strsh = b + shoff + (uint64_t)shstrndx * SH_SIZE;
	uint64_t stroff = ebpf_le64(strsh + 0x18), strsize = ebpf_le64(strsh + 0x20);
	if (!ldr_in_bounds(stroff, strsize, size))
		return ldr_err(err, err_len, ENOEXEC, "bad section name table");
	size_t want = strlen(name) + 1;
	for (uint16_t i = 1; i < shnum; i++) { /* section 0 is the null section */
		const uint8_t *sh = b + shoff + (uint64_t)i * SH_SIZE;
		uint32_t nm = ebpf_le32(sh);
		if (nm >= strsize || strsize - nm < want ||
		    memcmp(b + stroff + nm, name, want) != 0)
			continue;
		*type = ebpf_le32(sh + 4);
		if (*type == EBPF_ELF_SHT_NOBITS) {
			*off = 0, *len = 0;
			return 0;
		}
		*off = ebpf_le64(sh + 0x18), *len = ebpf_le64(sh + 0x20);
		if (!ldr_in_bounds(*off, *len, size))
			return ldr_err(err, err_len, ENOEXEC, "section %s lies outside the file",
				       name);
		return 0;
	}
	return ldr_err(err, err_len, ENOENT, "no %s section", name);
}
