/* `ncclbpf disasm`: raw instructions as hex bytes on stdin (the format of `ncclbpf exec`), one
 * line per instruction in llvm-objdump syntax on stdout. With --elf, a BPF object (binary or hex)
 * instead: every program as the loader assembled it (subprograms appended, map references as
 * "map[N]"), helper calls by name and, with BTF line info, the C source lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hexio.h"
#include "ebpf/disasm.h"
#include "ebpf/helpers.h"
#include "ebpf/object.h"

#define MAX_INPUT ((size_t)EBPF_MAX_INSNS * sizeof(struct ebpf_insn) + 8)

static void print_bytes(const struct ebpf_insn *in, int cnt)
{
	const unsigned char *b = (const unsigned char *)in;

	for (int k = 0; k < 8 * cnt; k++)
		printf("%02x ", b[k]);
	printf("%*s", 8 * 3 * (2 - cnt), "");
}

struct listing {
	int text_only;
	int bytes;
	const struct ebpf_disasm_opts *opts;
};

/* Prints insns[0..n); returns the number of invalid instructions. */
static int list(const struct listing *l, const struct ebpf_insn *insns, size_t n,
		const struct ebpf_program *src)
{
	const char *last_src = NULL;
	char line[160];
	int bad = 0;

	for (size_t pc = 0; pc < n;) {
		int cnt = ebpf_disasm_insn_opts(insns, n, pc, line, sizeof(line), l->opts);
		const struct ebpf_line_info *li =
		    src ? ebpf_program__line_of(src, (uint32_t)pc) : NULL;

		if (li && li->src && li->src != last_src && !l->text_only) {
			printf("; %s", li->src);
			if (li->file)
				printf("  [%s:%u]", li->file, li->line);
			printf("\n");
			last_src = li->src;
		}
		if (!l->text_only)
			printf("%5zu: ", pc);
		if (l->bytes)
			print_bytes(&insns[pc], cnt ? cnt : 1);
		printf("%s\n", line);
		if (!cnt)
			bad++;
		pc += cnt ? (size_t)cnt : 1;
	}
	return bad;
}

static int disasm_elf(const struct listing *l, const char *prog_name)
{
	const struct ebpf_program *p = NULL;
	struct ebpf_object *obj;
	char err[512];
	int bad = 0, shown = 0;

	obj = hex_open_object(stdin, "stdin", err, sizeof(err));
	if (!obj) {
		fprintf(stderr, "ncclbpf disasm: %s\n", err);
		return 1;
	}
	if (!l->text_only)
		for (uint32_t k = 0; k < ebpf_object__map_cnt(obj); k++)
			printf("map[%u] = %s\n", k,
			       ebpf_object_map__name(ebpf_object__map(obj, k)));
	while ((p = ebpf_object__next_program(obj, p))) {
		if (prog_name && strcmp(prog_name, ebpf_program__name(p)))
			continue;
		if (!l->text_only)
			printf("%s%s (section %s, %u insns):\n", shown ? "\n" : "",
			       ebpf_program__name(p), ebpf_program__section(p),
			       ebpf_program__insn_cnt(p));
		bad += list(l, ebpf_program__insns(p), ebpf_program__insn_cnt(p), p);
		shown++;
	}
	ebpf_object__close(obj);
	if (!shown) {
		fprintf(stderr, "ncclbpf disasm: --prog: no program named '%s' in the object\n",
			prog_name);
		return 1;
	}
	if (bad) {
		fprintf(stderr, "ncclbpf disasm: %d invalid instruction%s\n", bad,
			bad > 1 ? "s" : "");
		return 1;
	}
	return 0;
}

static int cmd_disasm(int argc, char **argv)
{
	int text_only = 0, bytes = 0, bad = 0, elf = 0;
	const char *prog_name = NULL;
	struct hexbuf hb;
	struct ebpf_insn *insns;
	uint32_t n;
	char err[256];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--text"))
			text_only = 1;
		else if (!strcmp(argv[i], "--bytes"))
			bytes = 1;
		else if (!strcmp(argv[i], "--elf"))
			elf = 1;
		else if (!strcmp(argv[i], "--prog") && i + 1 < argc)
			prog_name = argv[++i];
		else
			return cli_usage_error("unknown argument '%s'", argv[i]);
	}
	if (prog_name && !elf)
		return cli_usage_error("--prog needs --elf");
	if (elf) {
		struct ebpf_disasm_opts o = {.sz = sizeof(o), .helpers = ebpf_helpers_default()};
		struct listing l = {.text_only = text_only, .bytes = bytes, .opts = &o};

		return disasm_elf(&l, prog_name);
	}
	if (hex_parse_file(stdin, MAX_INPUT, &hb, err, sizeof(err)) ||
	    hex_to_insns(&hb, &insns, &n, err, sizeof(err))) {
		fprintf(stderr, "ncclbpf disasm: %s\n", err);
		hexbuf_free(&hb);
		return 1;
	}
	hexbuf_free(&hb);
	bad = list(&(struct listing){.text_only = text_only, .bytes = bytes}, insns, n, NULL);
	free(insns);
	if (bad) {
		fprintf(stderr, "ncclbpf disasm: %d invalid instruction%s\n", bad,
			bad > 1 ? "s" : "");
		return 1;
	}
	return 0;
}

NCCLBPF_COMMAND(disasm_cmd, .name = "disasm",
		.args = "[--text|--bytes] [--elf [--prog NAME]] < PROGRAM",
		.summary = "disassemble hex instructions or an ELF object (stdin)",
		.help = "  --text       instruction text only (no index), for diffing\n"
			"  --bytes      also print each instruction's bytes\n"
			"  --elf        stdin is a BPF ELF object (binary or hex bytes)\n"
			"  --prog NAME  with --elf: only this program\n",
		.run = cmd_disasm);
