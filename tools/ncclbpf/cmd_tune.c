/* `ncclbpf tune SWEEP.csv... -o OUT.o`: turns benchmark sweeps (ncclbpf-gpubench --csv) into a
 * ready table-driven policy. Per (collective, ranks, size) it takes the fastest configuration
 * that computed correct results (the oracle), keeps NCCL's default where the default is within
 * the margin of it (so noise never makes the policy lose to the default), merges adjacent sizes
 * with the same choice, and writes the rows into a copy of the compiled tuned_table template.
 * The result is loaded and verified before the command reports success. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ncclbpf.h"
#include "ncclbpf/envvars.h"
#include "ebpf/object.h"
#include "ncclbpf/nccl_platform.h"
#include "self_path.h"
#include "tune.h"

/* The shipped template: $NCCLBPF_TUNE_TEMPLATE, else share/ncclbpf/policies/tuned_table.o
 * relative to this executable (self_path.h). */
static const char *default_template(char *buf, size_t len)
{
	const char *env = ncclbpf_env_str("NCCLBPF_TUNE_TEMPLATE");
	if (env)
		return env;
	if (self_path(SELF_SHARE "/policies/tuned_table.o", buf, len) != 0)
		return NULL;
	return access(buf, R_OK) == 0 ? buf : NULL;
}

/* Loads (verifies) the written object and checks that its table is the one we meant. */
static int check_written(const char *path, const struct tune_row *rows, size_t n)
{
	char err[512];
	struct ebpf_object *obj = ncclbpf_object_open_file(path, NULL, err, sizeof err);
	if (!obj) {
		fprintf(stderr, "ncclbpf tune: written %s does not open: %s\n", path, err);
		return -1;
	}
	struct ebpf_object_load_opts lo = {.sz = sizeof lo};
	int rc = ebpf_object__load(obj, &lo, err, sizeof err);
	if (rc) {
		fprintf(stderr, "ncclbpf tune: written %s is rejected: %s\n", path, err);
		ebpf_object__close(obj);
		return -1;
	}
	struct ebpf_object_map *m = ebpf_object__find_map_by_name(obj, ".data");
	size_t size = 0;
	const uint8_t *d = m ? ebpf_object_map__initial_data(m, &size) : NULL;
	uint32_t got_n = 0;
	if (d && size >= TUNED_TABLE_HDR_SIZE)
		memcpy(&got_n, d + 8, sizeof got_n);
	int ok = d && size >= TUNED_TABLE_HDR_SIZE + n * TUNED_ROW_SIZE && got_n == n;
	for (size_t i = 0; ok && i < n; i++) {
		uint64_t mb;
		memcpy(&mb, d + TUNED_TABLE_HDR_SIZE + i * TUNED_ROW_SIZE, sizeof mb);
		ok = mb == rows[i].max_bytes;
	}
	ebpf_object__close(obj);
	if (!ok) {
		fprintf(stderr, "ncclbpf tune: written %s does not hold the table\n", path);
		return -1;
	}
	return 0;
}

static void print_choices(const struct tune_choice *c, size_t n, double margin)
{
	printf("# per-size oracle (mean time per operation, us); margin %.1f%%\n", margin * 100);
	printf("%-13s %5s %11s %10s %-16s %10s %-16s %7s\n", "coll", "ranks", "bytes", "default_us",
	       "best", "best_us", "chosen", "gain");
	for (size_t i = 0; i < n; i++) {
		char b[48], ch[48], dflt[24], gain[16];
		if (c[i].default_us >= 0)
			snprintf(dflt, sizeof dflt, "%.2f", c[i].default_us);
		else
			snprintf(dflt, sizeof dflt, "-");
		if (c[i].default_us > 0 && c[i].chosen_us > 0)
			snprintf(gain, sizeof gain, "%+.1f%%",
				 (c[i].default_us / c[i].chosen_us - 1) * 100);
		else
			snprintf(gain, sizeof gain, "-");
		printf("%-13s %5u %11llu %10s %-16s %10.2f %-16s %7s\n", tune_coll_name(c[i].coll),
		       c[i].ranks, (unsigned long long)c[i].bytes, dflt,
		       tune_cfg_str(&c[i].best, b, sizeof b), c[i].best_us,
		       tune_cfg_str(&c[i].chosen, ch, sizeof ch), gain);
	}
}

static void print_rows(const struct tune_row *r, size_t n, const char *out)
{
	printf("# %s: %zu rows (first match per collective and ranks; beyond: NCCL decides)\n", out,
	       n);
	printf("%4s %-13s %5s %20s %-14s %-6s %8s\n", "row", "coll", "ranks", "max_bytes", "algo",
	       "proto", "channels");
	for (size_t i = 0; i < n; i++) {
		char ch[16], rk[16];
		snprintf(ch, sizeof ch, r[i].channels ? "%d" : "-", r[i].channels);
		snprintf(rk, sizeof rk, r[i].n_ranks ? "%u" : "any", r[i].n_ranks);
		printf("%4zu %-13s %5s %20llu %-14s %-6s %8s\n", i, tune_coll_name(r[i].coll), rk,
		       (unsigned long long)r[i].max_bytes, tune_algo_name(r[i].algo),
		       tune_proto_name(r[i].proto), ch);
	}
}

