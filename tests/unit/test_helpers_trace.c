/* bpf_trace_printk: the format subset, refusal of memory-reading conversions, fmt_size bounds,
 * the host logger, and the rate limiter. */
#include <errno.h>
#include <string.h>

#include "ebpf/helpers.h"
#include "check.h"

static char last[512];
static int lines;

static void logger(void *ctx, const char *line)
{
	CHECK(ctx == (void *)&lines);
	snprintf(last, sizeof(last), "%s", line);
	lines++;
}

static int fmt(char *out, const char *f, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t args[3] = {a, b, c};
	return ebpf_trace_format(out, 128, f, (uint32_t)strlen(f) + 1, args, 3);
}

int main(void)
{
	char o[128];
	CHECK(fmt(o, "x=%d y=%u z=%x", (uint64_t)-5, 7, 255) > 0 && !strcmp(o, "x=-5 y=7 z=ff"));
	CHECK(fmt(o, "%lld %llu %llx", (uint64_t)-1, (uint64_t)-1, (uint64_t)-1) > 0 &&
	      !strcmp(o, "-1 18446744073709551615 ffffffffffffffff"));
	CHECK(fmt(o, "%d", 0xffffffff00000005ull, 0, 0) > 0 && !strcmp(o, "5")); /* 32-bit */
	CHECK(fmt(o, "%i %ld %lx", 3, (uint64_t)-2, 0xabc) > 0 && !strcmp(o, "3 -2 abc"));
	CHECK(fmt(o, "%lu %li", 4, (uint64_t)-9, 0) > 0 && !strcmp(o, "4 -9"));
	CHECK(fmt(o, "[%5d|%05u|%-d]", 42, 42, 1) == -EINVAL); /* '-' flag not offered */
	CHECK(fmt(o, "[%5d|%05u|%3x]", 42, 42, 1) > 0 && !strcmp(o, "[   42|00042|  1]"));
	CHECK(fmt(o, "100%%", 0, 0, 0) == 4 && !strcmp(o, "100%"));
	CHECK(fmt(o, "%s", 0, 0, 0) == -EINVAL);
	CHECK(fmt(o, "%p", 0, 0, 0) == -EINVAL);
	CHECK(fmt(o, "%c", 0, 0, 0) == -EINVAL);
	CHECK(fmt(o, "%d %d %d %d", 1, 2, 3) == -EINVAL); /* 4 conversions, 3 args */
	CHECK(fmt(o, "trailing %", 0, 0, 0) == -EINVAL);
	/* fmt_size bounds the read: no NUL inside fmt_size -> refused. */
	const char f[] = "abc%d";
	uint64_t args[3] = {1, 2, 3};
	CHECK(ebpf_trace_format(o, 128, f, 3, args, 3) == -EINVAL);
	CHECK(ebpf_trace_format(o, 128, f, sizeof(f), args, 3) == 4 && !strcmp(o, "abc1"));
	/* Truncation to the output buffer. */
	CHECK(ebpf_trace_format(o, 4, "abcdef", 7, args, 3) == 3 && !strcmp(o, "abc"));

	const struct ebpf_helper_proto *p = ebpf_helpers_default()->by_id[6];
	CHECK(p != NULL);
	ebpf_helpers_set_logger(logger, &lines);
	const char hello[] = "hello %d\n";
	long r = (long)p->fn((uint64_t)(uintptr_t)hello, sizeof(hello), 7, 0, 0);
	CHECK(r == 7 && lines == 1 && !strcmp(last, "hello 7"));
	const char bad[] = "%s";
	CHECK((long)p->fn((uint64_t)(uintptr_t)bad, sizeof(bad), 0, 0, 0) == -EINVAL);
	CHECK(lines == 1);
	/* Burst then refusal: at most EBPF_TRACE_BURST lines pass at once. */
	int ok = 0, busy = 0;
	for (int i = 0; i < 200; i++) {
		long rc = (long)p->fn((uint64_t)(uintptr_t)hello, sizeof(hello), i, 0, 0);
		ok += rc > 0;
		busy += rc == -EBUSY;
	}
	CHECK(ok >= 1 && ok <= (int)EBPF_TRACE_BURST + 2);
	CHECK(busy >= 200 - (int)EBPF_TRACE_BURST - 2);
	CHECK(ebpf_helpers_trace_dropped() == (uint64_t)busy);
	ebpf_helpers_set_logger(NULL, NULL);
	return check_summary("helpers_trace");
}
