/* A test whose prerequisite is missing (an "oracle": bpf() refused, no llvm-objdump, no JIT for
 * this architecture, not root...) is skipped visibly, never passed: it exits TEST_SKIP (77),
 * which the test runner and CTest show as "Skipped" (cmake/NcclbpfTargets.cmake). Where the
 * environment declares the oracle required (NCCLBPF_REQUIRE_ORACLES=bpf,llvm-objdump,jit,...,
 * as CI does: .ci/run), its absence fails the test instead. tests/common/skip.sh is the same
 * for shell tests. */
#ifndef NCCLBPF_TEST_SKIP_H
#define NCCLBPF_TEST_SKIP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77

/* 1 when NCCLBPF_REQUIRE_ORACLES (comma-separated) names oracle. */
static inline int test_oracle_required(const char *oracle)
{
	const char *list = getenv("NCCLBPF_REQUIRE_ORACLES");
	size_t n = strlen(oracle);
	while (list && *list) {
		size_t len = strcspn(list, ",");
		if (len == n && !strncmp(list, oracle, n))
			return 1;
		list += len + (list[len] == ',');
	}
	return 0;
}

/* Reports the missing oracle (why: printf-style) and returns the exit status for it: TEST_SKIP,
 * or 1 when it is required. */
static inline int test_skip(const char *oracle, const char *why, ...)
{
	int required = test_oracle_required(oracle);
	va_list ap;
	printf("%s: %s missing: ", required ? "FAIL (required oracle)" : "SKIP", oracle);
	va_start(ap, why);
	vprintf(why, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return required ? 1 : TEST_SKIP;
}

#endif
