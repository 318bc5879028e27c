/* Runs a command-line tool the way a user would (through the shell) and captures what it
 * prints, for tests that check the `ncclbpf` CLI against a live process. */
#ifndef NCCLBPF_TEST_RUN_CLI_H
#define NCCLBPF_TEST_RUN_CLI_H

#include <stdarg.h>
#include <stdio.h>
#include <sys/wait.h>

/* Runs "TOOL ARGS 2>&1" (ARGS from fmt); stdout and stderr in out (NUL-terminated, cut at
 * len - 1). Returns the exit status, or -1 when it could not run or was killed. */
static inline int run_cli_tool(const char *tool, char *out, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int run_cli_tool(const char *tool, char *out, size_t len, const char *fmt, ...)
{
	char args[2048], cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", tool, args);
	FILE *f = popen(cmd, "r");
	if (!f)
		return -1;
	size_t n = fread(out, 1, len - 1, f);
	out[n] = 0;
	int st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
