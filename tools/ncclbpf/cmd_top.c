/* ncclbpf top: a live view of the collectives of every process on this node that runs the
 * plugin with its built-in telemetry (docs/telemetry.md), from the same inspection sockets as
 * `ncclbpf ps` (the `telemetry` request, runtime/src/inspect/inspect_telem.c). One row per process,
 * communicator and collective (its size buckets summed): collectives per second over the last
 * interval, and over that interval (or, when none ran in it, since the communicator started)
 * bus bandwidth as nccl-tests defines it, mean and 99th-percentile GPU time, the algorithm and
 * protocol used most, and the total count. The screen is redrawn in place on a terminal;
 * elsewhere (or with --json, one document per refresh) frames follow one another. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_json.h"
#include "inspect_client.h"
#include "ncclbpf/telemetry.h" /* the tables' sizes and histogram bounds, as recorded */

/* One row: a process's communicator's collective, its size buckets summed. */
struct row {
	int pid;
	char rank[32], comm[20], coll[24], mix[48];
	uint64_t count, sum_ns, mix_n;
	double bus_bytes;
	uint64_t hist[NCCLBPF_TELEM_TIMES];
	/* The same at the previous refresh (0 when the row is new). */
	uint64_t p_count, p_sum_ns;
	double p_bus_bytes;
	uint64_t p_hist[NCCLBPF_TELEM_TIMES];
	int seen; /* found at this refresh */
};

struct frame {
	struct row *r;
	int n, cap;
	const struct insp_proc *proc;
	char comm_of_slot[NCCLBPF_TELEM_COMMS][20];
};

static struct row *row_of(struct frame *f, int pid, const char *comm, const char *coll)
{
	for (int i = 0; i < f->n; i++)
		if (f->r[i].pid == pid && !strcmp(f->r[i].comm, comm) &&
		    !strcmp(f->r[i].coll, coll))
			return &f->r[i];
	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 64;
		struct row *r = realloc(f->r, (size_t)cap * sizeof(*r));
		if (!r)
			return NULL;
		f->r = r;
		f->cap = cap;
	}
	struct row *r = &f->r[f->n++];
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	snprintf(r->coll, sizeof(r->coll), "%s", coll);
	return r;
}

/* Starts a refresh: what was counted becomes the previous state. */
static void frame_rollover(struct frame *f)
{
	for (int i = 0; i < f->n; i++) {
		struct row *r = &f->r[i];
		r->p_count = r->count;
		r->p_sum_ns = r->sum_ns;
		r->p_bus_bytes = r->bus_bytes;
		memcpy(r->p_hist, r->hist, sizeof(r->hist));
		r->count = r->sum_ns = r->mix_n = 0;
		r->bus_bytes = 0;
		memset(r->hist, 0, sizeof(r->hist));
		r->mix[0] = 0;
		r->seen = 0;
	}
}

/* The most used algorithm/protocol of a "ALGO/PROTO:N,..." list, if it beats the row's. */
static void take_mix(struct row *r, const char *mix)
{
	for (const char *p = mix; p && *p;) {
		const char *colon = strchr(p, ':');
		if (!colon)
			break;
		uint64_t n = strtoull(colon + 1, NULL, 10);
		if (n > r->mix_n) {
			r->mix_n = n;
			snprintf(r->mix, sizeof(r->mix), "%.*s", (int)(colon - p), p);
		}
		p = strchr(colon, ',');
		p = p ? p + 1 : NULL;
	}
}

static void on_telem(const struct insp_rec *rec, void *arg)
{
	struct frame *f = arg;
	const char *slot_s = insp_get(rec, "slot");
	uint64_t slot = slot_s ? strtoull(slot_s, NULL, 10) : NCCLBPF_TELEM_COMMS;
	if (!strcmp(rec->word, "tcomm") && slot < NCCLBPF_TELEM_COMMS) {
		snprintf(f->comm_of_slot[slot], sizeof(f->comm_of_slot[0]), "%s",
			 insp_get(rec, "id") ? insp_get(rec, "id") : "-");
		return;
	}
	if (strcmp(rec->word, "tcell") || slot >= NCCLBPF_TELEM_COMMS || !insp_get(rec, "coll"))
		return;
	struct row *r = row_of(f, f->proc->pid, f->comm_of_slot[slot], insp_get(rec, "coll"));
	if (!r)
		return;
	snprintf(r->rank, sizeof(r->rank), "%s", f->proc->rank);
	r->seen = 1;
	r->count += insp_getu(rec, "count");
	r->sum_ns += insp_getu(rec, "sum_ns");
	const char *bf = insp_get(rec, "bus_factor");
	r->bus_bytes += (double)insp_getu(rec, "bytes") * (bf ? strtod(bf, NULL) : 0);
	const char *h = insp_get(rec, "hist");
	for (int k = 0; h && *h && k < NCCLBPF_TELEM_TIMES; k++) {
		char *end;
		r->hist[k] += strtoull(h, &end, 10);
		h = *end == ',' ? end + 1 : end;
	}
	take_mix(r, insp_get(rec, "mix"));
}

