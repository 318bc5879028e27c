/* Mutation test: every shipped object (policies, unsafe policies, loader test objects) is fed to
 * the loader as its 0-byte, truncated and bit-flipped variants. Each variant must be rejected
 * cleanly (NULL, errno set, a message) or accepted as a consistent object; never a crash, leak or
 * sanitizer report (the .asan twin runs the same). Truncation at every length; single-bit flips
 * in every byte of the ELF header, the section headers and the symbol, relocation, BTF and
 * .BTF.ext sections (where structure lives) and every 31st byte elsewhere; plus some
 * deterministic multi-byte corruptions.
 * Arguments: directories whose *.o files are the seeds; an optional "--budget N" caps the number
 * of variants per file (default: all). */
#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "check.h"
#include "ldr_util.h"
#include "ebpf/elf.h"
#include "ebpf/object.h"
#include "ncclbpf/nccl_platform.h"

#define LOAD_EVERY 64
#define STRIDE	   31 /* bytes outside the structural ranges: every STRIDE-th gets flipped */

static uint64_t variants, accepted, loaded;

static void try_variant(const uint8_t *buf, size_t size)
{
	char err[256];
	err[0] = 0;
	errno = 0;
	variants++;
	/* The section finder of the env plugin and the tuner's template writer: found bytes lie
	 * inside the image, a refusal says why. */
	uint64_t off = 0, len = 0;
	uint32_t type;
	int rc = ebpf_elf_find_section(buf, size, ".data", &off, &len, &type, err, sizeof(err));
	CHECK(rc == 0 ? off <= size && len <= size - off
		      : (rc == -ENOENT || rc == -ENOEXEC) && err[0] != 0);
	err[0] = 0;
	struct ebpf_object *obj = ncclbpf_object_open_mem(buf, size, NULL, err, sizeof(err));
	if (!obj) {
		CHECK(errno != 0);
		CHECK(err[0] != 0);
		return;
	}
	accepted++;
	/* Accepted objects must be self-consistent. */
	CHECK(ebpf_object__prog_cnt(obj) > 0);
	for (uint32_t i = 0; i < ebpf_object__prog_cnt(obj); i++) {
		struct ebpf_program *p = ebpf_object__prog(obj, i);
		uint32_t n = ebpf_program__insn_cnt(p), nl;
		const struct ebpf_line_info *li = ebpf_program__line_info(p, &nl);
		CHECK(n >= ebpf_program__entry_insn_cnt(p) && n > 0);
		for (uint32_t k = 0; k < nl; k++)
			CHECK(li[k].insn < n);
		const struct ebpf_insn *in = ebpf_program__insns(p);
		for (uint32_t k = 0; k < n; k++)
			if (in[k].code == (EBPF_JMP | EBPF_CALL) &&
			    in[k].src_reg == EBPF_PSEUDO_CALL)
				CHECK((int64_t)k + in[k].imm + 1 >= 0 &&
				      (int64_t)k + in[k].imm + 1 < n);
	}
	/* Loading (maps, verification, program creation) must fail as cleanly. Nothing is run:
	 * whether a variant is safe to run is the verifier's question, not this test's. Map
	 * creation costs system calls, so one accepted variant in LOAD_EVERY is loaded. */
	if (accepted % LOAD_EVERY) {
		ebpf_object__close(obj);
		return;
	}
	/* A small complexity budget: mutated loops would otherwise each cost the full 1 M. Map
	 * memory as the plugin bounds it (the seeds include objects declaring gigabytes). */
	struct ebpf_object_limits lim = {.sz = sizeof(lim), .map_bytes = 1ull << 30};
	struct ebpf_object_load_opts lo = {
	    .sz = sizeof(lo), .complexity_limit = 4000, .limits = &lim};
	err[0] = 0;
	int ret = ebpf_object__load(obj, &lo, err, sizeof(err));
	if (ret) {
		CHECK(ret < 0 && err[0] != 0);
		CHECK(!ebpf_object__is_loaded(obj));
	} else {
		loaded++;
		for (uint32_t i = 0; i < ebpf_object__prog_cnt(obj); i++)
			CHECK(ebpf_program__exec(ebpf_object__prog(obj, i)) != NULL);
	}
	ebpf_object__close(obj);
}

