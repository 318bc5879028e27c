/* Minimal assertion helpers for the C test programs: every failed CHECK prints where and what,
 * and check_summary() turns the count into the exit status CTest reads. */
#ifndef NCCLBPF_TEST_CHECK_H
#define NCCLBPF_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>

static int check_failures;
static int check_count;

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

static inline int check_summary(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d of %d checks failed\n", name, check_failures, check_count);
		return 1;
	}
	printf("%s: %d checks passed\n", name, check_count);
	return 0;
}

#endif
