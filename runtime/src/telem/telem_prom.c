/* Prometheus text exposition format (version 0.0.4) of the telemetry: the built-in families of
 * telem_metrics.h. Each family's lines are one group (HELP,
 * TYPE, samples), as the format requires. Runs on the exporter thread; reads the tables with
 * relaxed loads (a series may be one collective behind another, never torn). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "ebpf/epoch.h"
#include "telem_internal.h"
#include "telem_metrics.h"

struct telem_stats telem_stats;
const char *const telem_out_names[3] = {"textfile", "jsonl", "http"};

static const struct {
	const char *name, *type, *help;
} families[TELEM_M_COUNT] = {
#define TELEM_ROW(id, n, t, h) [TELEM_M_##id] = {n, t, h},
    TELEM_METRICS(TELEM_ROW)
#undef TELEM_ROW
};

static void family(struct tbuf *b, enum telem_metric_id id)
{
	telem_prom_family(b, families[id].name, families[id].type, families[id].help);
}

static void comm_labels(struct tbuf *b, const struct ncclbpf_telem_comm *t)
{
	telem_prom_base_labels(b);
	tb_printf(b, ",comm=\"%016llx\",comm_name=\"", (unsigned long long)t->comm_id);
	tb_escaped(b, t->name);
	tb_printf(b, "\",comm_size=\"%u\",comm_rank=\"%u\",n_nodes=\"%u\"", t->n_ranks, t->rank,
		  t->n_nodes);
}

static void cell_labels(struct tbuf *b, const struct ncclbpf_telem_comm *t, uint32_t coll,
			uint32_t size)
{
	comm_labels(b, t);
	tb_printf(b, ",coll=\"%s\",size=\"%llu\"", ncclbpf_telem_coll_name(coll), 1ull << size);
}

/* A cell's histogram, read once: its buckets, count and sum agree within one render. */
struct cell_snap {
	uint64_t hist[NCCLBPF_TELEM_TIMES];
	uint64_t n;
};

/* Calls fn for every cell with collectives in it; a slot taken by another communicator
 * meanwhile is left out of this family (its lines would mix two communicators' labels). */
typedef void (*cell_fn)(struct tbuf *b, const struct ncclbpf_telem_comm *t, uint32_t coll,
			uint32_t size, const struct ncclbpf_telem_cell *c,
			const struct cell_snap *s);
static void each_cell(struct tbuf *b, cell_fn fn)
{
	for (int i = 0; i < NCCLBPF_TELEM_COMMS; i++) {
		const struct ncclbpf_telem_comm *t = &telem_slots[i];
		uint32_t gen;
		if (!telem_slot_shown(t, &gen))
			continue;
		size_t mark = b->len; /* a line boundary: every sample ends its line */
		for (uint32_t coll = 0; coll < NCCLBPF_TELEM_COLLS; coll++)
			for (uint32_t size = 0; size < NCCLBPF_TELEM_SIZES; size++) {
				const struct ncclbpf_telem_cell *c = &t->cells[coll][size];
				struct cell_snap s;
				s.n = telem_cell_hist(c, s.hist);
				if (s.n)
					fn(b, t, coll, size, c, &s);
			}
		if (!telem_slot_same(t, gen))
			b->len = b->line = mark;
	}
}

static void exec_hist(struct tbuf *b, const struct ncclbpf_telem_comm *t, uint32_t coll,
		      uint32_t size, const struct ncclbpf_telem_cell *c, const struct cell_snap *s)
{
	uint64_t cum = 0;
	for (uint32_t k = 0; k < NCCLBPF_TELEM_TIMES; k++) {
		cum += s->hist[k];
		tb_puts(b, "ncclbpf_coll_exec_seconds_bucket{");
		cell_labels(b, t, coll, size);
		if (k + 1 < NCCLBPF_TELEM_TIMES)
			tb_printf(b, ",le=\"%.6f\"} %llu",
				  (double)ncclbpf_telem_time_le_us(k) / 1e6,
				  (unsigned long long)cum);
		else
			tb_printf(b, ",le=\"+Inf\"} %llu", (unsigned long long)cum);
		tb_eol(b);
	}
	tb_puts(b, "ncclbpf_coll_exec_seconds_sum{");
	cell_labels(b, t, coll, size);
	tb_printf(b, "} %.9f", (double)telem_ld(&c->sum_ns) / 1e9);
	tb_eol(b);
	tb_puts(b, "ncclbpf_coll_exec_seconds_count{");
	cell_labels(b, t, coll, size);
	tb_printf(b, "} %llu", (unsigned long long)s->n);
	tb_eol(b);
}

