/* Sub-commands of the ncclbpf tool register themselves with NCCLBPF_COMMAND in their own file
 * (cmd_<name>.c); main.c finds them through the linker section, so adding a command never
 * touches a shared file. Each registration carries the command's whole help (synopsis, summary,
 * options), so `ncclbpf help`, `ncclbpf help CMD` and `ncclbpf CMD --help` all print it from
 * that one place.
 *
 * Conventions every command follows (bpftool/veristat habits, cli.c implements them):
 *   - `CMD --help` / `CMD -h` (anywhere before a `--`) prints the help on stdout and exits 0
 *     before the command runs, so asking for help never has a side effect (main.c);
 *   - exit status 0 success, 1 failure (a file that does not load, a program rejected, a process
 *     that does not answer), 2 usage error (unknown option, missing operand, bad number);
 *   - every error is one line on stderr, "ncclbpf CMD: ...", naming the file or process
 *     concerned (a usage error ends with the synopsis); data goes to stdout;
 *   - commands that print data take --json (one JSON document on stdout; cli_json.h;
 *     docs/cli-json.md has the schemas). */
#ifndef NCCLBPF_CLI_H
#define NCCLBPF_CLI_H

#include <stdio.h>

/* Help options are recognised only up to the first operand (`ncclbpf run CMD --help` passes
 * --help on to CMD); the command handles them itself with cli_is_help(). */
#define CLI_F_HELP_BEFORE_OPERANDS 0x1u

struct ncclbpf_cmd {
	const char *name;
	const char *args;    /* synopsis after the name, e.g. "[--json] FILE.o..." */
	const char *summary; /* one line */
	const char *help;    /* option lines and notes, printed after synopsis and summary */
	unsigned flags;	     /* CLI_F_* */
	int (*run)(int argc, char **argv); /* argv[0] is the command name; returns exit status */
};

#define NCCLBPF_COMMAND(ident, ...)                                                                \
	static const struct ncclbpf_cmd ident = {__VA_ARGS__};                                     \
	static const struct ncclbpf_cmd *ident##_ptr                                               \
	    __attribute__((used, section("ncclbpf_cmds"), aligned(sizeof(void *)))) = &ident

/* A numeric macro as text, so a help text shows the default the code uses. */
#define CLI_STR_(x) #x
#define CLI_STR(x)  CLI_STR_(x)

/* Exit statuses. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* The command running now (set by main.c before it runs a command). */
extern const struct ncclbpf_cmd *cli_cmd;

/* Finds a registered command by name, or NULL. */
const struct ncclbpf_cmd *cli_find(const char *name);
/* "-h" or "--help". */
int cli_is_help(const char *arg);
/* Prints the help of c (synopsis, summary, options) to f. */
void cli_print_help(const struct ncclbpf_cmd *c, FILE *f);
/* The running command's help on stdout; returns CLI_OK (for `return cli_help();`). */
int cli_help(void);

/* One line on stderr, "ncclbpf CMD: <message>; usage: <synopsis>"; returns CLI_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "ncclbpf CMD: <message>" on stderr; returns CLI_FAIL. Name the file or process concerned. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "ncclbpf CMD: <message>" on stderr (a warning or a note; no exit status). */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An option with a value ("--dir D"): when argv[*i] is name, stores the next argument in *val,
 * advances *i and returns 1; returns -1 (usage error printed) when the value is missing, 0 when
 * argv[*i] is another argument. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);
/* The same for the inspection directory, --dir D or --dir=D (insp_parse_dir). */
int cli_dir_opt(int argc, char **argv, int *i, const char **dir);

/* Strict numbers for option values: the whole text, in [lo, hi]. 0, or -1 with the usage error
 * printed ("--calls needs a number in 1..100: 'abc'"). */
int cli_parse_u64(const char *opt, const char *text, unsigned long long lo, unsigned long long hi,
		  unsigned long long *out);
int cli_parse_double(const char *opt, const char *text, double lo, double hi, double *out);

#endif
