/* Soundness and kernel differential over generated programs.
 *
 * Each program comes from the diff generator (tests/diff/gen.h; by default every instruction
 * family plus maps and helpers: lookups with and without NULL checks, value arithmetic, updates,
 * ring buffer records, rank-local helpers) and is, with probability 3/4, mutated (registers,
 * offsets, immediates, opcodes, jump targets changed at random) so that many programs are unsafe.
 * The program's input buffer is its context: a program type whose one field is plain read/write
 * memory of buf_len bytes.
 *
 * Soundness: every program the verifier accepts runs in the interpreter's bounds-checking mode
 * on several random buffers, with the instruction limit set to the verifier's worst-case bound.
 * Any fault (out-of-bounds or uninitialised access, or more instructions than the bound) is a
 * verifier bug and fails the run.
 *
 * Differential (--kernel): the same program goes to the Linux verifier through the kernel
 * oracle (tests/diff/kernel_oracle.h: a SYSCALL program calling ours as a subprogram, the
 * buffer in a map value, the program's maps created alike). Counts "we accept, the kernel rejects"
 * (must be 0) and "the kernel accepts, we reject" (our imprecision, most of it deliberate: division
 * by a possibly-zero register, pointer leaks and uninitialised stack reads that root may do in
 * Linux). With --kernel and bpf() refused the run is skipped (exit 77; a failure where bpf is a
 * required oracle, tests/common/skip.h); any other oracle error fails it. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"
#include "gen_env.h"
#include "kernel_oracle.h"
#include "ebpf/helpers.h"
#include "ebpf/exec.h"
#include "ebpf/progtype.h"
#include "ebpf/verifier.h"

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static const int32_t interesting[] = {
    0,	    1,	 -1,  2,   4,	7,   8,	 15,  16,   31,	  32,	      63,
    64,	    127, 255, 256, 511, 512, -8, -16, -512, -520, 0x7fffffff, (int32_t)0x80000000,
    0xffff, 4096};

static void mutate(struct gen_prog *p, uint64_t *rs)
{
	uint32_t n = p->n_insns, k = 1 + (uint32_t)(splitmix(rs) % 3);

	for (uint32_t m = 0; m < k && n; m++) {
		uint32_t i = (uint32_t)(splitmix(rs) % n);
		struct ebpf_insn *in = &p->insns[i];
		uint64_t r = splitmix(rs);

		switch (r % 8) {
		case 0:
			in->dst_reg = (uint8_t)((r >> 8) % 11);
			break;
		case 1:
			in->src_reg = (uint8_t)((r >> 8) % 11);
			break;
		case 2:
			in->off = (int16_t)(in->off + (int16_t)((r >> 8) % 33) - 16);
			break;
		case 3:
			in->imm =
			    interesting[(r >> 8) % (sizeof(interesting) / sizeof(interesting[0]))];
			break;
		case 4:
			in->off = (int16_t)
			    interesting[(r >> 8) % (sizeof(interesting) / sizeof(interesting[0]))];
			break;
		case 5: /* an opcode seen elsewhere in the program */
			in->code = p->insns[(r >> 8) % n].code;
			break;
		case 6: /* size bits of a memory access */
			in->code = (uint8_t)((in->code & ~0x18) | ((r >> 8) & 0x18));
			break;
		default: /* drop a bounds check: turn a conditional jump into its opposite */
			if ((EBPF_CLASS(in->code) == EBPF_JMP ||
			     EBPF_CLASS(in->code) == EBPF_JMP32) &&
			    EBPF_OP(in->code) >= EBPF_JEQ && EBPF_OP(in->code) != EBPF_CALL &&
			    EBPF_OP(in->code) != EBPF_EXIT)
				in->code ^= 0x10;
			else
				in->imm ^= 1 << ((r >> 8) % 31);
			break;
		}
	}
}

