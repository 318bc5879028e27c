/* Writes table rows into a copy of the compiled tuned_table template (tune.h): the program code
 * stays as clang built it, only the .data section's bytes change, so no compiler is needed
 * where the sweep runs. Every offset read from the template is bounds-checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebpf/file.h"
#include "install_file.h"
#include "ebpf/elf.h"
#include "tune.h"

#define MAX_TEMPLATE (16u << 20)

static void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}
static void wr64(uint8_t *p, uint64_t v)
{
	wr32(p, (uint32_t)v);
	wr32(p + 4, (uint32_t)(v >> 32));
}

static uint8_t *slurp(const char *path, size_t *size, char *err, size_t err_len)
{
	FILE *f = ebpf_fopen_regular(path, err, err_len);
	if (!f) {
		return NULL;
	}
	uint8_t *buf = malloc(MAX_TEMPLATE + 1);
	size_t n = buf ? fread(buf, 1, MAX_TEMPLATE + 1, f) : 0;
	int bad = !buf || ferror(f);
	fclose(f);
	if (bad || n > MAX_TEMPLATE) {
		snprintf(err, err_len, "%s: %s", path,
			 !buf  ? "out of memory"
			 : bad ? "read error"
			       : "larger than 16 MiB");
		free(buf);
		return NULL;
	}
	*size = n;
	return buf;
}

int tune_write_object(const char *template_path, const char *out_path, const struct tune_row *rows,
		      size_t n, char *err, size_t err_len)
{
	char why[256];
	size_t size;
	uint8_t *b = slurp(template_path, &size, err, err_len);
	if (!b)
		return -1;
	uint64_t off, len;
	uint32_t type;
	int rc = ebpf_elf_find_section(b, size, ".data", &off, &len, &type, why, sizeof why);
	if (!rc && type != EBPF_ELF_SHT_PROGBITS) {
		snprintf(why, sizeof why, "section .data has no file contents");
		rc = -ENOEXEC;
	}
	if (rc) {
		snprintf(err, err_len, "template %s: %s", template_path, why);
		goto fail;
	}
	uint8_t *t = b + off;
	if (len < TUNED_TABLE_HDR_SIZE || ebpf_le64(t) != TUNED_TABLE_MAGIC ||
	    ebpf_le32(t + 12) != TUNED_ROW_SIZE || (len - TUNED_TABLE_HDR_SIZE) % TUNED_ROW_SIZE) {
		snprintf(err, err_len,
			 "template %s: .data is not a tuned table (build policies/tuned_table.c)",
			 template_path);
		goto fail;
	}
	uint64_t cap = (len - TUNED_TABLE_HDR_SIZE) / TUNED_ROW_SIZE;
	if (n > cap) {
		snprintf(err, err_len,
			 "%zu rows do not fit the template's %llu (raise TUNED_TABLE_ROWS in "
			 "policies/tuned_table.c, or sweep fewer sizes/collectives)",
			 n, (unsigned long long)cap);
		goto fail;
	}
	memset(t + TUNED_TABLE_HDR_SIZE, 0, len - TUNED_TABLE_HDR_SIZE);
	wr32(t + 8, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		uint8_t *r = t + TUNED_TABLE_HDR_SIZE + i * TUNED_ROW_SIZE;
		wr64(r, rows[i].max_bytes);
		wr32(r + 8, rows[i].coll);
		wr32(r + 12, rows[i].n_ranks);
		wr32(r + 16, (uint32_t)rows[i].algo);
		wr32(r + 20, (uint32_t)rows[i].proto);
		wr32(r + 24, (uint32_t)rows[i].channels);
	}
	/* Written next to the destination and renamed: a running job that reloads out_path
	 * never sees half a file. */
	if (install_bytes(b, size, out_path, err, err_len))
		goto fail;
	free(b);
	return 0;
fail:
	free(b);
	return -1;
}
