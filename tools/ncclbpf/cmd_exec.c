/* `ncclbpf exec`: the conformance entry point (issue #2, part 5).
 *
 *   ncclbpf exec [--interp|--jit] [--elf [--prog NAME]] [--unchecked|--strict]
 *                [--insn-limit N] [--timeout S] [MEM-HEX] < PROGRAM
 *
 * The program arrives on stdin as whitespace-separated hex bytes (raw little-endian 8-byte
 * instructions), or with --elf as a BPF ELF object (binary, or hex bytes). MEM-HEX, when given,
 * is copied into a buffer passed as r1 = pointer, r2 = length (r1 = NULL, r2 = 0 when absent).
 * Success prints r0 as 0x... and exits 0; every error prints one line on stderr and exits 1
 * (2 for bad usage). Options may appear anywhere, because the conformance runner places its
 * plugin options after the memory argument.
 *
 * Engines: --interp is the bounds-checking interpreter (the fast one with --unchecked), --jit
 * the JIT, and the default the JIT where this build has one (the interpreter otherwise). Raw
 * programs are not verified (structure only, like the conformance suite expects); --elf objects
 * go through the loader and therefore the verifier. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hexio.h"
#include "ebpf/jit.h"
#include "ebpf/object.h"
#include "ebpf/exec.h"

#define MAX_PROG_BYTES ((size_t)EBPF_MAX_INSNS * sizeof(struct ebpf_insn) + 8)
#define MAX_MEM_BYTES  ((size_t)64 << 20)
/* Without a verifier in front, a looping program must not hang the caller. */
#define DEFAULT_INSN_LIMIT 100000000
/* The JIT has no instruction limit: a watchdog ends runaway programs instead. */
#define DEFAULT_TIMEOUT_S 10

/* Helpers for raw programs run through exec. The conformance suite's call_unwind_fail calls
 * helper 5, which its reference plugins register as "unwind" returning its argument (without
 * the unwinding: the suite only calls it with a non-zero argument). --elf objects get the
 * engine's default helpers instead (Linux ids, where 5 is ktime_get_ns). */
static uint64_t helper_unwind(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	(void)r2;
	(void)r3;
	(void)r4;
	(void)r5;
	return r1;
}

static const struct ebpf_helper_proto unwind_proto = {
    .id = 5,
    .name = "unwind",
    .fn = helper_unwind,
    .ret = EBPF_RET_INTEGER,
    .args = {EBPF_ARG_ANYTHING},
};

static const struct ebpf_helper_table exec_helpers = {.by_id = {[5] = &unwind_proto}};

struct exec_args {
	int engine; /* enum ebpf_engine */
	int elf;
	int unchecked;
	int strict; /* also trap reads of registers the kernel's model leaves undefined */
	unsigned long long insn_limit;
	unsigned long long timeout_s;
	const char *prog_name; /* --elf: which program (default: the first) */
	const char *mem;
};

/* Returns 0, or 2 with the usage error printed. */
static int parse_args(int argc, char **argv, struct exec_args *a)
{
	int only_pos = 0;

	*a = (struct exec_args){.engine = EBPF_ENGINE_DEFAULT,
				.insn_limit = DEFAULT_INSN_LIMIT,
				.timeout_s = DEFAULT_TIMEOUT_S};
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (!only_pos && s[0] == '-' && s[1] == '-') {
			if (!strcmp(s, "--")) {
				only_pos = 1;
			} else if (!strcmp(s, "--interp")) {
				a->engine = EBPF_ENGINE_INTERP;
			} else if (!strcmp(s, "--jit")) {
				a->engine = EBPF_ENGINE_JIT;
			} else if (!strcmp(s, "--elf")) {
				a->elf = 1;
			} else if (!strcmp(s, "--unchecked")) {
				a->unchecked = 1;
			} else if (!strcmp(s, "--strict")) {
				a->strict = 1;
			} else if (!strcmp(s, "--insn-limit") || !strcmp(s, "--timeout")) {
				unsigned long long *v =
				    s[2] == 'i' ? &a->insn_limit : &a->timeout_s;
				char *end;

				if (i + 1 >= argc)
					return cli_usage_error("%s needs a number", s);
				errno = 0;
				*v = strtoull(argv[++i], &end, 0);
				if (errno || end == argv[i] || *end || argv[i][0] == '-' ||
				    (v == &a->timeout_s && *v > 1000000))
					return cli_usage_error("%s: bad number '%s'", s, argv[i]);
			} else if (!strcmp(s, "--prog")) {
				if (i + 1 >= argc)
					return cli_usage_error("--prog needs a program name");
				a->prog_name = argv[++i];
			} else {
				return cli_usage_error("unknown option '%s'", s);
			}
		} else if (!a->mem) {
			a->mem = s;
		} else {
			return cli_usage_error(
			    "unexpected argument '%s' (memory was already given)", s);
		}
	}
	if (a->prog_name && !a->elf)
		return cli_usage_error("--prog needs --elf");
	if (a->engine == EBPF_ENGINE_JIT && (a->unchecked || a->strict))
		return cli_usage_error("%s is an interpreter mode (the JIT never checks)",
				       a->unchecked ? "--unchecked" : "--strict");
	if (a->unchecked && a->strict)
		return cli_usage_error("--strict and --unchecked contradict each other");
	if (a->strict && a->engine == EBPF_ENGINE_DEFAULT)
		a->engine = EBPF_ENGINE_INTERP;
	return 0;
}

