/* Helper functions a program may call, with typed prototypes for the verifier (prog.h).
 *
 * The default table holds every helper the engine implements, with Linux's ids; program types
 * narrow it to their allow-list. No helper reads or writes memory other than what its typed
 * arguments describe (map key/value of the map's sizes, a sized buffer, a ring buffer record).
 * Helpers that answer differently on different ranks (clock, random, CPU, rate-limited log,
 * ring-buffer space) carry EBPF_HELPER_RANK_LOCAL. */
#ifndef EBPF_HELPERS_H
#define EBPF_HELPERS_H

#include <stdint.h>

#include "exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Linux helper numbers. */
enum ebpf_helper_id {
	EBPF_FUNC_map_lookup_elem = 1,
	EBPF_FUNC_map_update_elem = 2,
	EBPF_FUNC_map_delete_elem = 3,
	EBPF_FUNC_ktime_get_ns = 5,
	EBPF_FUNC_trace_printk = 6,
	EBPF_FUNC_get_prandom_u32 = 7,
	EBPF_FUNC_get_smp_processor_id = 8,
	EBPF_FUNC_ringbuf_output = 130,
	EBPF_FUNC_ringbuf_reserve = 131,
	EBPF_FUNC_ringbuf_submit = 132,
	EBPF_FUNC_ringbuf_discard = 133,
};

/* All implemented helpers, indexed by id. Immutable, shared. */
const struct ebpf_helper_table *ebpf_helpers_default(void);
/* One helper's prototype, or NULL when the engine has none with that id. */
const struct ebpf_helper_proto *ebpf_helper_proto(uint32_t id);

/* Builds a table restricted to the ids listed (unknown ids are ignored). */
void ebpf_helpers_subset(struct ebpf_helper_table *out, const uint32_t *ids, uint32_t n);

/* --- bpf_trace_printk -------------------------------------------------------------------------
 * The line is formatted by the engine (format subset: %d %i %u %x %ld %li %lu %lx %lld %lli %llu
 * %llx %% with optional width/zero-fill; no %s or %p, so no memory is read beyond fmt, and only
 * within fmt_size bytes) and handed to the host's logger. Rate-limited process-wide (see
 * EBPF_TRACE_BURST / EBPF_TRACE_PER_SEC); suppressed lines are counted and reported with the
 * next line that passes. Returns the line length, -EINVAL for a bad format, -EBUSY when
 * rate-limited. Without a logger lines go to stderr with the prefix "ncclbpf: ". */
#define EBPF_TRACE_LINE_MAX 256
#define EBPF_TRACE_BURST    32u /* lines allowed at once */
#define EBPF_TRACE_PER_SEC  32u /* refill rate */

typedef void (*ebpf_log_fn)(void *ctx, const char *line);
/* Sets the logger (NULL restores stderr). Takes effect for subsequent lines. */
void ebpf_helpers_set_logger(ebpf_log_fn fn, void *ctx);
/* Lines dropped by the rate limiter so far. */
uint64_t ebpf_helpers_trace_dropped(void);

/* Formats like the helper would, without rate limiting or logging (tests, the CLI). Returns the
 * length written to out (NUL-terminated, truncated to out_len) or -EINVAL. */
int ebpf_trace_format(char *out, uint32_t out_len, const char *fmt, uint32_t fmt_size,
		      const uint64_t *args, uint32_t n_args);

#ifdef __cplusplus
}
#endif
#endif
