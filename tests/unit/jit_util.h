/* Shared by the test_jit_*.c unit tests: build a program, JIT it, run it, and (where the
 * interpreter is there to ask) check that both engines agree. Expected values come from the
 * tests themselves; the interpreter comparison is an extra. */
#ifndef NCCLBPF_TEST_JIT_UTIL_H
#define NCCLBPF_TEST_JIT_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "insn_macros.h"
#include "ebpf/jit.h"
#include "ebpf/exec.h"

#define JIT_UTIL_NO_COMPARE 0x80000000u /* jit_flags bit: run the JIT only (memory tests) */

static int jit_util_interp_missing;
static uint32_t jit_util_flags;
/* EBPF_JIT_F_* added to every compile */ /* interpreter answered -ENOSYS: skip comparisons */

struct jit_run {
	int compile_ret; /* ebpf_exec__jit */
	int run_ret;	 /* ebpf_exec__run with the JIT */
	uint64_t r0;
	struct ebpf_jit_stats stats;
	char err[160];
};

/* Builds, compiles and runs; returns the program (caller frees) or NULL when creation failed
 * (reported as a failed check). */
static struct ebpf_exec *jit_build(const struct ebpf_insn *insns, uint32_t n,
				   const struct ebpf_exec_opts *popts, uint32_t jit_flags,
				   struct jit_run *out)
{
	struct ebpf_jit_opts jo = {.sz = sizeof(jo),
				   .flags = (jit_flags | jit_util_flags) & ~JIT_UTIL_NO_COMPARE};
	struct ebpf_exec *p = ebpf_exec__new(insns, n, popts, out->err, sizeof(out->err));

	if (!p) {
		fprintf(stderr, "ebpf_exec__new: %s\n", out->err);
		CHECK(p != NULL);
		out->compile_ret = -EINVAL;
		return NULL;
	}
	out->compile_ret = ebpf_exec__jit_opts(p, &jo, &out->stats, out->err, sizeof(out->err));
	if (out->compile_ret)
		fprintf(stderr, "ebpf_exec__jit: %s\n", out->err);
	return p;
}

/* Runs prog with the JIT and the interpreter on the same (r1, r2); memory the program touches
 * must be reset by the caller between engines if it matters. Returns the JIT's r0. */
static uint64_t jit_run_prog(struct ebpf_exec *p, uint64_t r1, uint64_t r2, int *ret)
{
	uint64_t r0 = 0xdeadbeefdeadbeefull;
	struct ebpf_fault fault;
	struct ebpf_run_opts ro = {.sz = sizeof(ro), .fault = &fault};

	*ret = ebpf_exec__run(p, EBPF_ENGINE_JIT, r1, r2, &ro, &r0);
	return r0;
}

/* One-shot: build, compile, run, compare with the interpreter when it exists. */
static uint64_t jit_eval_opts(const struct ebpf_insn *insns, uint32_t n,
			      const struct ebpf_exec_opts *popts, uint32_t jit_flags, uint64_t r1,
			      uint64_t r2)
{
	struct jit_run jr = {0};
	struct ebpf_exec *p = jit_build(insns, n, popts, jit_flags, &jr);
	uint64_t r0 = 0, ri = 0;
	int ret;

	if (!p)
		return 0xbad;
	CHECK(jr.compile_ret == 0);
	if (jr.compile_ret) {
		ebpf_exec__free(p);
		return 0xbad;
	}
	r0 = jit_run_prog(p, r1, r2, &ret);
	CHECK(ret == 0);
	if (!jit_util_interp_missing && !(jit_flags & JIT_UTIL_NO_COMPARE)) {
		int iret = ebpf_interp__run(p, r1, r2, NULL, &ri);

		if (iret == -ENOSYS)
			jit_util_interp_missing = 1;
		else if (iret == 0 && ri != r0) {
			fprintf(stderr, "JIT/interpreter disagree: jit 0x%llx interp 0x%llx\n",
				(unsigned long long)r0, (unsigned long long)ri);
			CHECK(ri == r0);
		}
	}
	ebpf_exec__free(p);
	return r0;
}

static uint64_t jit_eval(const struct ebpf_insn *insns, uint32_t n, uint64_t r1, uint64_t r2)
{
	return jit_eval_opts(insns, n, NULL, 0, r1, r2);
}

#endif