/* Under --jit or --unchecked nothing checks memory accesses; a wild access must still end in
 * one line and a non-zero exit rather than a core dump. */
static void on_fault(int sig)
{
	static const char segv[] = "ncclbpf exec: runtime fault: invalid memory access\n";
	static const char alrm[] = "ncclbpf exec: runtime fault: timed out (see --timeout)\n";
	static const char other[] = "ncclbpf exec: runtime fault: fatal signal\n";
	const char *m = sig == SIGSEGV || sig == SIGBUS ? segv : sig == SIGALRM ? alrm : other;
	size_t len = m == segv	 ? sizeof(segv) - 1
		     : m == alrm ? sizeof(alrm) - 1
				 : sizeof(other) - 1;
	ssize_t r = write(STDERR_FILENO, m, len);

	(void)r;
	_exit(1);
}

static void install_fault_handlers(void)
{
	/* Its own stack, so that even a native stack overflow ends in the one line. */
	static char altstack[64 * 1024] __attribute__((aligned(16)));
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	struct sigaction sa;

	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
}

static int load_program(const struct exec_args *a, struct ebpf_insn **insns, uint32_t *n)
{
	struct hexbuf hb;
	char err[256];
	int rc;

	if (hex_parse_file(stdin, MAX_PROG_BYTES, &hb, err, sizeof(err)))
		return cli_fail("program: %s", err);
	rc = hex_to_insns(&hb, insns, n, err, sizeof(err));
	hexbuf_free(&hb);
	if (rc)
		return cli_fail("%s", err);
	return 0;
}

static int run(const struct exec_args *a, struct ebpf_exec *prog, struct hexbuf *mem)
{
	struct ebpf_fault fault = {0};
	struct ebpf_region region = {
	    .base = (uint64_t)(uintptr_t)mem->data,
	    .size = mem->len,
	    .perms = EBPF_REGION_READ | EBPF_REGION_WRITE,
	};
	struct ebpf_run_opts ro = {
	    .sz = sizeof(ro),
	    .checked = !a->unchecked,
	    .regions = mem->len ? &region : NULL,
	    .n_regions = mem->len ? 1 : 0,
	    .insn_limit = a->insn_limit,
	    .fault = &fault,
	    .flags = a->strict ? EBPF_RUN_F_UNINIT_REGS : 0,
	};
	uint64_t r0 = 0;
	int engine = a->engine, rc;
	char err[256];

	if (engine != EBPF_ENGINE_INTERP) {
		if (!ebpf_jit_available()) {
			if (engine == EBPF_ENGINE_JIT)
				return cli_fail("--jit: no JIT is available for this machine");
			engine = EBPF_ENGINE_INTERP;
		} else if (ebpf_exec__jit(prog, NULL, err, sizeof(err))) {
			/* The default means "fastest available": a program the JIT refuses still
			 * runs, in the interpreter. */
			if (engine == EBPF_ENGINE_JIT)
				return cli_fail("JIT: %s", err);
			engine = EBPF_ENGINE_INTERP;
		} else {
			engine = EBPF_ENGINE_JIT;
			ro.checked = 0; /* interpreter-only run options */
			ro.insn_limit = 0;
			ro.flags = 0;
		}
	}
	if (a->timeout_s)
		alarm((unsigned)a->timeout_s);
	rc = ebpf_exec__run(prog, engine, (uint64_t)(uintptr_t)mem->data, mem->len, &ro, &r0);
	alarm(0);
	if (rc) {
		if (fault.msg[0])
			return cli_fail("runtime fault: %s", fault.msg);
		return cli_fail("run failed: %s", strerror(rc < 0 ? -rc : rc));
	}
	printf("0x%llx\n", (unsigned long long)r0);
	return fflush(stdout) ? cli_fail("cannot write the result") : 0;
}