/* Asks every live process of this host for its tables. Returns how many answered. */
static int collect(const char *dir, struct frame *f)
{
	struct insp_proc *v;
	char why[1024]; /* an untrusted directory lists nothing (ncclbpf ps says why) */
	int n = insp_list(dir, &v, why, sizeof(why)), answered = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i].host, insp_hostname()) || insp_stale(&v[i]))
			continue;
		struct insp_conn c;
		char err[300];
		if (insp_connect(&v[i], &c) != 0)
			continue;
		f->proc = &v[i];
		memset(f->comm_of_slot, 0, sizeof(f->comm_of_slot));
		if (insp_request(&c, "telemetry", on_telem, f, err, sizeof(err)) == 0)
			answered++;
		insp_close(&c);
	}
	if (n > 0)
		free(v);
	return answered;
}

/* 99th percentile of a histogram, as its bucket's bound in us (">N" beyond the last bound). */
static void p99(const uint64_t *h, uint64_t n, char *out, size_t len)
{
	uint64_t cum = 0, want = n - n / 100;
	for (int k = 0; k < NCCLBPF_TELEM_TIMES; k++) {
		cum += h[k];
		if (n && cum >= want) {
			/* The last bucket has no bound: beyond the one before it. */
			uint32_t last = k + 1 == NCCLBPF_TELEM_TIMES;
			snprintf(out, len, "%s%llu", last ? ">" : "",
				 (unsigned long long)ncclbpf_telem_time_le_us((uint32_t)k - last));
			return;
		}
	}
	snprintf(out, len, "-");
}

struct view {
	double ops_s, busbw, avg_us;
	char p99[24];
};

/* The row over the last interval, or since its start when nothing ran in the interval. */
static void view_of(const struct row *r, double interval_s, int first, struct view *v)
{
	uint64_t dn = r->count - r->p_count;
	int window = !first && dn > 0;
	uint64_t n = window ? dn : r->count;
	uint64_t ns = window ? r->sum_ns - r->p_sum_ns : r->sum_ns;
	double bb = window ? r->bus_bytes - r->p_bus_bytes : r->bus_bytes;
	uint64_t h[NCCLBPF_TELEM_TIMES];
	for (int k = 0; k < NCCLBPF_TELEM_TIMES; k++)
		h[k] = window ? r->hist[k] - r->p_hist[k] : r->hist[k];
	v->ops_s = first ? -1 : (double)dn / interval_s;
	v->busbw = ns ? bb / (double)ns : 0; /* bytes per ns = GB/s */
	v->avg_us = n ? (double)ns / (double)n / 1e3 : 0;
	p99(h, n, v->p99, sizeof(v->p99));
}

/* The next row with data at or after *i (its figures in v; *i moves past it), or NULL. */
static const struct row *next_row(const struct frame *f, int *i, double interval_s, int first,
				  struct view *v)
{
	for (; *i < f->n; ++*i) {
		const struct row *r = &f->r[*i];
		if (r->seen) {
			++*i;
			view_of(r, interval_s, first, v);
			return r;
		}
	}
	return NULL;
}