/* 1 when the program calls a helper (maps, ring buffer, clock...). */
static int calls_helper(const struct gen_prog *p)
{
	for (uint32_t pc = 0; pc < p->n_insns; pc++)
		if (p->insns[pc].code == (EBPF_JMP | EBPF_CALL) &&
		    p->insns[pc].src_reg == EBPF_PSEUDO_HELPER)
			return 1;
	return 0;
}

struct tally {
	uint64_t programs, accepted, accepted_helpers, rejected, faults, bound_faults,
	    prog_new_refused;
	uint64_t k_both_accept, k_both_reject, k_we_only, k_we_only_infeasible, k_we_only_div,
	    k_kernel_only, k_errors;
	uint64_t runs;
	uint64_t verify_ns;
};

#define MAX_REASONS 12
static struct {
	char text[96];
	uint64_t n, seed;
} reasons[MAX_REASONS];
static unsigned n_reasons;

static void note_reason(const char *msg, uint64_t seed)
{
	const char *c = strstr(msg, ": ");
	char key[96];
	unsigned r;

	/* strip "insn N: " and cut at the first digit-heavy detail */
	c = c ? c + 2 : msg;
	snprintf(key, sizeof(key), "%.40s", c);
	for (r = 0; r < n_reasons && strcmp(reasons[r].text, key); r++)
		;
	if (r == n_reasons && n_reasons < MAX_REASONS) {
		snprintf(reasons[r].text, sizeof(reasons[r].text), "%s", key);
		reasons[r].seed = seed;
		n_reasons++;
	}
	if (r < n_reasons)
		reasons[r].n++;
}

/* The instruction (kernel numbering) of the first division or modulo on the kernel's failing
 * path whose result the kernel's log shows as an unknown scalar, or -1. Linux tracks no range
 * for division results (we compute them, e.g. of constants), so a program whose safety rests on
 * one is rejected there; the checked runs of accepted programs cover what it does. */
static long kernel_lost_division(const char *klog)
{
	for (const char *q = klog; *q;) {
		const char *e = strchr(q, '\n');
		size_t len = e ? (size_t)(e - q) : strlen(q);
		char line[512];
		snprintf(line, sizeof(line), "%.*s", (int)(len < 511 ? len : 511), q);
		if (line[0] >= '0' && line[0] <= '9' && strstr(line, ": (") &&
		    (strstr(line, "/= ") || strstr(line, "%= ")) && strstr(line, "=scalar()"))
			return strtol(line, NULL, 10);
		q += len + (e ? 1 : 0);
	}
	return -1;
}

/* 1 when our log shows the analysis at instruction pc (a "pc: (" line). */
static bool we_reach(const char *vlog, long pc)
{
	char pat[32];
	snprintf(pat, sizeof(pat), "\n%ld: (", pc);
	return strstr(vlog, pat) || !strncmp(vlog, pat + 1, strlen(pat + 1));
}

/* Whether the kernel failed on a path our analysis proves infeasible: the instructions of the
 * kernel's last path segment (from its last "from X to Y:" line, X included, or the whole log
 * when it has none; minus the oracle's trampoline) include one our analysis never reaches. */
