/* The runner every CTest test goes through (cmake/NcclbpfTargets.cmake, ncclbpf_add_test): runs
 * a command in its own process group and passes only when its exit status is exactly the
 * expected one AND its output (stdout and stderr together) matches every --output pattern and
 * none of the --not-output patterns, and carries no sanitizer report. CTest's own
 * PASS_REGULAR_EXPRESSION ignores the exit status, which let sanitizer failures and wrong
 * "must fail" statuses pass.
 *
 *   ncclbpf_test_runner [--status N] [--output ERE]... [--not-output ERE]... [--timeout S]
 *                       -- COMMAND [ARGS...]
 *
 * Exit status: 0 pass; 77 when the command exited 77 and another status was expected (a
 * missing prerequisite: CTest shows the test as skipped, SKIP_RETURN_CODE 77); 1 fail, with
 * the reason on the last line. Patterns are POSIX extended regular expressions over the whole
 * output ('.' also matches a newline; '^' and '$' are its start and end), which is how CTest
 * reads the patterns the project's tests were written in. On --timeout (a hang guard) the
 * whole process group is killed. The output is copied through as it arrives. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SKIP_STATUS  77
#define MAX_PATTERNS 16
#define MAX_OUTPUT   (64u << 20) /* bytes kept for matching; the rest is still copied through */
#define DRAIN_S	     5 /* after the command exits, how long its children may hold the pipe */

/* Text every sanitizer prints when it reports (ASan, LSan, UBSan, TSan). */
static const char *const sanitizer_text[] = {
    "ERROR: AddressSanitizer",
    "AddressSanitizer:DEADLYSIGNAL",
    "ERROR: LeakSanitizer",
    "runtime error:",
    "ERROR: UndefinedBehaviorSanitizer",
    "WARNING: ThreadSanitizer",
    "ThreadSanitizer: reported",
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int usage(void)
{
	fprintf(stderr, "usage: ncclbpf_test_runner [--status N] [--output ERE]... "
			"[--not-output ERE]... [--timeout S] -- COMMAND [ARGS...]\n");
	return 2;
}

/* Prints the reason as the last line of the output and returns the failing status. */
static int fail(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "\nncclbpf_test_runner: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

struct buf {
	char *p;
	size_t len, cap;
};

static void keep(struct buf *b, const char *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		while (cap < b->len + n + 1)
			cap *= 2;
		if (cap > MAX_OUTPUT + 1)
			cap = MAX_OUTPUT + 1;
		char *p = realloc(b->p, cap);
		if (!p)
			return;
		b->p = p;
		b->cap = cap;
	}
	if (b->len + n + 1 > b->cap)
		n = b->cap - b->len - 1;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void kill_group(pid_t pg)
{
	kill(-pg, SIGTERM);
	usleep(200 * 1000);
	kill(-pg, SIGKILL);
}

int main(int argc, char **argv)
{
	const char *want[MAX_PATTERNS], *reject[MAX_PATTERNS];
	int n_want = 0, n_reject = 0, k;
	long status = 0;
	double timeout = 0;

	for (k = 1; k < argc && strcmp(argv[k], "--"); k++) {
		if (k + 1 >= argc)
			return usage();
		if (!strcmp(argv[k], "--status"))
			status = strtol(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--output") && n_want < MAX_PATTERNS)
			want[n_want++] = argv[++k];
		else if (!strcmp(argv[k], "--not-output") && n_reject < MAX_PATTERNS)
			reject[n_reject++] = argv[++k];
		else if (!strcmp(argv[k], "--timeout"))
			timeout = strtod(argv[++k], NULL);
		else
			return usage();
	}
	if (k + 1 >= argc)
		return usage();
	char **cmd = argv + k + 1;

	/* Compile first: a bad pattern is the test's fault, not the command's. */
	regex_t re_want[MAX_PATTERNS], re_reject[MAX_PATTERNS];
	for (int i = 0; i < n_want; i++)
		if (regcomp(&re_want[i], want[i], REG_EXTENDED | REG_NOSUB))
			return fail("bad --output pattern '%s'", want[i]);
	for (int i = 0; i < n_reject; i++)
		if (regcomp(&re_reject[i], reject[i], REG_EXTENDED | REG_NOSUB))
			return fail("bad --not-output pattern '%s'", reject[i]);

	int fds[2];
	if (pipe(fds))
		return fail("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return fail("fork: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execvp(cmd[0], cmd);
		fprintf(stderr, "ncclbpf_test_runner: cannot run %s: %s\n", cmd[0],
			strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid); /* also here: no race with the child's own call */
	close(fds[1]);

	struct buf out = {0};
	double start = now_s(), drain_until = 0;
	int wstatus = 0, exited = 0, timed_out = 0;
	for (;;) {
		struct pollfd pfd = {fds[0], POLLIN, 0};
		int r = poll(&pfd, 1, 100);
		if (r > 0) {
			char chunk[65536];
			ssize_t n = read(fds[0], chunk, sizeof(chunk));
			if (n > 0) {
				fwrite(chunk, 1, (size_t)n, stdout);
				keep(&out, chunk, (size_t)n);
				continue;
			}
			if (n == 0)
				break; /* every writer is gone */
		}
		if (!exited && waitpid(pid, &wstatus, WNOHANG) == pid) {
			exited = 1;
			drain_until = now_s() + DRAIN_S;
		}
		if (exited && now_s() > drain_until) {
			kill_group(pid); /* children of the command still hold the pipe */
			break;
		}
		if (!exited && timeout > 0 && now_s() - start > timeout) {
			timed_out = 1;
			kill_group(pid);
			waitpid(pid, &wstatus, 0);
			break;
		}
	}
	fflush(stdout);
	if (!exited && !timed_out)
		waitpid(pid, &wstatus, 0);
	if (timed_out)
		return fail("timed out after %g s (hang guard): the process group was killed",
			    timeout);

	const char *text = out.p ? out.p : "";
	for (size_t i = 0; i < sizeof(sanitizer_text) / sizeof(sanitizer_text[0]); i++)
		if (strstr(text, sanitizer_text[i]))
			return fail("the output has a sanitizer report ('%s')", sanitizer_text[i]);
	if (WIFSIGNALED(wstatus))
		return fail("killed by signal %d (%s)", WTERMSIG(wstatus),
			    strsignal(WTERMSIG(wstatus)));
	long rc = WEXITSTATUS(wstatus);
	if (rc == SKIP_STATUS && status != SKIP_STATUS) {
		fprintf(stderr, "\nncclbpf_test_runner: SKIPPED (exit status %d)\n", SKIP_STATUS);
		return SKIP_STATUS;
	}
	if (rc != status)
		return fail("exit status %ld, expected %ld", rc, status);
	for (int i = 0; i < n_want; i++)
		if (regexec(&re_want[i], text, 0, NULL, 0))
			return fail("the output does not match '%s'", want[i]);
	for (int i = 0; i < n_reject; i++)
		if (!regexec(&re_reject[i], text, 0, NULL, 0))
			return fail("the output matches '%s'", reject[i]);
	return 0;
}
