/* Telemetry, shared by its files: the slot table and the JSON-lines queue (telem_store.c), the
 * configuration (telem_config.c), a bounded text buffer (telem_buf.c), the Prometheus text
 * (telem_prom.c), JSON lines (telem_json.c), and the exporter thread with its outputs
 * (telem_export.c, telem_http.c). */
#ifndef NCCLBPF_TELEM_INTERNAL_H
#define NCCLBPF_TELEM_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ncclbpf/telemetry.h"
#include "base/rt_internal.h"
#include "telem.h"

/* --- Algorithm/protocol cells (ncclbpf_telem_cell.mix): the one encoding, for the recorder
 * and every reader. A pair's cell is algo x NCCLBPF_NUM_PROTOS + proto; the last cell counts
 * the collectives whose pair is unknown. --------------------------------------------------- */
_Static_assert(NCCLBPF_TELEM_MIX == NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS + 1,
	       "one mix cell per NCCL algorithm and protocol, and one for unknown");
static inline uint32_t telem_mix_cell(int32_t algo, int32_t proto)
{
	return (uint32_t)algo < NCCLBPF_NUM_ALGOS && (uint32_t)proto < NCCLBPF_NUM_PROTOS
		   ? (uint32_t)algo * NCCLBPF_NUM_PROTOS + (uint32_t)proto
		   : NCCLBPF_TELEM_MIX - 1;
}
/* The algorithm and the protocol a cell counts (-1: the unknown cell). */
static inline int32_t telem_mix_algo(uint32_t m)
{
	return m < NCCLBPF_TELEM_MIX - 1 ? (int32_t)(m / NCCLBPF_NUM_PROTOS) : -1;
}
static inline int32_t telem_mix_proto(uint32_t m)
{
	return m < NCCLBPF_TELEM_MIX - 1 ? (int32_t)(m % NCCLBPF_NUM_PROTOS) : -1;
}

/* --- Configuration (telem_config.c: the only telemetry file reading the environment) ------ */
struct telem_config {
	int enabled;		   /* the built-in tables are kept */
	char prom_dir[4096];	   /* node_exporter textfile directory, "" when off */
	uint64_t prom_interval_ms; /* textfile rewrite period */
	uint32_t prom_port;	   /* HTTP /metrics on 127.0.0.1:port+local rank, 0 when off */
	char jsonl_dir[4096];	   /* JSON lines directory, "" when off */
	uint64_t jsonl_every;	   /* one collective in N per communicator */
	uint64_t jsonl_min_bytes;  /* collectives smaller than this are not written */
	uint64_t max_bytes;	   /* largest Prometheus text (the render buffer) */
	struct rt_ident id;	   /* every series' labels: the job's host, job id, ranks, GPU */
};
extern struct telem_config telem_cfg;
/* Reads the environment into telem_cfg (at the runtime's first acquire). */
void telem_config_read(void);
/* The port a process binds: NCCLBPF_PROM_PORT plus its local rank (0 when unknown). */
uint32_t telem_config_port(void);

/* --- Slots and the JSON-lines queue (telem_store.c) -------------------------------------- */
extern struct ncclbpf_telem_comm telem_slots[NCCLBPF_TELEM_COMMS];
extern _Atomic uint64_t telem_overflow; /* communicators that found no free slot */
/* Frees CLOSED slots (the exporter calls it after writing them a last time). */
void telem_release_closed(void);
/* What every reader (Prometheus text, inspection) goes by: a slot is shown while LIVE or
 * CLOSED (its state is returned, FREE otherwise); communicators tracked are the LIVE ones.
 * A CLOSED slot can be freed or taken by a new communicator while it is read: *gen is its
 * generation, and what was read belongs to one communicator only when telem_slot_same(t, gen)
 * still holds after the read (else the reader drops it). */
