/* bpf_trace_printk: a rate-limited log line in the engine's own small format language.
 * Only integer conversions exist, so formatting reads nothing but fmt (within fmt_size) and the
 * three integer arguments. The limiter is a GCRA (one atomic "theoretical arrival time"), so no
 * lock and no per-thread state is needed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ebpf/helpers.h"

/* Set rarely (host start-up). A line racing with a change may pair the new function with the
 * old context only if the host changes both while programs log; hosts set it once. */
static _Atomic(ebpf_log_fn) log_fn;
static _Atomic(void *) log_ctx;
static _Atomic uint64_t tat_ns;	 /* GCRA theoretical arrival time */
static _Atomic uint64_t dropped; /* lines refused so far */
static _Atomic uint64_t reported_dropped;

void ebpf_helpers_set_logger(ebpf_log_fn fn, void *ctx)
{
	atomic_store_explicit(&log_ctx, ctx, memory_order_release);
	atomic_store_explicit(&log_fn, fn, memory_order_release);
}

uint64_t ebpf_helpers_trace_dropped(void)
{
	return atomic_load_explicit(&dropped, memory_order_relaxed);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int rate_ok(void)
{
	const uint64_t interval = 1000000000ull / EBPF_TRACE_PER_SEC;
	const uint64_t tolerance = interval * (EBPF_TRACE_BURST - 1);
	uint64_t now = now_ns();
	uint64_t tat = atomic_load_explicit(&tat_ns, memory_order_relaxed);
	for (;;) {
		uint64_t start = tat > now ? tat : now;
		if (start - now > tolerance)
			return 0;
		if (atomic_compare_exchange_weak_explicit(&tat_ns, &tat, start + interval,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return 1;
	}
}

/* Appends a formatted integer; returns the new length (may exceed cap: truncation). */
static uint32_t put_int(char *out, uint32_t len, uint32_t cap, uint64_t v, int is_signed, int hex,
			int size, uint32_t width, int zero)
{
	char buf[24];
	int n = 0, neg = 0;
	if (size == 32)
		v = is_signed ? (uint64_t)(int64_t)(int32_t)v : (uint32_t)v;
	if (is_signed && (int64_t)v < 0) {
		neg = 1;
		v = 0 - v;
	}
	do {
		unsigned d = (unsigned)(hex ? v % 16 : v % 10);
		buf[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v = hex ? v / 16 : v / 10;
	} while (v);
	uint32_t digits = (uint32_t)n + (uint32_t)neg;
	uint32_t pad = width > digits ? width - digits : 0;
	if (!zero)
		for (; pad; pad--, len++)
			if (len < cap)
				out[len] = ' ';
	if (neg && len++ < cap)
		out[len - 1] = '-';
	for (; pad; pad--, len++)
		if (len < cap)
			out[len] = '0';
	while (n--) {
		if (len < cap)
			out[len] = buf[n];
		len++;
	}
	return len;
}

int ebpf_trace_format(char *out, uint32_t out_len, const char *fmt, uint32_t fmt_size,
		      const uint64_t *args, uint32_t n_args)
{
	if (!out || !out_len || !fmt || !fmt_size)
		return -EINVAL;
	uint32_t cap = out_len - 1, len = 0, argi = 0, i = 0;
	/* Like Linux: the format must be NUL-terminated within fmt_size. */
	if (!memchr(fmt, 0, fmt_size))
		return -EINVAL;
	while (fmt[i]) {
		char c = fmt[i++];
		if (c != '%') {
			if (len < cap)
				out[len] = c;
			len++;
			continue;
		}
		if (fmt[i] == '%') {
			if (len < cap)
				out[len] = '%';
			len++;
			i++;
			continue;
		}
		int zero = 0, size = 32;
		uint32_t width = 0;
		if (fmt[i] == '0') {
			zero = 1;
			i++;
		}
		while (fmt[i] >= '0' && fmt[i] <= '9' && width < 100)
			width = width * 10 + (uint32_t)(fmt[i++] - '0');
		if (fmt[i] >= '0' && fmt[i] <= '9')
			return -EINVAL; /* width too large */
		if (fmt[i] == 'l') {
			size = 64;
			i++;
			if (fmt[i] == 'l')
				i++;
		}
		char conv = fmt[i++];
		int is_signed = conv == 'd' || conv == 'i';
		int hex = conv == 'x';
		if (!is_signed && !hex && conv != 'u')
			return -EINVAL; /* %s, %p, %c, ... are not offered */
		if (argi >= n_args)
			return -EINVAL;
		len = put_int(out, len, cap, args[argi++], is_signed, hex, size, width, zero);
	}
	out[len < cap ? len : cap] = 0;
	return (int)(len < cap ? len : cap);
}

uint64_t ebpf_helper_trace_printk(uint64_t fmt, uint64_t fmt_size, uint64_t a1, uint64_t a2,
				  uint64_t a3)
{
	char line[EBPF_TRACE_LINE_MAX];
	uint64_t args[3] = {a1, a2, a3};
	if (fmt_size == 0 || fmt_size > 0xffffffffu)
		return (uint64_t)(long)-EINVAL;
	int n = ebpf_trace_format(line, sizeof(line), (const char *)(uintptr_t)fmt,
				  (uint32_t)fmt_size, args, 3);
	if (n < 0)
		return (uint64_t)(long)n;
	if (!rate_ok()) {
		atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
		return (uint64_t)(long)-EBUSY;
	}
	/* Strip one trailing newline: the logger owns line endings. */
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = 0;
	uint64_t d = atomic_load_explicit(&dropped, memory_order_relaxed);
	uint64_t r = atomic_exchange_explicit(&reported_dropped, d, memory_order_relaxed);
	char note[EBPF_TRACE_LINE_MAX + 48];
	const char *msg = line;
	if (d > r) {
		snprintf(note, sizeof(note), "%s (%llu lines suppressed)", line,
			 (unsigned long long)(d - r));
		msg = note;
	}
	ebpf_log_fn fn = atomic_load_explicit(&log_fn, memory_order_acquire);
	if (fn)
		fn(atomic_load_explicit(&log_ctx, memory_order_acquire), msg);
	else
		fprintf(stderr, "ncclbpf: %s\n", msg);
	return (uint64_t)n;
}
