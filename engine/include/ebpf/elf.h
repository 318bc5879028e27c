/* Reading an ELF64 little-endian image in memory without opening it as an object: the
 * little-endian field readers every ELF reader of the project uses (the input may be unaligned),
 * and one named section found with every offset and size checked against the image (the image
 * is untrusted input). For callers that need one section's bytes (a bundle's settings, a
 * template's data) and must not run the loader. */
#ifndef EBPF_EBPF_ELF_H
#define EBPF_EBPF_ELF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline uint16_t ebpf_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t ebpf_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t ebpf_le64(const uint8_t *p)
{
	return ebpf_le32(p) | (uint64_t)ebpf_le32(p + 4) << 32;
}

#define EBPF_ELF_SHT_PROGBITS 1
#define EBPF_ELF_SHT_NOBITS   8

/* Section `name` of the ELF64 little-endian image img[0..size): *off and *len its bytes in the
 * image (both 0 for a section without file contents, SHT_NOBITS), *type its sh_type. Returns 0,
 * -ENOENT when the image has no such section, -ENOEXEC when it is not a well-formed ELF64
 * little-endian image (err, when not NULL, says what is wrong in one line). */
int ebpf_elf_find_section(const void *img, size_t size, const char *name, uint64_t *off,
			  uint64_t *len, uint32_t *type, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