static void sample_u(struct tbuf *b, const char *name, const struct ncclbpf_telem_comm *t,
		     uint32_t coll, uint32_t size, uint64_t v)
{
	tb_printf(b, "%s{", name);
	cell_labels(b, t, coll, size);
	tb_printf(b, "} %llu", (unsigned long long)v);
	tb_eol(b);
}

static void sample_f(struct tbuf *b, const char *name, const struct ncclbpf_telem_comm *t,
		     uint32_t coll, uint32_t size, double v)
{
	tb_printf(b, "%s{", name);
	cell_labels(b, t, coll, size);
	tb_printf(b, "} %.6f", v);
	tb_eol(b);
}

static void bytes(struct tbuf *b, const struct ncclbpf_telem_comm *t, uint32_t coll, uint32_t size,
		  const struct ncclbpf_telem_cell *c, const struct cell_snap *s)
{
	sample_u(b, families[TELEM_M_COLL_BYTES].name, t, coll, size, telem_ld(&c->bytes));
}

static void bus_bytes(struct tbuf *b, const struct ncclbpf_telem_comm *t, uint32_t coll,
		      uint32_t size, const struct ncclbpf_telem_cell *c, const struct cell_snap *s)
{
	double f = ncclbpf_telem_bus_factor(coll, t->n_ranks);
	sample_u(b, families[TELEM_M_COLL_BUS_BYTES].name, t, coll, size,
		 (uint64_t)((double)telem_ld(&c->bytes) * f + 0.5));
}

static double gbps(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes / (double)ns : 0; /* bytes per ns = GB/s */
}

static void algbw(struct tbuf *b, const struct ncclbpf_telem_comm *t, uint32_t coll, uint32_t size,
		  const struct ncclbpf_telem_cell *c, const struct cell_snap *s)
{
	sample_f(b, families[TELEM_M_COLL_ALGBW].name, t, coll, size,
		 gbps(telem_ld(&c->bytes), telem_ld(&c->sum_ns)));
}

static void busbw(struct tbuf *b, const struct ncclbpf_telem_comm *t, uint32_t coll, uint32_t size,
		  const struct ncclbpf_telem_cell *c, const struct cell_snap *s)
{
	sample_f(b, families[TELEM_M_COLL_BUSBW].name, t, coll, size,
		 gbps(telem_ld(&c->bytes), telem_ld(&c->sum_ns)) *
		     ncclbpf_telem_bus_factor(coll, t->n_ranks));
}

static void algo_mix(struct tbuf *b, const struct ncclbpf_telem_comm *t, uint32_t coll,
		     uint32_t size, const struct ncclbpf_telem_cell *c, const struct cell_snap *s)
{
	for (uint32_t m = 0; m < NCCLBPF_TELEM_MIX; m++) {
		uint64_t v = telem_ld(&c->mix[m]);
		if (!v)
			continue;
		tb_printf(b, "%s{", families[TELEM_M_COLL_ALGO].name);
		cell_labels(b, t, coll, size);
		tb_printf(b, ",algo=\"%s\",proto=\"%s\"} %llu",
			  ncclbpf_telem_algo_name(telem_mix_algo(m)),
			  ncclbpf_telem_proto_name(telem_mix_proto(m)), (unsigned long long)v);
		tb_eol(b);
	}
}

