/* The kernel's verifier accepts what the generator produces: runs --count generated programs
 * (a spread of options; by default every instruction family plus maps and helpers) through the
 * kernel oracle and fails when more than 1% are rejected, printing the most common reasons.
 * Skips visibly (exit 77) when bpf() is refused here, fails where bpf is a required oracle.
 *
 *   kernel_accept [--count N] [--seed S] [--families LIST] [--print]
 * --print shows every rejected program with the end of the kernel verifier's log. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "kernel_oracle.h"

#define MAX_REASONS 16

struct reason {
	char text[160];
	uint64_t count;
	uint64_t seed;
};

int main(int argc, char **argv)
{
	uint64_t count = 2000, seed = 1;
	int print = 0;
	uint32_t families = GEN_ALL_FAMILIES | GEN_MAP_FAMILIES | GEN_NONDET;
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--count") && k + 1 < argc)
			count = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--seed") && k + 1 < argc)
			seed = strtoull(argv[++k], NULL, 0);
		else if (!strcmp(argv[k], "--families") && k + 1 < argc &&
			 !gen_parse_families(argv[k + 1], &families))
			k++;
		else if (!strcmp(argv[k], "--print"))
			print = 1;
		else {
			fprintf(stderr,
				"usage: %s [--count N] [--seed S] [--families LIST] [--print]\n",
				argv[0]);
			return 2;
		}
	}
	char err[256];
	struct kernel_oracle *ko;
	int rc = kernel_oracle__open_for_test(&ko);
	if (rc)
		return rc;
	if (!kernel_oracle__has_v4(ko)) {
		families &= GEN_V3_FAMILIES | GEN_MAP_FAMILIES | GEN_NONDET;
		printf(
		    "NOTE: this kernel lacks the v4 instructions (Linux 6.6+): v3 programs only\n");
	}
	static struct gen_prog p;
	static char log[4096];
	struct reason reasons[MAX_REASONS];
	unsigned n_reasons = 0;
	uint64_t ran = 0, rejected = 0;
	for (uint64_t i = 0; i < count; i++) {
		struct gen_opts o;
		gen_opts_for_seed(seed + i, families, &o);
		gen_program(seed + i, &o, &p);
		if (i == 0 && kernel_oracle__set_maps(ko, p.maps, p.n_maps, err, sizeof(err))) {
			fprintf(stderr, "kernel maps: %s\n", err);
			kernel_oracle__close(ko);
			return 1;
		}
		uint64_t r0;
		rc = kernel_oracle__run(ko, p.insns, p.n_insns, p.buf, p.buf_len, &r0, log,
					sizeof(log));
		if (rc == KO_RAN) {
			ran++;
			continue;
		}
		if (rc < 0) {
			fprintf(stderr, "seed %" PRIu64 ": %s\n", seed + i, log);
			kernel_oracle__close(ko);
			return 1;
		}
		rejected++;
		if (print) {
			gen_print(stdout, &p);
			printf("kernel log (end):\n%s\n", log);
		}
		char why[160];
		kernel_oracle__reason(log, why, sizeof(why));
		unsigned r;
		for (r = 0; r < n_reasons && strcmp(reasons[r].text, why); r++)
			;
		if (r == n_reasons && n_reasons < MAX_REASONS) {
			snprintf(reasons[r].text, sizeof(reasons[r].text), "%s", why);
			reasons[r].count = 0;
			reasons[r].seed = seed + i;
			n_reasons++;
		}
		if (r < n_reasons)
			reasons[r].count++;
	}
	kernel_oracle__close(ko);
	printf("kernel_accept: %" PRIu64 " programs from seed %" PRIu64 ": %" PRIu64
	       " ran, %" PRIu64 " rejected (%.3f%%)\n",
	       count, seed, ran, rejected, count ? 100.0 * (double)rejected / (double)count : 0.0);
	for (unsigned r = 0; r < n_reasons; r++)
		printf("  %" PRIu64 "x %s (first: seed %" PRIu64 ")\n", reasons[r].count,
		       reasons[r].text, reasons[r].seed);
	return rejected * 100 > count ? 1 : 0;
}
