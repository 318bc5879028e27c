/* Runs our own conformance cases (tests/conformance/cases/NAME.case) through the real CLI:
 *
 *   conformance_runner NCCLBPF-BINARY ENGINE-FLAG CASE-FILE-OR-DIR...
 *
 * Each case becomes hex bytes on the stdin of `NCCLBPF exec ENGINE-FLAG [MEM]`; the runner checks
 * the protocol exactly: on success stdout is "0x<r0>\n", stderr empty, exit 0; on an expected
 * error a non-zero exit status (1 for a bad program, 2 for bad usage), stdout empty, stderr one
 * line containing the expected text. A crash or a
 * signal is always a failure. With ENGINE-FLAG --jit the run is skipped (visibly) while the
 * binary reports that no JIT is available.
 *
 * Case format (one file per instruction family, several cases per file):
 *   == NAME                       starts a case
 *   i CODE DST SRC OFF IMM [# T]  one instruction; numbers in C syntax, registers may be "r3";
 *                                 when "# T" is given it must equal our disassembly of the insn
 *   lddw DST IMM64 [# T]          64-bit immediate load (two slots)
 *   raw HEX...                    bytes appended verbatim (malformed programs)
 *   mem HEX...                    input memory (lines append), passed as r1/r2
 *   arg ARG                       extra exec argument (e.g. --unchecked)
 *   only ENGINE-FLAG              run the case only for that engine (e.g. bounds checks and
 *                                 instruction limits exist in the interpreter only)
 *   stdin [TEXT]                  literal standard input instead of the program's hex (lines
 *                                 append; a bare "stdin" gives empty input)
 *   r0 VALUE                      expected result
 *   error [TEXT]                  expected failure (TEXT: substring of the one-line message)
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ebpf/disasm.h"
#include "skip.h"

#define MAX_BYTES (1 << 16)

struct tcase {
	char name[128];
	const char *file;
	int line;
	uint8_t prog[MAX_BYTES];
	size_t prog_len;
	char mem[MAX_BYTES];
	int has_mem;
	char stdin_text[1024];
	int has_stdin;
	char extra[4][64];
	int n_extra;
	int expect_error;
	char error_text[256];
	unsigned long long r0;
	int has_r0;
	char only[32];
};

static const char *bin;
static const char *engine;
static char tmpdir[] = "/tmp/ncclbpf_conf_XXXXXX";
static int n_pass, n_fail, n_skip;

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long sz;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)sz + 1);
	if (buf && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[sz] = '\0';
		if (len)
			*len = (size_t)sz;
	}
	return buf;
}

/* Runs bin exec [engine] [extra...] [mem] with stdin_text; captures stdout/stderr. */
static int spawn(const struct tcase *t, const char *stdin_text, char **out, char **err)
{
	char in_p[256], out_p[256], err_p[256];
	char *argv[12];
	int argc = 0, status;
	pid_t pid;
	FILE *f;

	snprintf(in_p, sizeof(in_p), "%s/in", tmpdir);
	snprintf(out_p, sizeof(out_p), "%s/out", tmpdir);
	snprintf(err_p, sizeof(err_p), "%s/err", tmpdir);
	f = fopen(in_p, "w");
	if (!f)
		return -1;
	fputs(stdin_text, f);
	fclose(f);
	argv[argc++] = (char *)bin;
	argv[argc++] = "exec";
	argv[argc++] = (char *)engine;
	for (int k = 0; k < t->n_extra; k++)
		argv[argc++] = (char *)t->extra[k];
	if (t->has_mem)
		argv[argc++] = (char *)t->mem;
	argv[argc] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int i = open(in_p, O_RDONLY), o = open(out_p, O_WRONLY | O_CREAT | O_TRUNC, 0600),
		    e = open(err_p, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (i < 0 || o < 0 || e < 0)
			_exit(127);
		dup2(i, 0);
		dup2(o, 1);
		dup2(e, 2);
		execv(bin, argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	*out = read_file(out_p, NULL);
	*err = read_file(err_p, NULL);
	if (!*out || !*err)
		return -1;
	return status;
}

static char *prog_hex(const struct tcase *t)
{
	char *s = malloc(t->prog_len * 3 + 2);

	s[0] = '\0';
	for (size_t k = 0; k < t->prog_len; k++)
		sprintf(s + 3 * k, "%02x%c", t->prog[k], (k % 8 == 7) ? '\n' : ' ');
	return s;
}

static void dump_prog(const struct tcase *t)
{
	const struct ebpf_insn *in = (const struct ebpf_insn *)t->prog;
	size_t n = t->prog_len / 8;
	char line[160];

	for (size_t pc = 0; pc < n;) {
		int c = ebpf_disasm_insn(in, n, pc, line, sizeof(line));

		fprintf(stderr, "      %4zu: %s\n", pc, line);
		pc += c ? (size_t)c : 1;
	}
}

static void run_case(const struct tcase *t)
{
	char *hex = prog_hex(t), *out = NULL, *err = NULL, want[64];
	int st = spawn(t, t->has_stdin ? t->stdin_text : hex, &out, &err);
	const char *why = NULL;
	size_t nl = 0;

	if (err)
		for (char *p = err; *p; p++)
			nl += *p == '\n';
	if (st < 0)
		why = "could not run the binary";
	else if (WIFSIGNALED(st))
		why = "killed by a signal (crash)";
	else if (t->expect_error) {
		if (WEXITSTATUS(st) != 1 && WEXITSTATUS(st) != 2)
			why = "expected exit status 1 or 2";
		else if (out[0])
			why = "stdout not empty on error";
		else if (nl != 1 || err[strlen(err) - 1] != '\n')
			why = "stderr is not exactly one line";
		else if (t->error_text[0] && !strstr(err, t->error_text))
			why = "error message lacks the expected text";
	} else {
		snprintf(want, sizeof(want), "0x%llx\n", t->r0);
		if (WEXITSTATUS(st) != 0)
			why = "non-zero exit";
		else if (strcmp(out, want))
			why = "wrong r0";
		else if (err[0])
			why = "stderr not empty";
	}
	if (why) {
		n_fail++;
		fprintf(stderr, "FAIL %s:%d %s: %s\n", t->file, t->line, t->name, why);
		if (t->expect_error)
			fprintf(stderr, "  expected error containing '%s'\n", t->error_text);
		else
			fprintf(stderr, "  expected 0x%llx\n", t->r0);
		fprintf(stderr, "  exit %d, stdout '%s', stderr '%s'\n",
			st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1, out ? out : "",
			err ? err : "");
		dump_prog(t);
	} else {
		n_pass++;
	}
	free(hex);
	free(out);
	free(err);
}

/* --- case file parsing --------------------------------------------------------------------- */

static int parse_num(char **p, long long *v)
{
	char *end;

	while (isspace((unsigned char)**p))
		(*p)++;
	if (**p == 'r' || **p == 'w')
		(*p)++;
	errno = 0;
	if (**p == '-')
		*v = strtoll(*p, &end, 0);
	else
		*v = (long long)strtoull(*p, &end, 0);
	if (end == *p || errno)
		return -1;
	*p = end;
	return 0;
}

static void put_insn(struct tcase *t, uint8_t code, long long dst, long long src, long long off,
		     long long imm)
{
	struct ebpf_insn in = {.code = code,
			       .dst_reg = (uint8_t)dst,
			       .src_reg = (uint8_t)src,
			       .off = (int16_t)off,
			       .imm = (int32_t)imm};

	if (t->prog_len + 8 <= MAX_BYTES) {
		memcpy(t->prog + t->prog_len, &in, 8);
		t->prog_len += 8;
	}
}

/* "# text" after an instruction must equal our disassembly of it. */
static int check_comment(const struct tcase *t, size_t at, const char *comment, const char *file,
			 int line)
{
	const struct ebpf_insn *in = (const struct ebpf_insn *)t->prog;
	char txt[160], want[160];
	size_t len;

	if (!comment)
		return 0;
	comment++;
	while (isspace((unsigned char)*comment))
		comment++;
	snprintf(want, sizeof(want), "%s", comment);
	len = strlen(want);
	while (len && isspace((unsigned char)want[len - 1]))
		want[--len] = '\0';
	if (!len)
		return 0;
	ebpf_disasm_insn(in, t->prog_len / 8, at, txt, sizeof(txt));
	if (strcmp(txt, want)) {
		fprintf(stderr, "%s:%d: comment '%s' but the instruction disassembles as '%s'\n",
			file, line, want, txt);
		return -1;
	}
	return 0;
}

static int parse_line(struct tcase *t, char *s, const char *file, int line)
{
	char *comment = strchr(s, '#');
	long long v[5];
	char *p;

	if (!strncmp(s, "i ", 2)) {
		size_t at = t->prog_len / 8;

		if (comment)
			*comment = '\0';
		p = s + 2;
		for (int k = 0; k < 5; k++)
			if (parse_num(&p, &v[k]))
				goto bad;
		put_insn(t, (uint8_t)v[0], v[1], v[2], v[3], v[4]);
		if (comment)
			*comment = '#';
		return check_comment(t, at, comment, file, line);
	}
	if (!strncmp(s, "lddw ", 5)) {
		size_t at = t->prog_len / 8;
		unsigned long long imm;

		if (comment)
			*comment = '\0';
		p = s + 5;
		if (parse_num(&p, &v[0]) || parse_num(&p, &v[1]))
			goto bad;
		imm = (unsigned long long)v[1];
		put_insn(t, 0x18, v[0], 0, 0, (int32_t)(uint32_t)imm);
		put_insn(t, 0, 0, 0, 0, (int32_t)(uint32_t)(imm >> 32));
		if (comment)
			*comment = '#';
		return check_comment(t, at, comment, file, line);
	}
	if (comment)
		*comment = '\0';
	if (!strncmp(s, "raw ", 4)) {
		unsigned b;
		int n;

		for (p = s + 4; sscanf(p, " %2x%n", &b, &n) == 1; p += n)
			if (t->prog_len < MAX_BYTES)
				t->prog[t->prog_len++] = (uint8_t)b;
		return 0;
	}
	if (!strncmp(s, "mem", 3) && (s[3] == '\0' || s[3] == ' ')) {
		size_t len = strlen(t->mem);

		if (s[3])
			snprintf(t->mem + len, sizeof(t->mem) - len, "%s%s", len ? " " : "", s + 4);
		t->has_mem = 1;
		return 0;
	}
	if (!strncmp(s, "stdin", 5) && (s[5] == '\0' || s[5] == ' ')) {
		size_t len = strlen(t->stdin_text);

		if (s[5])
			snprintf(t->stdin_text + len, sizeof(t->stdin_text) - len, "%s\n", s + 6);
		t->has_stdin = 1;
		return 0;
	}
	if (!strncmp(s, "only ", 5)) {
		sscanf(s + 5, "%31s", t->only);
		return 0;
	}
	if (!strncmp(s, "arg ", 4) && t->n_extra < 4) {
		sscanf(s + 4, "%63s", t->extra[t->n_extra++]);
		return 0;
	}
	if (!strncmp(s, "r0 ", 3)) {
		p = s + 3;
		if (parse_num(&p, &v[0]))
			goto bad;
		t->r0 = (unsigned long long)v[0];
		t->has_r0 = 1;
		return 0;
	}
	if (!strncmp(s, "error", 5)) {
		p = s + 5;
		while (isspace((unsigned char)*p))
			p++;
		snprintf(t->error_text, sizeof(t->error_text), "%s", p);
		p = t->error_text + strlen(t->error_text);
		while (p > t->error_text && isspace((unsigned char)p[-1]))
			*--p = '\0';
		t->expect_error = 1;
		return 0;
	}
	for (p = s; isspace((unsigned char)*p); p++)
		;
	if (!*p)
		return 0;
bad:
	fprintf(stderr, "%s:%d: cannot parse '%s'\n", file, line, s);
	return -1;
}

static int finish_case(struct tcase *t)
{
	if (!t->name[0])
		return 0;
	if (t->has_r0 == t->expect_error) {
		fprintf(stderr, "%s:%d: case '%s' needs exactly one of r0/error\n", t->file,
			t->line, t->name);
		return -1;
	}
	if (t->only[0] && strcmp(t->only, engine))
		n_skip++;
	else
		run_case(t);
	return 0;
}

static int run_file(const char *path)
{
	static struct tcase t;
	size_t len;
	char *text = read_file(path, &len), *line, *save;
	int lineno = 0, rc = 0;

	if (!text) {
		fprintf(stderr, "%s: cannot read\n", path);
		return -1;
	}
	memset(&t, 0, sizeof(t));
	for (line = text; line; line = save) {
		save = strchr(line, '\n');
		if (save)
			*save++ = '\0';
		lineno++;
		if (!strncmp(line, "==", 2)) {
			if (finish_case(&t))
				rc = -1;
			memset(&t, 0, sizeof(t));
			snprintf(t.name, sizeof(t.name), "%s", line + 2 + (line[2] == ' '));
			t.file = path;
			t.line = lineno;
			continue;
		}
		if (line[0] == '#')
			continue;
		if (!t.name[0]) {
			for (char *p = line; *p; p++)
				if (!isspace((unsigned char)*p)) {
					fprintf(stderr, "%s:%d: text before the first '== case'\n",
						path, lineno);
					rc = -1;
					break;
				}
			continue;
		}
		if (parse_line(&t, line, path, lineno))
			rc = -1;
	}
	if (finish_case(&t))
		rc = -1;
	free(text);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
	struct stat st;
	char *names[512];
	int n = 0, rc = 0;
	DIR *d;
	struct dirent *e;

	if (stat(path, &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)) && n < 512) {
		size_t l = strlen(e->d_name);

		if (l > 5 && !strcmp(e->d_name + l - 5, ".case")) {
			names[n] = malloc(strlen(path) + l + 2);
			sprintf(names[n++], "%s/%s", path, e->d_name);
		}
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
	for (int k = 0; k < n; k++) {
		if (run_file(names[k]))
			rc = -1;
		free(names[k]);
	}
	return rc;
}

/* --jit while the binary has no JIT: skip visibly (exit 77, the "jit" oracle of
 * tests/common/skip.h) instead of failing every case. */
static int engine_available(void)
{
	static struct tcase probe;
	char *out = NULL, *err = NULL;
	int st, ok;

	memset(&probe, 0, sizeof(probe));
	st = spawn(&probe, "b7 00 00 00 07 00 00 00 95 00 00 00 00 00 00 00\n", &out, &err);
	ok = st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && out && !strcmp(out, "0x7\n");
	/* Only the binary's own "not available" skips; any other failure runs (and fails) all. */
	if (!ok && err && strstr(err, "not available"))
		printf("'%s exec %s': %s", bin, engine, err);
	else
		ok = 1;
	free(out);
	free(err);
	return ok;
}

int main(int argc, char **argv)
{
	int rc = 0;
	char cmd[64];

	if (argc < 4) {
		fprintf(stderr, "usage: %s NCCLBPF-BINARY --interp|--jit CASES...\n", argv[0]);
		return 2;
	}
	bin = argv[1];
	engine = argv[2];
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (!strcmp(engine, "--jit") && !engine_available()) {
		rc = test_skip("jit", "'%s exec --jit' has no JIT", bin);
	} else {
		for (int k = 3; k < argc; k++)
			if (run_path(argv[k]))
				rc = 1;
		printf("conformance %s: %d passed, %d failed, %d not for this engine\n", engine,
		       n_pass, n_fail, n_skip);
		if (n_fail || !n_pass)
			rc = 1;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		rc = 1;
	return rc;
}