/* --elf: the object (binary, or hex bytes when it does not start with the ELF magic) goes
 * through the loader: maps are created, every program verified and created; then the chosen
 * program runs like a raw one. */
static int exec_elf(const struct exec_args *a, struct hexbuf *mem)
{
	struct ebpf_object_load_opts lo = {.sz = sizeof(lo)};
	struct ebpf_object *obj;
	struct ebpf_program *p;
	char err[512];
	int rc;

	obj = hex_open_object(stdin, "stdin", err, sizeof(err));
	if (!obj)
		return cli_fail("%s", err);
	p = a->prog_name ? ebpf_object__find_program_by_name(obj, a->prog_name)
			 : ebpf_object__prog(obj, 0);
	if (!p) {
		ebpf_object__close(obj);
		return cli_fail("--prog: no program named '%s' in the object", a->prog_name);
	}
	if (ebpf_object__load(obj, &lo, err, sizeof(err))) {
		ebpf_object__close(obj);
		return cli_fail("%s", err);
	}
	install_fault_handlers();
	rc = run(a, ebpf_program__exec(p), mem);
	ebpf_object__close(obj);
	return rc;
}

static int cmd_exec(int argc, char **argv)
{
	struct exec_args a;
	struct hexbuf mem = {0};
	struct ebpf_insn *insns = NULL;
	struct ebpf_exec *prog;
	uint32_t n = 0;
	char err[256];
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	if (a.mem && hex_parse_str(a.mem, MAX_MEM_BYTES, &mem, err, sizeof(err)))
		return cli_fail("memory argument: %s", err);
	if (a.elf) {
		rc = exec_elf(&a, &mem);
		hexbuf_free(&mem);
		return rc;
	}
	if (load_program(&a, &insns, &n)) {
		hexbuf_free(&mem);
		return 1;
	}
	prog = ebpf_exec__new(insns, n,
			      &(struct ebpf_exec_opts){.sz = sizeof(struct ebpf_exec_opts),
						       .name = "exec",
						       .helpers = &exec_helpers},
			      err, sizeof(err));
	free(insns);
	if (!prog) {
		hexbuf_free(&mem);
		return cli_fail("%s", err[0] ? err : "invalid program");
	}
	install_fault_handlers();
	rc = run(&a, prog, &mem);
	ebpf_exec__free(prog);
	hexbuf_free(&mem);
	return rc;
}

NCCLBPF_COMMAND(
    exec_cmd, .name = "exec",
    .args = "[--interp|--jit] [--elf [--prog NAME]] [--unchecked|--strict] [--insn-limit N] "
	    "[--timeout S] [MEM-HEX] < PROGRAM-HEX",
    .summary = "run a program (hex bytes on stdin) with r1 = MEM, r2 = its length; print r0",
    .help =
	"  --interp        interpreter (bounds-checked unless --unchecked)\n"
	"  --jit           JIT compiler (default where available)\n"
	"  --elf           stdin is a BPF ELF object (binary or hex), loaded and verified\n"
	"  --prog NAME     with --elf: run this program (default: the first)\n"
	"  --unchecked     interpreter without bounds checks\n"
	"  --strict        interpreter: also trap reads of undefined registers (kernel model:\n"
	"                  only r1, r2, r10 at entry; r1-r5 after a call)\n"
	"  --insn-limit N  interpreter: stop after N instructions (0 = unlimited; default " CLI_STR(
	    DEFAULT_INSN_LIMIT) ")\n"
				"  --timeout S     stop a run after S seconds (0 = never; "
				"default " CLI_STR(DEFAULT_TIMEOUT_S) ")\n",
    .run = cmd_exec);
