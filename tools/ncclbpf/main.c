#include <stdio.h>
#include <string.h>

#include "cli.h"

extern const struct ncclbpf_cmd *__start_ncclbpf_cmds[];
extern const struct ncclbpf_cmd *__stop_ncclbpf_cmds[];

/* Keeps the section present even before any command registers itself. */
static const struct ncclbpf_cmd *const anchor
    __attribute__((used, section("ncclbpf_cmds"), aligned(sizeof(void *)))) = NULL;

static void usage(FILE *f)
{
	fprintf(f, "usage: ncclbpf COMMAND [ARGS...]\n\ncommands:\n");
	for (const struct ncclbpf_cmd **c = __start_ncclbpf_cmds; c < __stop_ncclbpf_cmds; c++)
		if (*c)
			fprintf(f, "  %-10s %-34s %s\n", (*c)->name, (*c)->args, (*c)->summary);
}

int main(int argc, char **argv)
{
	(void)anchor;
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (const struct ncclbpf_cmd **c = __start_ncclbpf_cmds; c < __stop_ncclbpf_cmds; c++)
		if (*c && !strcmp((*c)->name, argv[1]))
			return (*c)->run(argc - 1, argv + 1);
	fprintf(stderr, "ncclbpf: unknown command '%s' (try ncclbpf --help)\n", argv[1]);
	return 2;
}
