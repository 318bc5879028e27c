/* Test harness for the interpreter: builds a program and runs it in every interpreter variant
 * (fast, instruction-limited, bounds-checking), checking that they agree. */
#ifndef NCCLBPF_TEST_INTERP_HARNESS_H
#define NCCLBPF_TEST_INTERP_HARNESS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "insn_macros.h"
#include "ebpf/exec.h"

struct harness_env {
	const struct ebpf_helper_table *helpers;
	struct ebpf_map *const *maps;
	uint32_t n_maps;
	const struct ebpf_region *regions; /* for the checked run */
	uint32_t n_regions;
	int fast_only; /* program has side effects that must happen once */
};

static inline struct ebpf_exec *harness_load(const struct ebpf_insn *insns, uint32_t n,
					     const struct harness_env *env, const char *what)
{
	struct ebpf_exec_opts o = {.sz = sizeof(o), .name = what};
	char err[256];
	struct ebpf_exec *p;

	if (env) {
		o.helpers = env->helpers;
		o.maps = env->maps;
		o.n_maps = env->n_maps;
	}
	p = ebpf_exec__new(insns, n, &o, err, sizeof(err));
	if (!p)
		fprintf(stderr, "%s: load failed: %s\n", what, err);
	return p;
}

/* Runs in all variants; returns the fast run's r0 (or 0xdead on failure, with a CHECK failed). */
static inline uint64_t harness_run(const char *what, const struct ebpf_insn *insns, uint32_t n,
				   uint64_t r1, uint64_t r2, const struct harness_env *env)
{
	struct ebpf_exec *p = harness_load(insns, n, env, what);
	uint64_t r0 = 0xdead, r0b = 0;
	struct ebpf_fault f = {0};
	int rc;

	CHECK(p != NULL);
	if (!p)
		return 0xdead;
	rc = ebpf_interp__run(
	    p, r1, r2, &(struct ebpf_run_opts){.sz = sizeof(struct ebpf_run_opts), .fault = &f},
	    &r0);
	if (rc)
		fprintf(stderr, "%s: fast run failed: %s\n", what, f.msg);
	CHECK(rc == 0);
	if (!env || !env->fast_only) {
		struct ebpf_run_opts lo = {.sz = sizeof(lo), .insn_limit = 1u << 30, .fault = &f};
		struct ebpf_run_opts co = {
		    .sz = sizeof(co), .checked = 1, .fault = &f, .flags = EBPF_RUN_F_UNINIT_REGS};

		rc = ebpf_interp__run(p, r1, r2, &lo, &r0b);
		CHECK(rc == 0);
		if (r0b != r0)
			fprintf(stderr, "%s: limited run differs\n", what);
		CHECK_EQ_U64(r0b, r0);
		if (env) {
			co.regions = env->regions;
			co.n_regions = env->n_regions;
		}
		r0b = ~r0;
		rc = ebpf_interp__run(p, r1, r2, &co, &r0b);
		if (rc)
			fprintf(stderr, "%s: checked run failed: %s\n", what, f.msg);
		CHECK(rc == 0);
		CHECK_EQ_U64(r0b, r0);
	}
	ebpf_exec__free(p);
	return r0;
}

/* Expects a fault of the given kind (in the checked variant, with register tracking, when
 * checked != 0). */
static inline void harness_expect_fault(const char *what, const struct ebpf_insn *insns, uint32_t n,
					uint64_t r1, uint64_t r2, const struct harness_env *env,
					int checked, int kind)
{
	struct ebpf_exec *p = harness_load(insns, n, env, what);
	struct ebpf_fault f = {0};
	struct ebpf_run_opts o = {.sz = sizeof(o),
				  .checked = checked,
				  .fault = &f,
				  .flags = checked ? EBPF_RUN_F_UNINIT_REGS : 0};
	uint64_t r0 = 0;
	int rc;

	CHECK(p != NULL);
	if (!p)
		return;
	if (env) {
		o.regions = env->regions;
		o.n_regions = env->n_regions;
	}
	rc = ebpf_interp__run(p, r1, r2, &o, &r0);
	if (rc != -EFAULT || f.kind != kind)
		fprintf(stderr, "%s: expected fault kind %d, got rc %d kind %d (%s)\n", what, kind,
			rc, f.kind, f.msg);
	CHECK_EQ_U64(rc, -EFAULT);
	CHECK_EQ_U64(f.kind, kind);
	CHECK(strlen(f.msg) > 0 && strchr(f.msg, '\n') == NULL);
	ebpf_exec__free(p);
}

#endif
