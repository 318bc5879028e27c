/* `ncclbpf objdump FILE.o`: what the loader makes of a policy object: its programs (section,
 * name, type, instruction count), its maps (type, sizes, entries, flags, initial data) and each
 * program's assembled code (subprograms appended, map references resolved to indices) with the
 * C source lines from .BTF.ext interleaved. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_json.h"
#include "ebpf/disasm.h"
#include "ebpf/object.h"
#include "ncclbpf/nccl_platform.h"

#define HEX_LIMIT 4096 /* bytes of initial data shown unless --full */

static void flags_str(uint32_t flags, char *buf, size_t len)
{
	snprintf(buf, len, "0x%x%s", flags, flags & EBPF_MAP_F_RDONLY_PROG ? " (rdonly_prog)" : "");
}

static void hexdump(const uint8_t *d, size_t n, size_t limit)
{
	size_t shown = n < limit ? n : limit;
	for (size_t off = 0; off < shown; off += 16) {
		printf("      %04zx:", off);
		for (size_t k = 0; k < 16; k++) {
			if (off + k < shown)
				printf(" %02x", d[off + k]);
			else
				printf("   ");
		}
		printf("  |");
		for (size_t k = 0; k < 16 && off + k < shown; k++) {
			uint8_t c = d[off + k];
			putchar(c >= 0x20 && c < 0x7f ? c : '.');
		}
		printf("|\n");
	}
	if (shown < n)
		printf("      ... %zu more bytes (--full shows them)\n", n - shown);
}

