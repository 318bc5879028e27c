/* The CLI conventions of cli.h: help from the registrations, usage errors, failures. */
#include "cli.h"
#include "inspect_client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

extern const struct ncclbpf_cmd *__start_ncclbpf_cmds[];
extern const struct ncclbpf_cmd *__stop_ncclbpf_cmds[];

/* Keeps the section present even before any command registers itself. */
static const struct ncclbpf_cmd *const anchor
    __attribute__((used, section("ncclbpf_cmds"), aligned(sizeof(void *)))) = NULL;

const struct ncclbpf_cmd *cli_cmd;

const struct ncclbpf_cmd *cli_find(const char *name)
{
	(void)anchor;
	for (const struct ncclbpf_cmd **c = __start_ncclbpf_cmds; c < __stop_ncclbpf_cmds; c++)
		if (*c && !strcmp((*c)->name, name))
			return *c;
	return NULL;
}

int cli_is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

static const char *prefix(void)
{
	return cli_cmd ? cli_cmd->name : NULL;
}

void cli_print_help(const struct ncclbpf_cmd *c, FILE *f)
{
	fprintf(f, "usage: ncclbpf %s%s%s\n\n%s\n", c->name, c->args[0] ? " " : "", c->args,
		c->summary);
	if (c->help && c->help[0])
		fprintf(f, "\n%s", c->help);
}

int cli_help(void)
{
	cli_print_help(cli_cmd, stdout);
	return CLI_OK;
}

/* One line on stderr: "ncclbpf CMD: <message><tail>". */
static void vsay(const char *tail, const char *fmt, va_list ap)
{
	const char *p = prefix();
	fprintf(stderr, p ? "ncclbpf %s: " : "ncclbpf: ", p);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "%s\n", tail);
}

int cli_usage_error(const char *fmt, ...)
{
	char tail[600] = "";
	if (cli_cmd)
		snprintf(tail, sizeof(tail), "; usage: ncclbpf %s%s%s (ncclbpf help %s)",
			 cli_cmd->name, cli_cmd->args[0] ? " " : "", cli_cmd->args, cli_cmd->name);
	va_list ap;
	va_start(ap, fmt);
	vsay(tail, fmt, ap);
	va_end(ap);
	return CLI_USAGE;
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
	return CLI_FAIL;
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	if (strcmp(argv[*i], name))
		return 0;
	if (*i + 1 >= argc) {
		cli_usage_error("%s needs a value", name);
		return -1;
	}
	*val = argv[++*i];
	return 1;
}

int cli_dir_opt(int argc, char **argv, int *i, const char **dir)
{
	int k = insp_parse_dir(argc, argv, i, dir);
	if (k < 0)
		cli_usage_error("--dir needs a value");
	return k;
}

int cli_parse_u64(const char *opt, const char *text, unsigned long long lo, unsigned long long hi,
		  unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long v = text ? strtoull(text, &end, 0) : 0;
	if (!text || !*text || text[0] == '-' || errno || *end || v < lo || v > hi) {
		cli_usage_error("%s needs a number in %llu..%llu, not '%s'", opt, lo, hi,
				text ? text : "");
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_double(const char *opt, const char *text, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = text ? strtod(text, &end) : 0;
	if (!text || !*text || errno || *end || !(v >= lo && v <= hi)) {
		cli_usage_error("%s needs a number in %g..%g, not '%s'", opt, lo, hi,
				text ? text : "");
		return -1;
	}
	*out = v;
	return 0;
}
