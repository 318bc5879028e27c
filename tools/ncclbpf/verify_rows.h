/* `ncclbpf verify`'s results, one row per program (veristat's model): what the verifier said
 * about each program of each object, written as a table, CSV or JSON, and read back from CSV so
 * that two runs (before and after a change) can be compared. */
#ifndef NCCLBPF_VERIFY_ROWS_H
#define NCCLBPF_VERIFY_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_json.h"

struct vrow {
	char *file;    /* as given on the command line */
	char *program; /* "-" for a refusal of the whole object (a limit) */
	char *section; /* "-" likewise */
	int accepted;  /* 0: rejected */
	uint64_t insns, processed, peak_states, worst_case, budget;
	double time_us;
	char *ctx_read; /* field names separated by spaces ("" none); "duration_ns/N": sampled */
	char *error;	/* the reason of a rejection, NULL when accepted */
};

struct vrows {
	struct vrow *v;
	size_t n, cap;
};

/* Appends a row (strings copied; NULL error when accepted). 0 or -1 (out of memory). */
int vrows_add(struct vrows *rs, const struct vrow *r);
void vrows_free(struct vrows *rs);

/* The file's name without its directories: rows of two runs match by it and the program. */
const char *vrow_base(const struct vrow *r);

enum vformat { VF_TABLE, VF_CSV, VF_JSON };

void vrows_print_table(const struct vrows *rs, FILE *f);
void vrows_print_csv(const struct vrows *rs, FILE *f);
/* The "programs" array of one object's JSON (rows of file only). */
void vrows_json_programs(const struct vrows *rs, const char *file, struct json *j);

/* Reads a CSV written by vrows_print_csv. 0, or -1 with the reason (naming path and line) in
 * err. */
int vrows_read_csv(const char *path, struct vrows *rs, char *err, size_t err_len);

/* Before/after: one row per program in either run (matched by file name and program), with
 * both values and the difference. */
void vrows_compare(const struct vrows *a, const struct vrows *b, enum vformat fmt, FILE *f);

#endif