uint32_t telem_slot_shown(const struct ncclbpf_telem_comm *t, uint32_t *gen);
int telem_slot_same(const struct ncclbpf_telem_comm *t, uint32_t gen);
uint64_t telem_live_comms(void);
/* A table counter, read as it is written (relaxed: a reader may be one collective behind). */
static inline uint64_t telem_ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}
/* A cell's histogram read once into hist; returns its collectives (the buckets' sum). */
static inline uint64_t telem_cell_hist(const struct ncclbpf_telem_cell *c,
				       uint64_t hist[NCCLBPF_TELEM_TIMES])
{
	uint64_t n = 0;
	for (int k = 0; k < NCCLBPF_TELEM_TIMES; k++)
		n += hist[k] = telem_ld(&c->hist[k]);
	return n;
}
void telem_store_reset(void); /* every slot freed, counters zeroed (tests) */

/* One sampled collective, self-contained (its slot may be reused before it is written). */
struct telem_jrec {
	uint64_t comm_id, seq, msg_bytes, gpu_start, gpu_end, longest_ch_ns, unix_ns;
	uint32_t rank, n_ranks, n_nodes, slot;
	uint8_t coll, n_channels;
	int8_t algo, proto;
	uint32_t _pad;
};
/* Takes the oldest queued record: 1, or 0 when the queue is empty. Single consumer. */
int telem_jsonl_pop(struct telem_jrec *out);
extern _Atomic uint64_t telem_jsonl_dropped; /* records not queued: queue full */
extern _Atomic int telem_jsonl_on;	     /* records are queued (set by the exporter) */

/* --- Bounded text buffer (telem_buf.c) ---------------------------------------------------- */
struct tbuf {
	char *p;
	size_t len, cap;
	int full;    /* something did not fit: the rest was dropped at a line boundary */
	size_t line; /* start of the current line, for dropping a partial one */
};
void tb_printf(struct tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tb_vprintf(struct tbuf *b, const char *fmt, va_list ap);
void tb_puts(struct tbuf *b, const char *s);
/* A Prometheus label value or JSON string body: \, " and newlines escaped, control bytes as
 * '?', so that the output stays one line and valid. */
void tb_escaped(struct tbuf *b, const char *s);
/* Ends a line ('\n'); when anything of it did not fit, the whole line is dropped instead. */
void tb_eol(struct tbuf *b);

/* --- Prometheus text (telem_prom.c, its shared parts in telem_prom_parts.c) ---------------- */
/* Renders every family (built-in tables, runtime state) into b. */
void telem_prom_render(struct tbuf *b);
/* The labels every series carries (job_id, node, rank, local_rank, gpu, pid), no braces. */
void telem_prom_base_labels(struct tbuf *b);
/* "# HELP" and "# TYPE" lines of a family. */
void telem_prom_family(struct tbuf *b, const char *name, const char *type, const char *help);

/* --- Policy maps exported as metrics (telem_maps.c) -------------------------------------- */
/* The exported maps of policy p (callers hold rt.reload_lock). */
void telem_prom_maps(struct tbuf *b, const struct rt_policy *p);

/* The exporter's own counters (telem_export.c), rendered with the rest. */
struct telem_stats {
	_Atomic uint64_t jsonl_records, truncated;
	_Atomic uint64_t errors[3]; /* TELEM_OUT_* */
};
enum { TELEM_OUT_TEXTFILE, TELEM_OUT_JSONL, TELEM_OUT_HTTP };
extern struct telem_stats telem_stats;
extern const char *const telem_out_names[3];

/* --- JSON lines (telem_json.c) ------------------------------------------------------------ */
/* One record as one JSON object and '\n'. */
void telem_json_record(struct tbuf *b, const struct telem_jrec *r);

/* --- Rate-limited warnings (telem_export.c) ----------------------------------------------- */
/* One WARN per output when it starts failing; INFO when it works again; a new failure WARNs
 * again only after 10 minutes. Returns 1 when this call logged. */
struct telem_fail {
	int failing;
	uint64_t warned_ns;
	uint64_t errors;
};
int telem_fail_note(struct telem_fail *f, const char *what, int err, const char *why);
void telem_fail_ok(struct telem_fail *f, const char *what);

#endif