static void process_sample(struct tbuf *b, enum telem_metric_id id, const char *extra, uint64_t v)
{
	tb_printf(b, "%s{", families[id].name);
	telem_prom_base_labels(b);
	tb_printf(b, "%s} %llu", extra, (unsigned long long)v);
	tb_eol(b);
}

static void runtime_families(struct tbuf *b)
{
	family(b, TELEM_M_PROCESS_INFO);
	process_sample(b, TELEM_M_PROCESS_INFO, "", 1);

	family(b, TELEM_M_TELEM_COMMS);
	process_sample(b, TELEM_M_TELEM_COMMS, "", telem_live_comms());
	family(b, TELEM_M_TELEM_OVERFLOW);
	process_sample(b, TELEM_M_TELEM_OVERFLOW, "", atomic_load(&telem_overflow));
	family(b, TELEM_M_JSONL_RECORDS);
	process_sample(b, TELEM_M_JSONL_RECORDS, "", atomic_load(&telem_stats.jsonl_records));
	family(b, TELEM_M_JSONL_DROPPED);
	process_sample(b, TELEM_M_JSONL_DROPPED, "", atomic_load(&telem_jsonl_dropped));
	family(b, TELEM_M_EXPORT_ERRORS);
	for (int o = 0; o < 3; o++) {
		char extra[48];
		snprintf(extra, sizeof(extra), ",output=\"%s\"", telem_out_names[o]);
		process_sample(b, TELEM_M_EXPORT_ERRORS, extra,
			       atomic_load(&telem_stats.errors[o]));
	}
	family(b, TELEM_M_EXPORT_TRUNC);
	process_sample(b, TELEM_M_EXPORT_TRUNC, "", atomic_load(&telem_stats.truncated));

	/* From the process's record (base): the active version and the reload counts. */
	ebpf_epoch_enter();
	const struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE);
	uint64_t version = p ? p->hot.version : 0;
	ebpf_epoch_exit();
	family(b, TELEM_M_POLICY_VERSION);
	process_sample(b, TELEM_M_POLICY_VERSION, "", version);
	family(b, TELEM_M_POLICY_RELOADS);
	process_sample(b, TELEM_M_POLICY_RELOADS, ",result=\"ok\"", atomic_load(&rt.reloads_ok));
	process_sample(b, TELEM_M_POLICY_RELOADS, ",result=\"failed\"",
		       atomic_load(&rt.reloads_failed));
}

/* The active policy's identity and exported maps, while it cannot be retired. */
static void policy_families(struct tbuf *b)
{
	pthread_mutex_lock(&rt.reload_lock);
	const struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_SEQ_CST);
	family(b, TELEM_M_POLICY_INFO);
	if (p) {
		const char *slash = strrchr(p->name, '/');
		tb_printf(b, "%s{", families[TELEM_M_POLICY_INFO].name);
		telem_prom_base_labels(b);
		tb_puts(b, ",bundle=\"");
		tb_escaped(b, slash ? slash + 1 : p->name);
		tb_printf(b, "\",version=\"%llu\",hash=\"%016llx\"} 1",
			  (unsigned long long)p->hot.version, (unsigned long long)p->hash);
		tb_eol(b);
	}
	telem_prom_maps(b, p);
	pthread_mutex_unlock(&rt.reload_lock);
}

void telem_prom_render(struct tbuf *b)
{
	runtime_families(b);
	policy_families(b);
	static const struct {
		enum telem_metric_id id;
		cell_fn fn;
	} cells[] = {
	    {TELEM_M_COLL_EXEC, exec_hist},	 {TELEM_M_COLL_BYTES, bytes},
	    {TELEM_M_COLL_BUS_BYTES, bus_bytes}, {TELEM_M_COLL_ALGBW, algbw},
	    {TELEM_M_COLL_BUSBW, busbw},	 {TELEM_M_COLL_ALGO, algo_mix},
	};
	for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		family(b, cells[i].id);
		each_cell(b, cells[i].fn);
	}
}
