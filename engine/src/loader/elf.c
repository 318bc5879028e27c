/* ELF64 little-endian container parsing for BPF objects. Reads through ebpf_le16/32/64 (the
 * input may be unaligned) and checks every header field against the file size before using it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "loader.h"

int ldr_err(char *err, size_t err_len, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ebpf_verrf(err, err_len, fmt, ap);
	va_end(ap);
	return -errnum;
}

/* Offsets in Elf64_Ehdr / Elf64_Shdr / Elf64_Sym (fixed by the ELF64 specification). */
#define EH_SIZE	 64
#define SH_SIZE	 64
#define SYM_SIZE 24

/* A string in a string table section: NUL-terminated within the section. */
static const char *strtab_at(const uint8_t *tab, uint64_t tab_size, uint64_t off)
{
	if (!tab || off >= tab_size)
		return NULL;
	if (!memchr(tab + off, 0, tab_size - off))
		return NULL;
	return (const char *)tab + off;
}

struct span {
	uint64_t off, end;
	uint32_t idx;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Section contents (and the headers themselves) must not overlap. */
static int check_overlaps(struct ldr_elf *elf, uint64_t shoff, char *err, size_t err_len)
{
	struct span *s = calloc(elf->n_secs + 2, sizeof(*s));
	uint32_t n = 0;
	int ret = 0;

	if (!s)
		return ldr_err(err, err_len, ENOMEM, "out of memory");
	s[n++] = (struct span){0, EH_SIZE, UINT32_MAX};
	s[n++] = (struct span){shoff, shoff + (uint64_t)elf->n_secs * SH_SIZE, UINT32_MAX - 1};
	for (uint32_t i = 1; i < elf->n_secs; i++) {
		const struct ldr_sec *sec = &elf->secs[i];
		if (sec->type == LDR_SHT_NOBITS || sec->type == LDR_SHT_NULL || !sec->size)
			continue;
		s[n++] = (struct span){sec->off, sec->off + sec->size, i};
	}
	qsort(s, n, sizeof(*s), cmp_span);
	for (uint32_t i = 1; i < n; i++) {
		if (s[i].off < s[i - 1].end) {
			uint32_t a = s[i - 1].idx, b = s[i].idx;
			const char *na = a >= elf->n_secs ? "ELF headers" : elf->secs[a].name;
			const char *nb = b >= elf->n_secs ? "ELF headers" : elf->secs[b].name;
			ret = ldr_err(err, err_len, EINVAL,
				      "sections '%s' and '%s' overlap at file offset 0x%llx", na,
				      nb, (unsigned long long)s[i].off);
			break;
		}
	}
	free(s);
	return ret;
}

int ldr_elf_parse(struct ldr_elf *elf, const uint8_t *buf, size_t size, char *err, size_t err_len)
{
	memset(elf, 0, sizeof(*elf));
	elf->buf = buf;
	elf->size = size;

	if (size < EH_SIZE)
		return ldr_err(err, err_len, EINVAL, "not an ELF file: %zu bytes", size);
	if (memcmp(buf,
		   "\x7f"
		   "ELF",
		   4))
		return ldr_err(err, err_len, EINVAL, "not an ELF file: bad magic");
	if (buf[4] != 2)
		return ldr_err(err, err_len, EINVAL, "ELF class %u not supported (need ELF64)",
			       buf[4]);
	if (buf[5] != 1)
		return ldr_err(err, err_len, EINVAL,
			       "ELF data encoding %u not supported (need little-endian)", buf[5]);
	if (buf[6] != 1)
		return ldr_err(err, err_len, EINVAL, "ELF version %u not supported", buf[6]);
	uint16_t e_type = ebpf_le16(buf + 16);
	uint16_t machine = ebpf_le16(buf + 18);
	if (e_type != 1)
		return ldr_err(err, err_len, EINVAL,
			       "ELF type %u not supported (need a relocatable object, ET_REL)",
			       e_type);
	if (machine != LDR_EM_BPF)
		return ldr_err(err, err_len, EINVAL,
			       "ELF machine %u is not BPF (%u): compile with clang -target bpf",
			       machine, LDR_EM_BPF);
	uint64_t shoff = ebpf_le64(buf + 40);
	uint16_t shentsize = ebpf_le16(buf + 58);
	uint16_t shnum = ebpf_le16(buf + 60);
	uint16_t shstrndx = ebpf_le16(buf + 62);
	if (shnum == 0 || shnum > LDR_MAX_SECTIONS)
		return ldr_err(err, err_len, EINVAL, "ELF: %u section headers not supported",
			       shnum);
	if (shentsize != SH_SIZE)
		return ldr_err(err, err_len, EINVAL, "ELF: section header size %u (need %u)",
			       shentsize, SH_SIZE);
	if (!ldr_in_bounds(shoff, (uint64_t)shnum * SH_SIZE, size))
		return ldr_err(err, err_len, EINVAL,
			       "ELF: section headers at 0x%llx (%u) outside the file (%zu bytes)",
			       (unsigned long long)shoff, shnum, size);
	if (shstrndx == 0 || shstrndx >= shnum)
		return ldr_err(err, err_len, EINVAL, "ELF: bad section name table index %u",
			       shstrndx);

	elf->n_secs = shnum;
	elf->secs = calloc(shnum, sizeof(*elf->secs));
	if (!elf->secs)
		return ldr_err(err, err_len, ENOMEM, "out of memory");

	for (uint32_t i = 0; i < shnum; i++) {
		const uint8_t *h = buf + shoff + (uint64_t)i * SH_SIZE;
		struct ldr_sec *s = &elf->secs[i];
		s->type = ebpf_le32(h + 4);
		s->flags = ebpf_le64(h + 8);
		s->off = ebpf_le64(h + 24);
		s->size = ebpf_le64(h + 32);
		s->link = ebpf_le32(h + 40);
		s->info = ebpf_le32(h + 44);
		s->entsize = ebpf_le64(h + 56);
		s->name = ""; /* names are filled once the name table is known to be sane */
		if (i == 0)
			continue;
		if (s->type != LDR_SHT_NOBITS && s->type != LDR_SHT_NULL) {
			if (!ldr_in_bounds(s->off, s->size, size))
				return ldr_err(
				    err, err_len, EINVAL,
				    "section %u: contents 0x%llx+0x%llx outside the file "
				    "(%zu bytes)",
				    i, (unsigned long long)s->off, (unsigned long long)s->size,
				    size);
			s->data = buf + s->off;
		}
	}
	const struct ldr_sec *shstr = &elf->secs[shstrndx];
	if (shstr->type != LDR_SHT_STRTAB || !shstr->data)
		return ldr_err(err, err_len, EINVAL,
			       "ELF: section name table %u is not a string table", shstrndx);
	for (uint32_t i = 1; i < shnum; i++) {
		uint32_t name_off = ebpf_le32(buf + shoff + (uint64_t)i * SH_SIZE);
		const char *name = strtab_at(shstr->data, shstr->size, name_off);
		if (!name)
			return ldr_err(err, err_len, EINVAL,
				       "section %u: name offset %u outside the name table", i,
				       name_off);
		elf->secs[i].name = name;
	}
	int ret = check_overlaps(elf, shoff, err, err_len);
	if (ret)
		return ret;

	/* The symbol table (at most one) and its string table. */
	for (uint32_t i = 1; i < shnum; i++) {
		const struct ldr_sec *s = &elf->secs[i];
		if (s->type != LDR_SHT_SYMTAB)
			continue;
		if (elf->symtab_idx)
			return ldr_err(err, err_len, EINVAL, "section '%s': second symbol table",
				       s->name);
		if (s->entsize != SYM_SIZE || s->size % SYM_SIZE)
			return ldr_err(err, err_len, EINVAL,
				       "section '%s': symbol size %llu / table size %llu invalid",
				       s->name, (unsigned long long)s->entsize,
				       (unsigned long long)s->size);
		if (s->size / SYM_SIZE > LDR_MAX_SYMBOLS)
			return ldr_err(err, err_len, E2BIG, "section '%s': %llu symbols (limit %u)",
				       s->name, (unsigned long long)(s->size / SYM_SIZE),
				       LDR_MAX_SYMBOLS);
		if (s->link == 0 || s->link >= shnum || elf->secs[s->link].type != LDR_SHT_STRTAB ||
		    !elf->secs[s->link].data)
			return ldr_err(err, err_len, EINVAL,
				       "section '%s': string table index %u invalid", s->name,
				       s->link);
		elf->symtab_idx = i;
		elf->syms = s->data;
		elf->n_syms = (uint32_t)(s->size / SYM_SIZE);
		elf->strtab = (const char *)elf->secs[s->link].data;
		elf->strtab_size = elf->secs[s->link].size;
	}
	return 0;
}

void ldr_elf_free(struct ldr_elf *elf)
{
	free(elf->secs);
	elf->secs = NULL;
}

int ldr_elf_sym(const struct ldr_elf *elf, uint32_t idx, struct ldr_sym *sym, char *err,
		size_t err_len)
{
	if (!elf->syms || idx >= elf->n_syms)
		return ldr_err(err, err_len, EINVAL,
			       "symbol %u outside the symbol table (%u symbols)", idx, elf->n_syms);
	const uint8_t *p = elf->syms + (uint64_t)idx * SYM_SIZE;
	uint32_t name_off = ebpf_le32(p);
	uint8_t info = p[4];
	sym->shndx = ebpf_le16(p + 6);
	sym->value = ebpf_le64(p + 8);
	sym->size = ebpf_le64(p + 16);
	sym->type = info & 0xf;
	sym->bind = info >> 4;
	sym->name = strtab_at((const uint8_t *)elf->strtab, elf->strtab_size, name_off);
	if (!sym->name)
		return ldr_err(err, err_len, EINVAL,
			       "symbol %u: name offset %u outside the string table", idx, name_off);
	/* Section symbols are unnamed; name them after their section for messages. */
	if (sym->type == LDR_STT_SECTION && !sym->name[0] && sym->shndx < elf->n_secs)
		sym->name = elf->secs[sym->shndx].name;
	return 0;
}

uint32_t ldr_elf_find_sec(const struct ldr_elf *elf, const char *name)
{
	for (uint32_t i = 1; i < elf->n_secs; i++)
		if (!strcmp(elf->secs[i].name, name))
			return i;
	return 0;
}
