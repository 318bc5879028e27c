/* Minimal assertion helpers for the C test programs: every failed CHECK prints where and what,
 * and check_summary() turns the count into the exit status CTest reads. */
#ifndef NCCLBPF_TEST_CHECK_H
#define NCCLBPF_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>

#include "skip.h"

static int check_failures;
static int check_count;
static int check_skipped; /* a part did not run: its oracle is missing (skip.h) */

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		check_count++;                                                                     \
		if (!(cond)) {                                                                     \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
		}                                                                                  \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
	do {                                                                                       \
		uint64_t _a = (uint64_t)(a), _b = (uint64_t)(b);                                   \
		check_count++;                                                                     \
		if (_a != _b) {                                                                    \
			check_failures++;                                                          \
			fprintf(stderr,                                                            \
				"%s:%d: CHECK failed: %s == %s (0x%" PRIx64 " != 0x%" PRIx64       \
				")\n",                                                             \
				__FILE__, __LINE__, #a, #b, _a, _b);                               \
		}                                                                                  \
	} while (0)

/* CHECK with a printf-style explanation of the failure. */
#define CHECKF(cond, ...)                                                                          \
	do {                                                                                       \
		check_count++;                                                                     \
		if (!(cond)) {                                                                     \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/* A part of the test cannot run: its oracle is missing (why: printf-style). The other parts
 * still run; the test then ends skipped (exit 77), or failed where the oracle is required. */
#define CHECK_SKIP_PART(oracle, ...)                                                               \
	do {                                                                                       \
		if (test_skip(oracle, __VA_ARGS__) == TEST_SKIP)                                   \
			check_skipped = 1;                                                         \
		else                                                                               \
			check_failures++;                                                          \
	} while (0)

static inline int check_summary(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d of %d checks failed\n", name, check_failures, check_count);
		return 1;
	}
	printf("%s: %d checks passed%s\n", name, check_count,
	       check_skipped ? "; a part was skipped (see SKIP above)" : "");
	return check_skipped ? TEST_SKIP : 0;
}

#endif