static bool kernel_path_infeasible_for_us(const struct gen_prog *p,
					  const struct ebpf_verify_opts *vo, const char *klog)
{
	static char vlog[1 << 20];
	struct ebpf_verify_opts o = *vo;
	const char *q, *seg = klog;

	for (q = klog; (q = strstr(q, "from ")); q++)
		if (q == klog || q[-1] == '\n')
			seg = q;
	o.flags |= EBPF_VERIFY_F_LOG;
	o.log_buf = vlog;
	o.log_size = sizeof(vlog);
	if (ebpf_verify(p->insns, p->n_insns, &o, NULL, NULL, 0))
		return false;
	if (strlen(vlog) + 1 >= sizeof(vlog))
		return false; /* log truncated: cannot tell */
	if (!strncmp(seg, "from ", 5)) {
		long from = strtol(seg + 5, NULL, 10) - KO_TRAMPOLINE_INSNS;
		if (from >= 0 && from < (long)p->n_insns && !we_reach(vlog, from))
			return true;
	}
	for (q = seg; *q; q++) {
		const char *b = q;
		long kpc;
		if (q != klog && q[-1] != '\n')
			continue;
		while (*q >= '0' && *q <= '9')
			q++;
		if (q == b || strncmp(q, ": (", 3))
			continue;
		kpc = strtol(b, NULL, 10) - KO_TRAMPOLINE_INSNS;
		if (kpc >= 0 && kpc < (long)p->n_insns && !we_reach(vlog, kpc))
			return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	uint64_t count = 2000, seed = 1, limit = 0, progress = 0, min_accepted = 0, seconds = 0;
	bool kernel = false, verbose = false, print = false, no_run = false;
	uint64_t seeds[64];
	uint32_t n_seeds = 0;
	uint32_t families = GEN_ALL_FAMILIES | GEN_MAP_FAMILIES | GEN_NONDET;
	int mutate_pct = 75;
	static struct gen_env env;
	static struct {
		uint32_t n_maps;
		struct gen_map maps[GEN_MAX_MAPS];
	} ko_maps; /* the table the kernel oracle's maps were made from */
	struct kernel_oracle *ko = NULL;
	static struct gen_prog p, orig;
	struct tally t = {0};
	char err[512];
	static char klog[1 << 16];

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--count") && k + 1 < argc)
			count = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--seed") && k + 1 < argc)
			seed = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--kernel"))
			kernel = true;
		else if (!strcmp(argv[k], "--limit") && k + 1 < argc)
			limit = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--min-accepted") && k + 1 < argc)
			min_accepted = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--progress") && k + 1 < argc)
			progress = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--seconds") && k + 1 < argc)
			seconds = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--mutate") && k + 1 < argc)
			mutate_pct = atoi(argv[++k]);
		else if (!strcmp(argv[k], "--families") && k + 1 < argc) {
			if (gen_parse_families(argv[++k], &families))
				return 2;
		} else if (!strcmp(argv[k], "--seeds") && k + 1 < argc) {
			char *e = argv[++k];
			while (*e && n_seeds < 64) {
				seeds[n_seeds++] = strtoull(e, &e, 0);
				if (*e == ',')
					e++;
			}
			count = n_seeds;
		} else if (!strcmp(argv[k], "--no-run")) {
			no_run = true;
		} else if (!strcmp(argv[k], "--print")) {
			print = true;
		} else if (!strcmp(argv[k], "-v")) {
			verbose = true;
		} else {
			fprintf(stderr,
				"usage: %s [--count N] [--seed S | --seeds A,B,..] [--kernel] "
				"[--mutate PCT] "
				"[--families LIST] [--limit INSNS] [--min-accepted N] "
				"[--progress N] [--seconds S] [--no-run] "
				"[--print] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	if (kernel) {
		int rc = kernel_oracle__open_for_test(&ko);
		if (rc)
			return rc;
	}
	/* The helpers the generator calls (not trace_printk: a mutated call may reach it, and
	 * Linux's allows it where ours does not, which the differential counts). */
	static const uint32_t helper_ids[] = {
	    EBPF_FUNC_map_lookup_elem, EBPF_FUNC_map_update_elem, EBPF_FUNC_map_delete_elem,
	    EBPF_FUNC_ktime_get_ns,    EBPF_FUNC_get_prandom_u32, EBPF_FUNC_get_smp_processor_id,
	    EBPF_FUNC_ringbuf_output,  EBPF_FUNC_ringbuf_reserve, EBPF_FUNC_ringbuf_submit,
	    EBPF_FUNC_ringbuf_discard};
	/* --min-accepted N: consecutive seeds until N accepted programs call helpers (--count
	 * stays the cap), so that a campaign states its size in what it is about */
	/* --seconds S: stop after S seconds with the totals so far, so that a campaign split over
	 * machine loans of bounded length still ends with its summary line */
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	bool out_of_time = false;
	for (uint64_t i = 0; i < count && (!min_accepted || t.accepted_helpers < min_accepted);
	     i++) {
		if (seconds) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((uint64_t)(now.tv_sec - start.tv_sec) * 1000000000ull + now.tv_nsec -
				start.tv_nsec >=
			    seconds * 1000000000ull) {
				out_of_time = true;
				break;
			}
		}
		uint64_t s = n_seeds ? seeds[i] : seed + i, rs = s * 0x2545f4914f6cdd1dull;
		struct gen_opts o;
		struct ebpf_ctx_field field;
		struct ebpf_prog_type type = {.name = "buffer",
					      .section = "buffer",
					      .ret_min = INT64_MIN,
					      .ret_max = INT64_MAX,
					      .insn_budget = UINT64_MAX};
		for (uint32_t h = 0; h < sizeof(helper_ids) / sizeof(helper_ids[0]); h++)
			type.helper_allow[helper_ids[h] / 64] |= 1ull << (helper_ids[h] % 64);
		struct ebpf_verify_opts vo = {.sz = sizeof(vo),
					      .type = &type,
					      .helpers = ebpf_helpers_default(),
					      .complexity_limit = limit};
		struct ebpf_verify_stats st;
		struct timespec a, b;
		int rc;

		if (progress && i && i % progress == 0) {
			printf("... %" PRIu64 " programs, %" PRIu64 " accepted, %" PRIu64
			       " faults; kernel: "
			       "both accept %" PRIu64 ", both reject %" PRIu64 ", we only %" PRIu64
			       " (+%" PRIu64 " infeasible for us), kernel only %" PRIu64 "\n",
			       i, t.accepted, t.faults + t.bound_faults, t.k_both_accept,
			       t.k_both_reject, t.k_we_only, t.k_we_only_infeasible,
			       t.k_kernel_only);
			fflush(stdout);
		}
		gen_opts_for_seed(s, families, &o);
		if (gen_program(s, &o, &p))
			continue;
		/* every program starts from fresh maps, so that its seed alone reproduces it */
		if (gen_env_prepare(&env, &p, err, sizeof(err))) {
			fprintf(stderr, "maps for seed %" PRIu64 ": %s\n", s, err);
			return 1;
		}
		gen_env_reset(&env);
		if (kernel && (ko_maps.n_maps != p.n_maps ||
			       memcmp(ko_maps.maps, p.maps, p.n_maps * sizeof(p.maps[0])))) {
			if (kernel_oracle__set_maps(ko, p.maps, p.n_maps, err, sizeof(err))) {
				fprintf(stderr, "kernel maps: %s\n", err);
				return 1;
			}
			ko_maps.n_maps = p.n_maps;
			memcpy(ko_maps.maps, p.maps, sizeof(p.maps));
		}
		vo.maps = env.maps;
		vo.n_maps = env.n_maps;
		/* our ABI has no length in r2 (the generator's convention): set it first; all jumps
		 * and calls are relative, so the program stays intact */
		if (p.n_insns + 1 > GEN_MAX_INSNS)
			continue;
		memmove(&p.insns[1], &p.insns[0], p.n_insns * sizeof(p.insns[0]));
		p.insns[0] = (struct ebpf_insn){.code = EBPF_ALU64 | EBPF_MOV | EBPF_K,
						.dst_reg = 2,
						.imm = (int32_t)p.buf_len};
		p.n_insns++;
		orig = p;
		if ((int)(splitmix(&rs) % 100) < mutate_pct)
			mutate(&p, &rs);
		field = (struct ebpf_ctx_field){"buf", 0, (uint16_t)p.buf_len,
						EBPF_CTX_READ | EBPF_CTX_WRITE | EBPF_CTX_BYTES};
		type.ctx_size = p.buf_len;
		type.fields = &field;
		type.n_fields = p.buf_len ? 1 : 0;
		t.programs++;
		if (print)
			gen_print(stdout, &p);
		static char vlog[1 << 20];
		if (print) {
			vo.flags |= EBPF_VERIFY_F_LOG;
			vo.log_buf = vlog;
			vo.log_size = sizeof(vlog);
		}
		clock_gettime(CLOCK_MONOTONIC, &a);
		rc = ebpf_verify(p.insns, p.n_insns, &vo, &st, err, sizeof(err));
		if (print)
			printf("--- verifier log ---\n%s--- end ---\n", vlog);
		clock_gettime(CLOCK_MONOTONIC, &b);
		t.verify_ns += (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull +
			       (uint64_t)(b.tv_nsec - a.tv_nsec);
		if (print)
			printf("verdict %d: %s (processed %llu, peak states %u, worst %llu)\n", rc,
			       err, (unsigned long long)st.processed, st.peak_states,
			       (unsigned long long)st.worst_case_insns);
		if (rc) {
			t.rejected++;
			note_reason(err, s);
		} else {
			struct ebpf_exec_opts po = {.sz = sizeof(po),
						    .helpers = ebpf_helpers_default(),
						    .maps = env.maps,
						    .n_maps = env.n_maps};
			struct ebpf_exec *prog;
			char perr[256];

			t.accepted++;
			t.accepted_helpers += calls_helper(&p);
			prog = no_run ? NULL
				      : ebpf_exec__new(p.insns, p.n_insns, &po, perr, sizeof(perr));
			if (no_run) {
				/* kernel differential only */
			} else if (!prog) {
				t.prog_new_refused++;
				fprintf(stderr,
					"seed %" PRIu64
					": verified but ebpf_exec__new refused: %s\n",
					s, perr);
			} else {
				for (int run = 0; run < 3; run++) {
					uint8_t buf[GEN_MAX_BUF + 8];
					struct ebpf_region reg = {
					    (uint64_t)(uintptr_t)buf, p.buf_len,
					    EBPF_REGION_READ | EBPF_REGION_WRITE};
					struct ebpf_fault f = {0};
					struct ebpf_run_opts ro = {.sz = sizeof(ro),
								   .checked = 1,
								   .regions = &reg,
								   .n_regions = p.buf_len ? 1 : 0,
								   .insn_limit =
								       st.worst_case_insns,
								   .fault = &f};
					uint64_t r0;

					for (uint32_t k = 0; k < sizeof(buf); k++)
						buf[k] = run ? (uint8_t)splitmix(&rs)
							     : p.buf[k % GEN_MAX_BUF];
					if (run == 1)
						memset(buf, 0, sizeof(buf));
					t.runs++;
					if (print) { /* exact executed count, by bisection on the
							limit */
						uint64_t lo = 1,
							 hi = st.worst_case_insns * 64 + 100000;
						uint8_t save[GEN_MAX_BUF + 8];
						memcpy(save, buf, sizeof(buf));
						while (lo < hi) {
							uint64_t mid = (lo + hi) / 2;
							struct ebpf_run_opts lo2 = ro;
							memcpy(buf, save, sizeof(buf));
							lo2.insn_limit = mid;
							if (ebpf_interp__run(
								prog, (uint64_t)(uintptr_t)buf,
								p.buf_len, &lo2, &r0))
								lo = mid + 1;
							else
								hi = mid;
						}
						memcpy(buf, save, sizeof(buf));
						printf("run %d executes %llu insns (bound %llu)\n",
						       run, (unsigned long long)lo,
						       (unsigned long long)st.worst_case_insns);
					}
					if (ebpf_interp__run(prog, (uint64_t)(uintptr_t)buf,
							     p.buf_len, &ro, &r0)) {
						if (f.kind == EBPF_FAULT_INSN_LIMIT)
							t.bound_faults++;
						else
							t.faults++;
						fprintf(stderr,
							"UNSOUND seed %" PRIu64
							" run %d: %s (worst-case bound %" PRIu64
							")\n",
							s, run, f.msg, st.worst_case_insns);
						if (verbose)
							gen_print(stderr, &p);
						break;
					}
				}
				ebpf_exec__free(prog);
			}
		}
		if (kernel) {
			uint8_t buf[KO_MAX_BUF];
			uint64_t r0;
			int krc;

			memcpy(buf, p.buf, p.buf_len);
			/* without a log the kernel verifies once; the log is fetched only when
			 * needed */
			krc = kernel_oracle__run(ko, p.insns, p.n_insns, buf, p.buf_len, &r0, NULL,
						 0);
			if (krc == KO_REJECTED && !rc)
				krc = kernel_oracle__run(ko, p.insns, p.n_insns, buf, p.buf_len,
							 &r0, klog, sizeof(klog));
			if (krc < 0) {
				if (!t.k_errors++)
					fprintf(stderr,
						"kernel oracle error, seed %" PRIu64 ": %s\n", s,
						strerror(-krc));
			} else if (krc == KO_RAN) {
				if (rc)
					t.k_kernel_only++;
				else
					t.k_both_accept++;
			} else if (rc) {
				t.k_both_reject++;

			} else if (kernel_path_infeasible_for_us(&p, &vo, klog)) {
				/* the kernel failed at an instruction our analysis proves
				 * unreachable (we track ranges Linux does not, e.g. of division
				 * results) */
				t.k_we_only_infeasible++;
				if (verbose) {
					char why[160];
					kernel_oracle__reason(klog, why, sizeof(why));
					fprintf(stderr,
						"kernel rejects on a path we prove infeasible, "
						"seed %" PRIu64 ": %s\n",
						s, why);
				}
			} else {
				char why[160];
				long div_pc = kernel_lost_division(klog);
				kernel_oracle__reason(klog, why, sizeof(why));
				if (div_pc >= 0) {
					t.k_we_only_div++;
					fprintf(stderr,
						"accepted, kernel rejects after losing a division "
						"result (insn %ld) seed %" PRIu64 ": %s\n",
						div_pc, s, why);
				} else {
					t.k_we_only++;
					fprintf(stderr,
						"ACCEPTED BUT KERNEL REJECTS seed %" PRIu64
						": %s\n",
						s, why);
				}
				if (print)
					fprintf(stderr, "kernel log (end):\n%s\n", klog);
				if (verbose)
					gen_print(stderr, &p);
			}
		}
	}
	if (out_of_time)
		printf("stopped at the --seconds limit (%" PRIu64 " s)\n", seconds);
	printf("programs %" PRIu64 ": accepted %" PRIu64 " (%" PRIu64
	       " calling helpers), rejected %" PRIu64 "; checked runs %" PRIu64 ", faults %" PRIu64
	       ", cost-bound overruns %" PRIu64 ", ebpf_exec__new refusals %" PRIu64
	       "; mean verify %.1f us\n",
	       t.programs, t.accepted, t.accepted_helpers, t.rejected, t.runs, t.faults,
	       t.bound_faults, t.prog_new_refused,
	       t.programs ? t.verify_ns / 1e3 / (double)t.programs : 0.0);
	if (verbose || kernel)
		for (unsigned r = 0; r < n_reasons; r++)
			printf("  rejected %8" PRIu64 "x: %s (e.g. seed %" PRIu64 ")\n",
			       reasons[r].n, reasons[r].text, reasons[r].seed);
	if (kernel) {
		printf("kernel differential: both accept %" PRIu64 ", both reject %" PRIu64
		       ", we accept & kernel rejects %" PRIu64 " (plus %" PRIu64
		       " where the kernel failed on a path we prove infeasible, %" PRIu64
		       " after a division result the kernel does not track), kernel accepts & "
		       "we reject %" PRIu64 " (%.2f%% of kernel-accepted), errors %" PRIu64 "\n",
		       t.k_both_accept, t.k_both_reject, t.k_we_only, t.k_we_only_infeasible,
		       t.k_we_only_div, t.k_kernel_only,
		       100.0 * (double)t.k_kernel_only /
			   (double)(t.k_kernel_only + t.k_both_accept
					? t.k_kernel_only + t.k_both_accept
					: 1),
		       t.k_errors);
		kernel_oracle__close(ko);
	}
	(void)orig;
	gen_env_free(&env);
	return t.faults || t.bound_faults || t.prog_new_refused || t.k_we_only || t.k_errors ? 1
											     : 0;
}