/* Byte ranges where the structure of the file lives: every one of their bits gets flipped. */
static int structural(const uint8_t *img, size_t size, size_t off)
{
	if (off < 64)
		return 1;
	uint64_t shoff;
	uint16_t shnum;
	memcpy(&shoff, img + 40, 8);
	memcpy(&shnum, img + 60, 2);
	if (shoff <= size && off >= shoff && off < shoff + (uint64_t)shnum * 64)
		return 1;
	for (uint16_t i = 1; i < shnum && shoff + (uint64_t)(i + 1) * 64 <= size; i++) {
		const uint8_t *h = img + shoff + (uint64_t)i * 64;
		uint32_t type;
		uint64_t so, ss;
		memcpy(&type, h + 4, 4);
		memcpy(&so, h + 24, 8);
		memcpy(&ss, h + 32, 8);
		if (off < so || off - so >= ss)
			continue;
		uint32_t name;
		uint16_t strndx;
		uint64_t stroff;
		memcpy(&name, h, 4);
		memcpy(&strndx, img + 62, 2);
		memcpy(&stroff, img + shoff + (uint64_t)strndx * 64 + 24, 8);
		/* Debug-info relocations are skipped by the loader: they get the stride too. */
		if (type == 9 && stroff + name + 12 < size &&
		    !strncmp((const char *)img + stroff + name, ".rel.debug", 10))
			return 0;
		if (type == 2 || type == 3 || type == 9) /* symtab, strtab, rel */
			return 1;
		if (stroff + name + 8 < size &&
		    !strncmp((const char *)img + stroff + name, ".BTF", 4))
			return 1;
		if (stroff + name + 6 < size &&
		    !strncmp((const char *)img + stroff + name, ".maps", 5))
			return 1;
	}
	return 0;
}

static void mutate_file(const char *path, uint64_t budget)
{
	size_t size;
	uint8_t *img = ldr_read_file(path, &size);
	CHECK(img != NULL);
	if (!img)
		return;
	uint8_t *buf = malloc(size + 1);
	uint64_t before = variants;
	try_variant(img, 0);
	try_variant(img, size); /* the original (accepted or not: bad_*.o are rejected) */
	/* Truncations: to an exact-size heap copy, so ASan sees any read past the end. */
	for (size_t n = 1; n < size && variants - before < budget; n++) {
		uint8_t *t = malloc(n);
		memcpy(t, img, n);
		try_variant(t, n);
		free(t);
	}
	/* Single-bit flips. */
	for (size_t off = 0; off < size && variants - before < budget; off++) {
		if (!structural(img, size, off) && off % STRIDE)
			continue;
		for (int bit = 0; bit < 8; bit++) {
			memcpy(buf, img, size);
			buf[off] ^= (uint8_t)(1u << bit);
			try_variant(buf, size);
		}
	}
	/* Whole-word corruptions of header fields: 0, all-ones, and large values. */
	static const uint32_t words[] = {0, 0xffffffffu, 0x7fffffffu, 0x80000000u, 0x10000};
	for (size_t off = 0; off + 4 <= size && variants - before < budget; off += 4) {
		if (!structural(img, size, off))
			continue;
		for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
			memcpy(buf, img, size);
			memcpy(buf + off, &words[w], 4);
			try_variant(buf, size);
		}
	}
	printf("%s: %llu variants\n", path, (unsigned long long)(variants - before));
	free(buf);
	free(img);
}

int main(int argc, char **argv)
{
	uint64_t budget = UINT64_MAX;
	int files = 0;
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--budget") && a + 1 < argc) {
			budget = strtoull(argv[++a], NULL, 0);
			continue;
		}
		DIR *d = opendir(argv[a]);
		CHECK(d != NULL);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			if (n < 3 || strcmp(e->d_name + n - 2, ".o"))
				continue;
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s", argv[a], e->d_name);
			mutate_file(p, budget);
			files++;
		}
		closedir(d);
	}
	CHECK(files > 0);
	printf("%d files, %llu variants, %llu opened, %llu loaded\n", files,
	       (unsigned long long)variants, (unsigned long long)accepted,
	       (unsigned long long)loaded);
	return check_summary("loader_mutate");
}
