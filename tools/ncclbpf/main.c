/* ncclbpf COMMAND [ARGS...]: finds the command in the registrations (cli.h) and runs it. Help
 * is answered here, before any command code runs: `ncclbpf`, `ncclbpf help [CMD]`,
 * `ncclbpf --help`, `ncclbpf CMD --help|-h`, and `ncclbpf --version`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ebpf/version.h"

extern const struct ncclbpf_cmd *__start_ncclbpf_cmds[];
extern const struct ncclbpf_cmd *__stop_ncclbpf_cmds[];

static void list(FILE *f)
{
	fprintf(f, "usage: ncclbpf COMMAND [ARGS...]\n"
		   "       ncclbpf help [COMMAND] | COMMAND --help | --version\n\n"
		   "commands:\n");
	for (const struct ncclbpf_cmd **c = __start_ncclbpf_cmds; c < __stop_ncclbpf_cmds; c++)
		if (*c)
			fprintf(f, "  %-10s %s\n", (*c)->name, (*c)->summary);
	fprintf(f, "\nexit status: 0 success, 1 failure, 2 usage error\n");
}

/* Whether the command's arguments ask for help: -h/--help before a "--" (or, for commands that
 * run another program, before their first operand). */
static int wants_help(const struct ncclbpf_cmd *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (cli_is_help(argv[i]))
			return 1;
		if ((c->flags & CLI_F_HELP_BEFORE_OPERANDS) && argv[i][0] != '-')
			return 0;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		list(stderr);
		return CLI_USAGE;
	}
	const char *a = argv[1];
	if (cli_is_help(a)) {
		list(stdout);
		return CLI_OK;
	}
	if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
		printf("ncclbpf %s\n", ebpf_engine_version());
		return CLI_OK;
	}
	if (!strcmp(a, "help")) {
		if (argc == 2) {
			list(stdout);
			return CLI_OK;
		}
		const struct ncclbpf_cmd *c = cli_find(argv[2]);
		if (argc > 3 || !c) {
			fprintf(stderr, "ncclbpf help: %s '%s' (ncclbpf help lists them)\n",
				argc > 3 ? "one command at a time, not" : "no command",
				argv[argc - 1]);
			return CLI_USAGE;
		}
		cli_print_help(c, stdout);
		return CLI_OK;
	}
	const struct ncclbpf_cmd *c = cli_find(a);
	if (!c) {
		fprintf(stderr, "ncclbpf: unknown command '%s' (ncclbpf help lists them)\n", a);
		return CLI_USAGE;
	}
	cli_cmd = c;
	if (wants_help(c, argc - 1, argv + 1))
		return cli_help();
	return c->run(argc - 1, argv + 1);
}