static int cmd_tune(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"output", required_argument, 0, 'o'}, {"template", required_argument, 0, 't'},
	    {"coll", required_argument, 0, 'c'},   {"margin", required_argument, 0, 'm'},
	    {"any-ranks", no_argument, 0, 'a'},	   {"quiet", no_argument, 0, 'q'},
	    {"help", no_argument, 0, 'h'},	   {0, 0, 0, 0}};
	const char *out = NULL, *tmpl = NULL;
	uint32_t coll_mask = ~0u;
	double margin = 0.02;
	int any_ranks = 0, quiet = 0, c;
	char *end;
	optind = 1;
	opterr = 0; /* one line from cli_usage_error instead of getopt's own */
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 't':
			tmpl = optarg;
			break;
		case 'c': {
			coll_mask = 0;
			char buf[256];
			snprintf(buf, sizeof buf, "%s", optarg);
			for (char *s, *t = strtok_r(buf, ",", &s); t; t = strtok_r(NULL, ",", &s)) {
				int id = tune_coll_id(t);
				if (id < 0)
					return cli_usage_error("unknown collective '%s'", t);
				coll_mask |= 1u << id;
			}
			break;
		}
		case 'm':
			errno = 0;
			margin = strtod(optarg, &end);
			if (errno || *end || !(margin >= 0 && margin < 1))
				return cli_usage_error("--margin '%s' is not a fraction in [0, 1)",
						       optarg);
			break;
		case 'a':
			any_ranks = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			return cli_usage_error("unknown option or missing value: '%s'",
					       argv[optind - 1]);
		}
	}
	if (!out)
		return cli_usage_error("-o OUT.o is needed");
	if (optind >= argc)
		return cli_usage_error("no SWEEP.csv given");
	char tbuf[PATH_MAX + 64];
	if (!tmpl && !(tmpl = default_template(tbuf, sizeof tbuf)))
		return cli_fail("no template object: pass --template tuned_table.o (built from "
				"policies/tuned_table.c)");

	struct tune_data d = {0};
	char err[1024];
	for (int i = optind; i < argc; i++)
		if (tune_read_csv(argv[i], &d, err, sizeof err)) {
			fprintf(stderr, "ncclbpf tune: %s\n", err);
			tune_data_free(&d);
			return 1;
		}
	struct tune_choice *ch = NULL;
	struct tune_row *rows = NULL;
	int rc = 1;
	int nc = tune_choose(&d, coll_mask, margin, &ch, err, sizeof err);
	if (nc < 0) {
		fprintf(stderr, "ncclbpf tune: %s\n", err);
		goto out;
	}
	if (nc == 0) {
		fprintf(stderr,
			"ncclbpf tune: no default or forced measurements%s in %d file(s) (%zu rows "
			"read)\n",
			coll_mask != ~0u ? " of the selected collectives" : "", argc - optind,
			d.rows_read);
		goto out;
	}
	if (any_ranks)
		for (int i = 1; i < nc; i++)
			if (ch[i].ranks != ch[0].ranks) {
				fprintf(stderr,
					"ncclbpf tune: --any-ranks needs one rank count; the sweep "
					"has %u and %u\n",
					ch[0].ranks, ch[i].ranks);
				goto out;
			}
	int nr = tune_rows(ch, (size_t)nc, any_ranks, &rows);
	if (nr < 0) {
		fprintf(stderr, "ncclbpf tune: out of memory\n");
		goto out;
	}
	if (tune_write_object(tmpl, out, rows, (size_t)nr, err, sizeof err)) {
		fprintf(stderr, "ncclbpf tune: %s\n", err);
		goto out;
	}
	if (check_written(out, rows, (size_t)nr)) {
		unlink(out);
		goto out;
	}
	if (!quiet)
		print_choices(ch, (size_t)nc, margin);
	print_rows(rows, (size_t)nr, out);
	printf("# %zu measurements read (%zu non-candidate rows ignored); template %s\n",
	       d.rows_read, d.rows_ignored, tmpl);
	rc = 0;
out:
	free(ch);
	free(rows);
	tune_data_free(&d);
	return rc;
}

NCCLBPF_COMMAND(
    tune_cmd, .name = "tune",
    .args = "-o OUT.o [--template T.o] [--coll LIST] [--margin F] [--any-ranks] [--quiet] "
	    "SWEEP.csv...",
    .summary = "build a table policy from ncclbpf-gpubench sweeps (per-size oracle)",
    .help = "  SWEEP.csv   ncclbpf-gpubench --csv output: rows 'default' and forced\n"
	    "              ALGO/PROTO/CHANNELS configurations (others are ignored)\n"
	    "  --template  the compiled policies/tuned_table.c (default: $NCCLBPF_TUNE_TEMPLATE,\n"
	    "              else ../share/ncclbpf/policies/tuned_table.o next to this program)\n"
	    "  --coll      collectives to tune, e.g. allreduce,allgather (default: all)\n"
	    "  --margin    keep NCCL's default where it is within this fraction of the best\n"
	    "              (default 0.02)\n"
	    "  --any-ranks rows apply to every communicator size (one rank count in the sweep)\n",
    .run = cmd_tune);
