/* The parts of ncclbpf-gpubench that need neither CUDA nor NCCL: options, data types and their
 * exact test values, size/count rules, statistics over repetitions, the plugin-trace reader that
 * says which algorithm/protocol/channels NCCL used, and the text/CSV row formats. Kept apart so
 * that tests/gpubench checks them on machines without a GPU. */
#ifndef GPUBENCH_UTIL_H
#define GPUBENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum gb_op { GB_ALLREDUCE, GB_ALLGATHER, GB_REDUCESCATTER, GB_BROADCAST, GB_NOPS };
extern const char *const gb_op_names[GB_NOPS];
/* NCCLBPF_COLL_* / ncclFunc_t ids of the ops (what the plugin's trace records as coll=). */
extern const int gb_op_coll[GB_NOPS];

enum gb_kind { GB_SIGNED, GB_UNSIGNED, GB_HALF, GB_BF16, GB_FLOAT, GB_DOUBLE };
struct gb_type {
	const char *name;
	int nccl; /* ncclDataType_t value (NCCL's ABI numbers) */
	size_t size;
	enum gb_kind kind;
};
const struct gb_type *gb_type_by_name(const char *name);

#define GB_MAX_RANKS 64

struct gb_opts {
	int nranks;
	int ops[GB_NOPS];
	size_t min_bytes, max_bytes;
	unsigned factor; /* size step: multiply by this */
	int iters, warmup, reps;
	int check, in_place;
	const struct gb_type *type;
	const char *plugin; /* NCCL_TUNER_PLUGIN, NULL: leave the environment alone */
	const char *policy; /* NCCLBPF_POLICY */
	int no_plugin;
	int algo, proto, channels; /* forced (NCCLBPF_ALGO_*, _PROTO_*, 1..64); -1/-1/0 none */
	int env_forced;		   /* NCCL_ALGO/PROTO/M*_NCHANNELS set outside our options */
	const char *csv;
	int timeout_s; /* 0: none */
	int target_ms; /* > 0: per size, as many iterations (up to iters) as fit this time */
	int hold_s;    /* > 0: wait this long before destroying the communicator */
	/* --split: every rank also belongs to a second communicator, ncclCommSplit of the first
	 * by rank parity; each size runs on both, interleaved (a rank of two communicators whose
	 * calls interleave as in tensor plus data parallelism). Rows are the first's. */
	int split;
	/* --ab BASE,TEST: per repetition, a block with each bundle (order alternating), switched
	 * in the running job by hot reload (ab_swap.h); NULL: off. */
	char ab_base[1024], ab_test[1024];
};

/* Parses argv into o (defaults first). 0: run; 1: help printed to out; -1: err filled. The
 * environment is read for env_forced only. */
int gb_parse_args(int argc, char **argv, struct gb_opts *o, char *err, size_t err_len);
void gb_usage(FILE *out);
/* "8", "1K", "64M", "1G" -> bytes; -1 when malformed. */
int gb_parse_size(const char *s, size_t *out);

/* NAME=VALUE settings the forced configuration puts into the ranks' environment (NCCL_ALGO,
 * NCCL_PROTO, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS). Returns the count (<= 4). */
int gb_forced_env(const struct gb_opts *o, const char *names[4], char values[4][32]);

/* The configuration's CSV label: "default", "ring/ll/2" (forced, '-' where not), with
 * "policy:NAME" and "env:" prefixes when a policy / outside NCCL settings are involved. */
const char *gb_config_label(const struct gb_opts *o, char *buf, size_t len);
const char *gb_algo_name(int id);  /* "tree", "ring", ..., "-" */
const char *gb_proto_name(int id); /* "ll", "ll128", "simple", "-" */

/* Element counts for one size, nccl-tests style: size is the largest buffer in bytes (AG
 * output, RS input), a multiple of nranks elements for AG/RS. */
void gb_counts(enum gb_op op, size_t bytes, int nranks, size_t type_size, size_t *send,
	       size_t *recv, size_t *size);
double gb_bus_factor(enum gb_op op, int nranks);
/* --target-ms: iterations for one size from the time of one (warm) operation, so that
 * iters x reps x op_us stays near target_ms: between min(2, max_iters) and max_iters; max_iters
 * when target_ms <= 0 or op_us is not positive. Every rank must pass the same op_us (gpubench
 * takes the maximum over ranks), or the ranks would run different numbers of collectives. */
int gb_adapt_iters(double op_us, int target_ms, int reps, int max_iters);
/* Next size of the sweep, 0 when past max (or on overflow). */
size_t gb_next_size(size_t bytes, unsigned factor, size_t max);

/* Exact test data: small integers (1..7) whose sums stay exact in every type (bfloat16 up to 36
 * ranks); integer types wrap as the GPU does. */
int gb_input_value(int rank, size_t i);
double gb_expected(enum gb_op op, const struct gb_type *t, int rank, int nranks, size_t i,
		   size_t recv);
void gb_store(const struct gb_type *t, void *buf, size_t i, double v);
double gb_load(const struct gb_type *t, const void *buf, size_t i);

struct gb_stats {
	double mean, min, max, sd; /* sd: sample standard deviation, 0 for one value */
};
void gb_stats_of(const double *v, int n, struct gb_stats *s);

/* What NCCL used according to the plugin trace's call records (runtime/include/ncclbpf/trace.h):
 * algo=A proto=P ch=H per call. */
struct gb_decision {
	unsigned calls;
	int algo, proto, ch;
	int algo_mixed, proto_mixed, ch_mixed;
};
void gb_decision_reset(struct gb_decision *d);
/* Counts line if it is a call record (of process pid when pid > 0). Returns 1 if counted. */
int gb_decision_add_line(struct gb_decision *d, const char *line, long pid);
/* Field strings for output: the trace's value, else the forced one, else "-"; "mixed" when
 * calls disagreed. ch 0 in the trace means NCCL's own count ("-" unless forced). */
void gb_decision_strings(const struct gb_decision *d, const struct gb_opts *o, char algo[16],
			 char proto[16], char ch[16]);

/* --ab per size: medians over the repetitions, and the median (quartiles) of the per-repetition
 * ratio test/base, each ratio taken from two adjacent blocks of the same job. */
struct gb_ab {
	int n;
	double base_us, test_us;
	double ratio, q1, q3;
	/* distribution-free ~95 % confidence interval of the median ratio (order statistics;
	 * n >= 6, else the whole range) */
	double ci_lo, ci_hi;
};
/* Sorts copies; base[i] and test[i] are the blocks of repetition i. n <= 1000. */
void gb_ab_stats(const double *base, const double *test, int n, struct gb_ab *out);

struct gb_row {
	enum gb_op op;
	size_t size, count;
	int iters;		 /* iterations per repetition for this size (0: o->iters) */
	struct gb_stats time_us; /* with --ab: of the base blocks */
	struct gb_ab ab;	 /* with --ab */
	unsigned long long wrong;
	char algo[16], proto[16], ch[16];
};
void gb_print_header(FILE *f, const struct gb_opts *o, enum gb_op op, int ngpus);
void gb_print_row(FILE *f, const struct gb_opts *o, const struct gb_row *r);
/* With --ab: one "# ab ..." line for the row. */
void gb_print_ab(FILE *f, const struct gb_opts *o, const struct gb_row *r);
/* The CSV columns and their meaning: docs/tuning.md ("The CSV"), the one definition. */
extern const char gb_csv_header[];
void gb_print_csv_row(FILE *f, const struct gb_opts *o, const struct gb_row *r);

#endif
