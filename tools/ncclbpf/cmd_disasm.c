/* `ncclbpf disasm`: raw instructions as hex bytes on stdin (the format of `ncclbpf exec`), one
 * line per instruction in llvm-objdump syntax on stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hexio.h"
#include "ncclbpf/disasm.h"

#define MAX_INPUT ((size_t)EBPF_MAX_INSNS * sizeof(struct ebpf_insn) + 8)

static int usage(void)
{
	fprintf(stderr, "usage: ncclbpf disasm [--text|--bytes] < PROGRAM-HEX\n"
			"  --text   instruction text only (no index), for diffing\n"
			"  --bytes  also print each instruction's bytes\n");
	return 2;
}

static void print_bytes(const struct ebpf_insn *in, int cnt)
{
	const unsigned char *b = (const unsigned char *)in;

	for (int k = 0; k < 8 * cnt; k++)
		printf("%02x ", b[k]);
	printf("%*s", 8 * 3 * (2 - cnt), "");
}

static int cmd_disasm(int argc, char **argv)
{
	int text_only = 0, bytes = 0, bad = 0;
	struct hexbuf hb;
	struct ebpf_insn *insns;
	uint32_t n;
	char err[256], line[160];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--text"))
			text_only = 1;
		else if (!strcmp(argv[i], "--bytes"))
			bytes = 1;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return usage() & 0;
		else {
			fprintf(stderr, "ncclbpf disasm: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (hex_parse_file(stdin, MAX_INPUT, &hb, err, sizeof(err)) ||
	    hex_to_insns(&hb, &insns, &n, err, sizeof(err))) {
		fprintf(stderr, "ncclbpf disasm: %s\n", err);
		hexbuf_free(&hb);
		return 1;
	}
	hexbuf_free(&hb);
	for (size_t pc = 0; pc < n;) {
		int cnt = ebpf_disasm_insn(insns, n, pc, line, sizeof(line));

		if (!text_only)
			printf("%5zu: ", pc);
		if (bytes)
			print_bytes(&insns[pc], cnt ? cnt : 1);
		printf("%s\n", line);
		if (!cnt)
			bad++;
		pc += cnt ? (size_t)cnt : 1;
	}
	free(insns);
	if (bad) {
		fprintf(stderr, "ncclbpf disasm: %d invalid instruction%s\n", bad,
			bad > 1 ? "s" : "");
		return 1;
	}
	return 0;
}

NCCLBPF_COMMAND(disasm_cmd, .name = "disasm", .args = "[--text|--bytes] < PROGRAM-HEX",
		.summary = "disassemble raw instructions (hex bytes on stdin)", .run = cmd_disasm);
