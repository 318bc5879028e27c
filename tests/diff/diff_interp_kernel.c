/* Differential test: our interpreter against the Linux kernel on generated programs.
 *
 *   diff_interp_kernel [--count N] [--seed S] [--families LIST] [--print] [--reduce]
 *                      [--progress N]
 *
 * --reduce: shrink the first mismatching program (instructions turned into ja +0 while the
 * disagreement stays) and print it.
 *
 * Program i uses seed S + i (options derived from that seed, gen_opts_for_seed), so
 * `--seed S+i --count 1 --print` reproduces and shows any single program. For every program the
 * kernel (BPF_PROG_LOAD + BPF_PROG_TEST_RUN through kernel_oracle) and the interpreter run it on
 * the same input buffer; r0 and the buffer afterwards must be equal. The interpreter runs twice:
 * fast, and in bounds-checking mode with the buffer as the only region, which must not fault
 * (the generator promises in-bounds, initialised accesses only) and must agree with the fast run.
 * Programs the kernel's verifier rejects are counted, not compared. Exit status 1 on any
 * mismatch. When bpf() is refused here the test is skipped (exit 77; a failure where bpf is a
 * required oracle, tests/common/skip.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"
#include "kernel_oracle.h"
#include "ebpf/exec.h"

struct counts {
	uint64_t generated, rejected, compared, mismatches, insns;
};

struct result {
	int rc;
	uint64_t r0;
	uint64_t buf[GEN_MAX_BUF / 8]; /* 8-aligned, like the kernel's map value */
	char msg[256];
};

static void print_buf_diff(const char *a_name, const uint8_t *a, const char *b_name,
			   const uint8_t *b, uint32_t len)
{
	for (uint32_t k = 0; k < len; k++)
		if (a[k] != b[k])
			fprintf(stderr, "  buf[%u]: %s 0x%02x, %s 0x%02x\n", k, a_name, a[k],
				b_name, b[k]);
}

static void run_interp(const struct gen_prog *p, int checked, struct result *res)
{
	char err[200];
	memset(res, 0, sizeof(*res));
	memcpy(res->buf, p->buf, p->buf_len);
	struct ebpf_exec_opts po = {.sz = sizeof(po), .name = "diff"};
	struct ebpf_exec *prog = ebpf_exec__new(p->insns, p->n_insns, &po, err, sizeof(err));
	if (!prog) {
		res->rc = -EINVAL;
		snprintf(res->msg, sizeof(res->msg), "ebpf_exec__new: %.200s", err);
		return;
	}
	struct ebpf_region region = {.base = (uint64_t)(uintptr_t)res->buf,
				     .size = p->buf_len,
				     .perms = EBPF_REGION_READ | EBPF_REGION_WRITE};
	struct ebpf_fault fault = {0};
	struct ebpf_run_opts ro = {.sz = sizeof(ro),
				   .checked = checked,
				   .regions = p->buf_len ? &region : NULL,
				   .n_regions = p->buf_len ? 1 : 0,
				   .fault = &fault};
	uint64_t r1 = p->buf_len ? (uint64_t)(uintptr_t)res->buf : 0;
	res->rc = ebpf_interp__run(prog, r1, p->buf_len, &ro, &res->r0);
	if (res->rc)
		snprintf(res->msg, sizeof(res->msg), "run: %d, fault: %.200s", res->rc, fault.msg);
	ebpf_exec__free(prog);
}

static int same(const struct gen_prog *p, const struct result *a, const struct result *b)
{
	return a->rc == b->rc && a->r0 == b->r0 && !memcmp(a->buf, b->buf, p->buf_len);
}

