/* `ncclbpf tune`: benchmark sweep CSV (ncclbpf-gpubench --csv) -> per-size oracle -> table rows
 * -> a tuned_table policy object. Split so each step is testable on its own: tune_sweep.c reads
 * the CSV and computes choices and rows, tune_elf.c writes rows into a template object. */
#ifndef NCCLBPF_TUNE_H
#define NCCLBPF_TUNE_H

#include <stddef.h>
#include <stdint.h>

/* Layout of policies/tuned_table.c's global `tuned` (its .data section). */
#define TUNED_TABLE_MAGIC    0x31656c6261546e54ULL /* "TnTable1" */
#define TUNED_TABLE_HDR_SIZE 16u
#define TUNED_ROW_SIZE	     32u

struct tune_row {
	uint64_t max_bytes;
	uint32_t coll;	  /* NCCLBPF_COLL_* */
	uint32_t n_ranks; /* 0: any */
	int32_t algo;	  /* -1: NCCL's choice */
	int32_t proto;	  /* -1: NCCL's choice */
	int32_t channels; /* 0: NCCL's count */
};

/* One configuration of a sweep: NCCL's default (is_default) or forced values, -1 / 0 where a
 * dimension was not forced. */
struct tune_cfg {
	int is_default;
	int32_t algo, proto, channels;
};

/* All measurements of one (collective, ranks, bytes, configuration), averaged over the rows
 * (files, repeated runs) that report it. */
struct tune_point {
	uint32_t coll, ranks;
	uint64_t bytes;
	struct tune_cfg cfg;
	double time_sum, busbw_sum;
	uint32_t n;
	uint64_t wrong;
};

struct tune_data {
	struct tune_point *pts;
	size_t n, cap;
	size_t rows_read, rows_ignored; /* ignored: configurations that are not default/forced */
};

/* The decision for one (collective, ranks, bytes). */
struct tune_choice {
	uint32_t coll, ranks;
	uint64_t bytes;
	struct tune_cfg chosen, best;
	double chosen_us, best_us, default_us; /* default_us < 0: no default measured */
};

/* Reads one CSV file into d (appending). Returns 0, or -1 with err = "FILE:LINE: reason". */
int tune_read_csv(const char *path, struct tune_data *d, char *err, size_t err_len);
void tune_data_free(struct tune_data *d);

/* Per (coll, ranks, bytes) present in d and allowed by coll_mask (bit per NCCLBPF_COLL_*):
 * the fastest error-free configuration, replaced by NCCL's default when the default's mean
 * time is within (1 + margin) of the best. Sorted by coll, ranks, bytes. Returns the count
 * (*out malloc'ed), or -1 with err. */
int tune_choose(const struct tune_data *d, uint32_t coll_mask, double margin,
		struct tune_choice **out, char *err, size_t err_len);

/* Table rows from sorted choices: each measured size's choice covers sizes up to the geometric
 * mean of it and the next measured size (the last one up to itself); adjacent rows with equal
 * outputs merge; trailing default rows of a (coll, ranks) are dropped (beyond the table NCCL
 * decides anyway). any_ranks writes n_ranks 0. Returns the row count (*out malloc'ed). */
int tune_rows(const struct tune_choice *c, size_t n, int any_ranks, struct tune_row **out);

/* Writes rows into a copy of the template object (policies/tuned_table.o) at out_path. Checks
 * that the template's .data section has the tuned table's magic, row size and room for n rows.
 * Returns 0, or -1 with err. */
int tune_write_object(const char *template_path, const char *out_path, const struct tune_row *rows,
		      size_t n, char *err, size_t err_len);

/* Names: "allreduce" <-> NCCLBPF_COLL_ALLREDUCE, "ring" <-> NCCLBPF_ALGO_RING, "ll128" ... */
int tune_coll_id(const char *name);
const char *tune_coll_name(uint32_t id);
const char *tune_algo_name(int32_t id);	 /* "-" for -1 */
const char *tune_proto_name(int32_t id); /* "-" for -1 */
/* "default" or "ring/ll/2" ("-" for a dimension left to NCCL) into buf. */
const char *tune_cfg_str(const struct tune_cfg *c, char *buf, size_t len);

#endif