/* The initial data typed by the object's BTF (its variables by name), or NULL: malloc'd. */
static char *typed_initial(const struct ebpf_object_map *m, const uint8_t *init, size_t n)
{
	size_t len = 24 * n + 4096;
	char *buf = malloc(len);
	if (buf && ebpf_object_map__json(m, 1, init, n, buf, len) != 1) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

static void print_maps(const struct ebpf_object *obj, int full)
{
	printf("\nMaps:\n");
	if (!ebpf_object__map_cnt(obj)) {
		printf("  (none)\n");
		return;
	}
	printf("  %-3s %-20s %-12s %-6s %5s %7s %11s  %s\n", "idx", "name", "type", "kind", "key",
	       "value", "max_entries", "flags");
	for (struct ebpf_object_map *m = ebpf_object__next_map(obj, NULL); m;
	     m = ebpf_object__next_map(obj, m)) {
		const struct ebpf_map_def *d = ebpf_object_map__def(m);
		char fl[32];
		flags_str(d->flags, fl, sizeof(fl));
		printf("  %-3u %-20s %-12s %-6s %5u %7u %11u  %s\n", ebpf_object_map__index(m),
		       ebpf_object_map__name(m), ebpf_map_type__name(d->type),
		       ebpf_object_map_kind__name(ebpf_object_map__kind(m)), d->key_size,
		       d->value_size, d->max_entries, fl);
		size_t n;
		const uint8_t *init = ebpf_object_map__initial_data(m, &n);
		if (init && n) {
			printf("    initial data (%zu bytes):\n", n);
			hexdump(init, n, full ? n : HEX_LIMIT);
			char *t = typed_initial(m, init, n);
			if (t)
				printf("    as declared: %s\n", t);
			free(t);
		}
	}
}

/* The comment after instructions that refer to maps or functions ("" for the others). */
static void annotate(const struct ebpf_object *obj, const struct ebpf_program *p, uint32_t pc,
		     char *buf, size_t len)
{
	const struct ebpf_insn *in = ebpf_program__insns(p);
	const struct ebpf_insn *i = &in[pc];
	buf[0] = 0;
	if (ebpf_insn_is_lddw(i) && pc + 1 < ebpf_program__insn_cnt(p)) {
		struct ebpf_object_map *m = ebpf_object__map(obj, (uint32_t)i->imm);
		if (!m)
			return;
		if (i->src_reg == EBPF_PSEUDO_MAP_FD)
			snprintf(buf, len, "map '%s'", ebpf_object_map__name(m));
		else if (i->src_reg == EBPF_PSEUDO_MAP_VALUE)
			snprintf(buf, len, "&'%s'[%d]", ebpf_object_map__name(m), i[1].imm);
	} else if (i->code == (EBPF_JMP | EBPF_CALL) && i->src_reg == EBPF_PSEUDO_CALL) {
		int64_t t = (int64_t)pc + i->imm + 1;
		const char *name = t >= 0 ? ebpf_program__func_at(p, (uint32_t)t) : NULL;
		snprintf(buf, len, "-> %s (insn %lld)", name ? name : "?", (long long)t);
	}
}

/* The source line to show before instruction pc (NULL when it is the one shown last). */
static const struct ebpf_line_info *new_line(const struct ebpf_program *p, uint32_t pc,
					     const struct ebpf_line_info *shown)
{
	const struct ebpf_line_info *li = ebpf_program__line_of(p, pc);
	if (li && li != shown && li->insn == pc && li->src &&
	    (!shown || shown->line != li->line || shown->src != li->src))
		return li;
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path;
}

static const char *trimmed(const char *src)
{
	while (*src == ' ' || *src == '\t')
		src++;
	return src;
}

static void print_disasm(const struct ebpf_object *obj, const struct ebpf_program *p, int source)
{
	const struct ebpf_insn *in = ebpf_program__insns(p);
	uint32_t n = ebpf_program__insn_cnt(p), fi = 0, fstart, flen;
	const struct ebpf_line_info *shown = NULL;
	char line[160], note[200];

	printf("\nDisassembly of program '%s' (section '%s', %u insns):\n", ebpf_program__name(p),
	       ebpf_program__section(p), n);
	for (uint32_t pc = 0; pc < n;) {
		const char *fname = ebpf_program__func(p, fi, &fstart, &flen);
		if (fname && pc == fstart) {
			printf("\n%08x <%s>:\n", pc * 8, fname);
			fi++;
		}
		const struct ebpf_line_info *li = source ? new_line(p, pc, shown) : NULL;
		if (li) {
			const char *file = base_name(li->file);
			printf("; %s", trimmed(li->src));
			if (file)
				printf("  [%s:%u]", file, li->line);
			printf("\n");
			shown = li;
		}
		int cnt = ebpf_disasm_insn(in, n, pc, line, sizeof(line));
		annotate(obj, p, pc, note, sizeof(note));
		printf("%6u: %s%s%s\n", pc, line, note[0] ? "    # " : "", note);
		pc += cnt ? (uint32_t)cnt : 1;
	}
}

/* --json: {"file", "programs": [...], "maps": [...]} (docs/cli-json.md). */
static void json_program(struct json *j, const struct ebpf_object *obj,
			 const struct ebpf_program *p, uint32_t idx, int disasm, int source)
{
	const struct ebpf_insn *in = ebpf_program__insns(p);
	uint32_t n = ebpf_program__insn_cnt(p);
	char line[160], note[200];
	json_obj(j);
	json_ku64(j, "index", idx);
	json_kstr(j, "section", ebpf_program__section(p));
	json_kstr(j, "name", ebpf_program__name(p));
	json_kstr(j, "type", ebpf_program__type(p)->name);
	json_ku64(j, "insns", n);
	json_ku64(j, "entry_insns", ebpf_program__entry_insn_cnt(p));
	json_key(j, "subprograms");
	json_arr(j);
	for (uint32_t k = 1; k < ebpf_program__func_cnt(p); k++)
		json_str(j, ebpf_program__func(p, k, NULL, NULL));
	json_end(j);
	if (disasm) {
		json_key(j, "insns_text");
		json_arr(j);
		for (uint32_t pc = 0; pc < n;) {
			int cnt = ebpf_disasm_insn(in, n, pc, line, sizeof(line));
			const struct ebpf_line_info *li =
			    source ? ebpf_program__line_of(p, pc) : NULL;
			annotate(obj, p, pc, note, sizeof(note));
			json_obj(j);
			json_ku64(j, "pc", pc);
			json_kstr(j, "text", line);
			if (note[0])
				json_kstr(j, "note", note);
			if (li && li->src) {
				json_key(j, "source");
				json_obj(j);
				json_kstr(j, "file", base_name(li->file));
				json_ku64(j, "line", li->line);
				json_kstr(j, "text", trimmed(li->src));
				json_end(j);
			}
			json_end(j);
			pc += cnt ? (uint32_t)cnt : 1;
		}
		json_end(j);
	}
	json_end(j);
}

static void json_maps(struct json *j, const struct ebpf_object *obj, int full)
{
	json_arr(j);
	for (struct ebpf_object_map *m = ebpf_object__next_map(obj, NULL); m;
	     m = ebpf_object__next_map(obj, m)) {
		const struct ebpf_map_def *d = ebpf_object_map__def(m);
		size_t n;
		const uint8_t *init = ebpf_object_map__initial_data(m, &n);
		json_obj(j);
		json_ku64(j, "index", ebpf_object_map__index(m));
		json_kstr(j, "name", ebpf_object_map__name(m));
		json_kstr(j, "type", ebpf_map_type__name(d->type));
		json_kstr(j, "kind", ebpf_object_map_kind__name(ebpf_object_map__kind(m)));
		json_ku64(j, "key_size", d->key_size);
		json_ku64(j, "value_size", d->value_size);
		json_ku64(j, "max_entries", d->max_entries);
		json_ku64(j, "flags", d->flags);
		json_key(j, "initial_data");
		if (init && n)
			json_hex(j, init, full || n <= HEX_LIMIT ? n : HEX_LIMIT);
		else
			json_null(j);
		char *t = init && n ? typed_initial(m, init, n) : NULL;
		json_key(j, "initial_value");
		if (t)
			json_raw(j, t);
		else
			json_null(j);
		free(t);
		json_end(j);
	}
	json_end(j);
}

static void print_json(const struct ebpf_object *obj, const char *file, int disasm, int source,
		       int full)
{
	struct json j;
	json_init(&j, stdout);
	json_obj(&j);
	json_kstr(&j, "file", file);
	json_key(&j, "programs");
	json_arr(&j);
	for (uint32_t i = 0; i < ebpf_object__prog_cnt(obj); i++)
		json_program(&j, obj, ebpf_object__prog(obj, i), i, disasm, source);
	json_end(&j);
	json_key(&j, "maps");
	json_maps(&j, obj, full);
	json_end(&j);
}

static int cmd_objdump(int argc, char **argv)
{
	int disasm = 1, source = 1, full = 0, json = 0;
	const char *file = NULL;
	char err[512];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-disasm"))
			disasm = 0;
		else if (!strcmp(argv[i], "--no-source"))
			source = 0;
		else if (!strcmp(argv[i], "--full"))
			full = 1;
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] == '-')
			return cli_usage_error("unknown option '%s'", argv[i]);
		else if (file)
			return cli_usage_error("one object at a time ('%s' and '%s')", file,
					       argv[i]);
		else
			file = argv[i];
	}
	if (!file)
		return cli_usage_error("no object file given");
	struct ebpf_object *obj = ncclbpf_object_open_file(file, NULL, err, sizeof(err));
	if (!obj)
		return cli_fail("%s", err);
	if (json) {
		print_json(obj, file, disasm, source, full);
		ebpf_object__close(obj);
		return 0;
	}
	printf("%s: %u program%s, %u map%s\n", file, ebpf_object__prog_cnt(obj),
	       ebpf_object__prog_cnt(obj) == 1 ? "" : "s", ebpf_object__map_cnt(obj),
	       ebpf_object__map_cnt(obj) == 1 ? "" : "s");
	printf("\nPrograms:\n  %-3s %-16s %-24s %-12s %6s %6s  %s\n", "idx", "section", "name",
	       "type", "insns", "entry", "subprograms");
	for (uint32_t i = 0; i < ebpf_object__prog_cnt(obj); i++) {
		const struct ebpf_program *p = ebpf_object__prog(obj, i);
		printf("  %-3u %-16s %-24s %-12s %6u %6u  ", i, ebpf_program__section(p),
		       ebpf_program__name(p), ebpf_program__type(p)->name,
		       ebpf_program__insn_cnt(p), ebpf_program__entry_insn_cnt(p));
		if (ebpf_program__func_cnt(p) <= 1)
			printf("-");
		for (uint32_t k = 1; k < ebpf_program__func_cnt(p); k++)
			printf("%s%s", k > 1 ? "," : "", ebpf_program__func(p, k, NULL, NULL));
		printf("\n");
	}
	print_maps(obj, full);
	for (uint32_t i = 0; disasm && i < ebpf_object__prog_cnt(obj); i++)
		print_disasm(obj, ebpf_object__prog(obj, i), source);
	ebpf_object__close(obj);
	return 0;
}

NCCLBPF_COMMAND(objdump_cmd, .name = "objdump",
		.args = "[--no-disasm] [--no-source] [--full] [--json] FILE.o",
		.summary = "list a policy object's programs and maps, disassemble with source",
		.help = "  --no-disasm  programs and maps only\n"
			"  --no-source  no C source lines in the disassembly\n"
			"  --full       all initial data (default: the first " CLI_STR(
			    HEX_LIMIT) " bytes)\n"
				       "  --json       one JSON object (docs/cli-json.md)\n",
		.run = cmd_objdump);