static void report(const struct gen_prog *p, const char *what, const char *a_name,
		   const struct result *a, const char *b_name, const struct result *b)
{
	char fams[256];
	gen_format_families(p->families, fams, sizeof(fams));
	fprintf(stderr, "MISMATCH (%s), reproduce with: --seed %" PRIu64 " --count 1 --print%s%s\n",
		what, p->seed, p->families == GEN_ALL_FAMILIES ? "" : " --families ",
		p->families == GEN_ALL_FAMILIES ? "" : fams);
	fprintf(stderr, "  %s: rc %d r0 0x%016" PRIx64 " %s\n", a_name, a->rc, a->r0, a->msg);
	fprintf(stderr, "  %s: rc %d r0 0x%016" PRIx64 " %s\n", b_name, b->rc, b->r0, b->msg);
	print_buf_diff(a_name, (const uint8_t *)a->buf, b_name, (const uint8_t *)b->buf,
		       p->buf_len);
	gen_print(stderr, p);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs p on the kernel and the interpreter; 1 when both ran and disagree. */
static int disagrees(struct kernel_oracle *ko, const struct gen_prog *p)
{
	static struct result k, f;
	static char log[4096];
	memset(&k, 0, sizeof(k));
	memcpy(k.buf, p->buf, p->buf_len);
	if (kernel_oracle__run(ko, p->insns, p->n_insns, (uint8_t *)k.buf, p->buf_len, &k.r0, log,
			       sizeof(log)) != KO_RAN)
		return 0;
	run_interp(p, 0, &f);
	return !same(p, &k, &f);
}

/* Shrinks a disagreeing program by turning instructions into no-ops (ja +0) while the kernel
 * still accepts it and the disagreement stays, then prints what is left. */
static void reduce(struct kernel_oracle *ko, struct gen_prog *p)
{
	const struct ebpf_insn nop = {.code = EBPF_JMP | EBPF_JA};
	int changed = 1;
	while (changed) {
		changed = 0;
		for (uint32_t pc = 0; pc < p->n_insns; pc++) {
			struct ebpf_insn save[2] = {p->insns[pc]};
			int wide = ebpf_insn_is_lddw(&p->insns[pc]) && pc + 1 < p->n_insns;
			if (!memcmp(&p->insns[pc], &nop, sizeof(nop)))
				continue;
			if (wide)
				save[1] = p->insns[pc + 1];
			p->insns[pc] = nop;
			if (wide)
				p->insns[pc + 1] = nop;
			if (disagrees(ko, p)) {
				changed = 1;
			} else {
				p->insns[pc] = save[0];
				if (wide)
					p->insns[pc + 1] = save[1];
			}
			if (wide)
				pc++;
		}
	}
	uint32_t left = 0;
	for (uint32_t pc = 0; pc < p->n_insns; pc++)
		left += !!memcmp(&p->insns[pc], &nop, sizeof(nop));
	fprintf(stderr, "REDUCED to %u instructions that are not ja +0:\n", left);
	gen_print(stderr, p);
	static struct result k, f;
	static char log[64];
	memset(&k, 0, sizeof(k));
	memcpy(k.buf, p->buf, p->buf_len);
	kernel_oracle__run(ko, p->insns, p->n_insns, (uint8_t *)k.buf, p->buf_len, &k.r0, log,
			   sizeof(log));
	run_interp(p, 0, &f);
	report(p, "reduced", "kernel", &k, "interp", &f);
}

static int usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--count N] [--seed S] [--families LIST] [--print] [--reduce] "
		"[--progress N]\n",
		argv0);
	return 2;
}