static void print_text(const struct frame *f, int procs, double interval_s, int first, int tty)
{
	if (tty)
		fputs("\033[H\033[2J", stdout);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char hms[16];
	strftime(hms, sizeof(hms), "%H:%M:%SZ", &tm);
	printf("ncclbpf top: %d process%s on %s at %s, every %.1f s\n", procs,
	       procs == 1 ? "" : "es", insp_hostname(), hms, interval_s);
	printf("%-8s %-5s %-16s %-14s %9s %11s %9s %8s %-18s %s\n", "PID", "RANK", "COMM", "COLL",
	       "OPS/S", "BUSBW_GB/S", "AVG_US", "P99_US", "ALGO/PROTO", "TOTAL");
	struct view v;
	int i = 0;
	for (const struct row *r; (r = next_row(f, &i, interval_s, first, &v));) {
		char ops[24] = "-";
		if (v.ops_s >= 0)
			snprintf(ops, sizeof(ops), "%.1f", v.ops_s);
		printf("%-8d %-5s %-16s %-14s %9s %11.2f %9.1f %8s %-18s %" PRIu64 "\n", r->pid,
		       r->rank, r->comm, r->coll, ops, v.busbw, v.avg_us, v.p99,
		       r->mix[0] ? r->mix : "-", r->count);
	}
	if (!procs)
		printf("(no process with telemetry answers; NCCLBPF_TELEMETRY=1 turns it on)\n");
	fflush(stdout);
}

static void print_json(const struct frame *f, int procs, double interval_s, int first)
{
	struct json j;
	json_init(&j, stdout);
	json_obj(&j);
	json_kstr(&j, "host", insp_hostname());
	json_ku64(&j, "time_unix", (uint64_t)time(NULL));
	json_kf64(&j, "interval_s", interval_s);
	json_ku64(&j, "processes", (uint64_t)procs);
	json_key(&j, "rows");
	json_arr(&j);
	struct view v;
	int i = 0;
	for (const struct row *r; (r = next_row(f, &i, interval_s, first, &v));) {
		json_obj(&j);
		json_ku64(&j, "pid", (uint64_t)r->pid);
		json_kstr(&j, "rank", r->rank);
		json_kstr(&j, "comm", r->comm);
		json_kstr(&j, "coll", r->coll);
		if (first) {
			json_key(&j, "ops_per_s");
			json_null(&j);
		} else {
			json_kf64(&j, "ops_per_s", v.ops_s);
		}
		json_kf64(&j, "busbw_gbs", v.busbw);
		json_kf64(&j, "avg_us", v.avg_us);
		json_kstr(&j, "p99_us", v.p99);
		json_kstr(&j, "algo_proto", r->mix[0] ? r->mix : NULL);
		json_ku64(&j, "total", r->count);
		json_end(&j);
	}
	json_end(&j);
	json_end(&j);
	fflush(stdout);
}

static int cmd_top(int argc, char **argv)
{
	char dbuf[4096];
	const char *dir = NULL, *val;
	unsigned long long interval_ms = 1000, count = 0;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		int k;
		if ((k = cli_dir_opt(argc, argv, &i, &dir)) != 0) {
			if (k < 0)
				return CLI_USAGE;
		} else if ((k = cli_opt(argc, argv, &i, "--interval", &val)) != 0) {
			if (k < 0 || cli_parse_u64("--interval", val, 100, 3600000, &interval_ms))
				return CLI_USAGE;
		} else if ((k = cli_opt(argc, argv, &i, "--count", &val)) != 0) {
			if (k < 0 || cli_parse_u64("--count", val, 1, 1000000000, &count))
				return CLI_USAGE;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else {
			return cli_usage_error("unexpected argument '%s'", argv[i]);
		}
	}
	if (!dir)
		dir = insp_default_dir(dbuf, sizeof(dbuf));
	int tty = !json && isatty(STDOUT_FILENO);
	struct frame f = {0};
	double interval_s = (double)interval_ms / 1e3;
	for (unsigned long long it = 0; !count || it < count; it++) {
		if (it) {
			struct timespec ts = {(time_t)(interval_ms / 1000),
					      (long)(interval_ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
		}
		frame_rollover(&f);
		int procs = collect(dir, &f);
		if (json)
			print_json(&f, procs, interval_s, it == 0);
		else
			print_text(&f, procs, interval_s, it == 0, tty);
	}
	free(f.r);
	return CLI_OK;
}

NCCLBPF_COMMAND(top_cmd, .name = "top", .args = "[--dir DIR] [--interval MS] [--count N] [--json]",
		.summary = "live view of the collectives of this node's processes (telemetry)",
		.help = INSP_DIR_HELP
		"  --interval MS  refresh period (default 1000, 100..3600000)\n"
		"  --count N      stop after N refreshes (default: until interrupted)\n"
		"  --json         one JSON document per refresh instead of the table\n",
		.run = cmd_top);