int main(int argc, char **argv)
{
	uint64_t count = 1000, seed = 1, progress = 0;
	uint32_t families = 0;
	int print = 0, reduce_first = 0;
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--count") && k + 1 < argc)
			count = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--seed") && k + 1 < argc)
			seed = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--progress") && k + 1 < argc)
			progress = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--families") && k + 1 < argc) {
			if (gen_parse_families(argv[++k], &families)) {
				fprintf(stderr, "unknown family in '%s'\n", argv[k]);
				return 2;
			}
		} else if (!strcmp(argv[k], "--print"))
			print = 1;
		else if (!strcmp(argv[k], "--reduce"))
			reduce_first = 1;
		else
			return usage(argv[0]);
	}

	struct kernel_oracle *ko;
	int rc = kernel_oracle__open_for_test(&ko);
	if (rc)
		return rc;

	char quirks[256];
	if (kernel_oracle__quirks(ko, quirks, sizeof(quirks)))
		printf("NOTE: %s\n", quirks);

	if (!kernel_oracle__has_v4(ko)) {
		families = (families ? families : GEN_ALL_FAMILIES) & GEN_V3_FAMILIES;
		printf(
		    "NOTE: this kernel lacks the v4 instructions (Linux 6.6+): v3 programs only\n");
	}
	static struct gen_prog p;
	static struct result kern, fast, checked;
	static char log[4096];
	struct counts c = {0};
	uint64_t first_reject_seed = 0;
	char first_reject[160] = "";
	double t0 = now_s();
	for (uint64_t i = 0; i < count; i++) {
		if (progress && i && i % progress == 0)
			fprintf(stderr,
				"... %" PRIu64 " generated, %" PRIu64 " rejected, %" PRIu64
				" mismatches, %.0f s\n",
				c.generated, c.rejected, c.mismatches, now_s() - t0);
		struct gen_opts o;
		gen_opts_for_seed(seed + i, families, &o);
		if (gen_program(seed + i, &o, &p)) {
			fprintf(stderr, "generator refused its options (seed %" PRIu64 ")\n",
				seed + i);
			kernel_oracle__close(ko);
			return 1;
		}
		c.generated++;
		c.insns += p.n_insns;
		if (print)
			gen_print(stdout, &p);

		memset(&kern, 0, sizeof(kern));
		memcpy(kern.buf, p.buf, p.buf_len);
		rc = kernel_oracle__run(ko, p.insns, p.n_insns, (uint8_t *)kern.buf, p.buf_len,
					&kern.r0, log, sizeof(log));
		if (rc < 0) {
			fprintf(stderr, "seed %" PRIu64 ": kernel oracle failed: %s\n", p.seed,
				log);
			kernel_oracle__close(ko);
			return 1;
		}
		if (rc == KO_REJECTED) {
			if (!c.rejected++) {
				first_reject_seed = p.seed;
				kernel_oracle__reason(log, first_reject, sizeof(first_reject));
			}
			if (print)
				printf("kernel verifier rejected it: %s\n", log);
			continue;
		}
		snprintf(kern.msg, sizeof(kern.msg), "(kernel)");
		run_interp(&p, 0, &fast);
		run_interp(&p, 1, &checked);
		c.compared++;
		if (print)
			printf("kernel r0 0x%016" PRIx64 ", interpreter r0 0x%016" PRIx64 "\n",
			       kern.r0, fast.r0);
		if (!same(&p, &kern, &fast)) {
			if (!c.mismatches) {
				report(&p, "kernel vs interpreter", "kernel", &kern, "interp",
				       &fast);
				if (reduce_first)
					reduce(ko, &p);
			}
			c.mismatches++;
		} else if (!same(&p, &fast, &checked)) {
			if (!c.mismatches)
				report(&p, "interpreter fast vs bounds-checking", "fast", &fast,
				       "checked", &checked);
			c.mismatches++;
		}
	}
	kernel_oracle__close(ko);

	printf("diff_interp_kernel: seed %" PRIu64 ", %" PRIu64
	       " generated (%.1f insns avg), %" PRIu64 " kernel-rejected (%.3f%%), %" PRIu64
	       " compared, %" PRIu64 " mismatches, %.1f s\n",
	       seed, c.generated, c.generated ? (double)c.insns / (double)c.generated : 0.0,
	       c.rejected, c.generated ? 100.0 * (double)c.rejected / (double)c.generated : 0.0,
	       c.compared, c.mismatches, now_s() - t0);
	if (c.rejected)
		printf("first kernel rejection: seed %" PRIu64 ": %s\n", first_reject_seed,
		       first_reject);
	return c.mismatches ? 1 : 0;
}
