/* `ncclbpf verify [OPTIONS] FILE.o...`: runs the static verifier over every program of each
 * policy object exactly as loading does (ebpf_object__verify: the same rounds, the same maps
 * rank-local) and prints one row per program, veristat's way: verdict, length, instructions the
 * analysis visited, peak stored states, the worst-case path against the hook's budget, time, and
 * the context fields the program may read. As the plugin does before verifying anything, each
 * bundle's structure (served sections, one program per hook) and limits (map memory, ring
 * buffers, programs, instructions) are checked first. Rejections go to stderr, one line each
 * naming the file and program; the table (or -o csv|json) to stdout. --compare BEFORE AFTER
 * compares two runs (objects, directories of objects, or CSV files of `-o csv`) program by
 * program. Exit status: 0 every program accepted, 1 a program rejected or an object that does
 * not load, 2 usage error. */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_json.h"
#include "ebpf/object.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/nccl_platform.h"
#include "plugin_host.h"
#include "verify_rows.h"

#define LOG_SIZE (16u << 20)

struct verify_opts {
	const char *only; /* --prog */
	int log;	  /* --log */
	int quiet;	  /* no bundle lines (--compare) */
	uint32_t flags;	  /* EBPF_VERIFY_F_* */
	enum vformat fmt;
};

/* One object's verification. */
struct verify_run {
	const struct verify_opts *o;
	const char *file;
	const char *log; /* the verifier log buffer (NULL without --log) */
	struct vrows *rows;
	int matched, rejected;
};

/* The context fields the program may read, space-separated; a sampled completion's duration_ns
 * as "duration_ns/N" (one request in N per connection is timed). */
static void reads_text(const struct ebpf_prog_type *t, uint64_t reads, uint32_t every, char *buf,
		       size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (uint32_t i = 0; t && i < t->n_fields && n < len; i++)
		if (reads & (1ull << (i < 63 ? i : 63))) {
			const char *f = t->fields[i].name;
			int sampled = every > 1 && !strcmp(f, "duration_ns");
			n += (size_t)snprintf(buf + n, len - n, sampled ? "%s%s/%u" : "%s%s",
					      n ? " " : "", f, every);
		}
}

static void report(void *arg, struct ebpf_program *p, int rc, const char *msg)
{
	struct verify_run *v = arg;
	const struct ebpf_verify_stats *st = ebpf_program__verify_stats(p);
	const char *name = ebpf_program__name(p), *sec = ebpf_program__section(p);
	char reads[1024];

	if (v->o->only && strcmp(v->o->only, name) && strcmp(v->o->only, sec))
		return;
	v->matched++;
	if (v->log && v->log[0] && v->o->fmt == VF_TABLE)
		printf("--- %s: %s (%s) verifier log ---\n%s--- end of log ---\n", v->file, name,
		       sec, v->log);
	uint32_t every = 0; /* the section is served: checked before */
	ncclbpf_rt_section_served(sec, &every, NULL, 0);
	reads_text(ebpf_program__type(p), st->ctx_read, every, reads, sizeof(reads));
	struct vrow r = {.file = (char *)v->file,
			 .program = (char *)name,
			 .section = (char *)sec,
			 .accepted = !rc,
			 .insns = st->insns ? st->insns : ebpf_program__insn_cnt(p),
			 .processed = st->processed,
			 .peak_states = st->peak_states,
			 .worst_case = st->worst_case_insns,
			 .budget = ebpf_program__type(p)->insn_budget,
			 .time_us = (double)st->time_ns / 1e3,
			 .ctx_read = rc ? "" : reads,
			 .error = rc ? (char *)msg : NULL};
	if (rc) {
		v->rejected = 1;
		cli_warn("%s: %s (%s): REJECTED: %s", v->file, name, sec, msg);
	}
	if (vrows_add(v->rows, &r))
		cli_warn("out of memory");
}

/* A row for a refusal that concerns no single program (a limit of the whole bundle). */
static void object_refused(struct verify_run *v, const char *msg)
{
	struct vrow r = {.file = (char *)v->file,
			 .program = "-",
			 .section = "-",
			 .ctx_read = "",
			 .error = (char *)msg};
	cli_warn("%s: REJECTED: %s", v->file, msg);
	v->rejected = 1;
	vrows_add(v->rows, &r);
}

/* What the plugin refuses before verifying anything: a broken structural rule (a section no
 * hook serves, two programs for one hook) or a limit. Prints (table) or writes (JSON) the
 * bundle's usage against the limits. 0, or 1 with the refusal reported. */
static int check_bundle(struct verify_run *v, struct ebpf_object *obj, struct json *j)
{
	const struct ebpf_program *bad = NULL;
	struct ebpf_object_limits lim;
	struct ebpf_object_usage use = {.sz = sizeof(use)};
	char err[512], b1[32], b2[32];

	if (ncclbpf_rt_bundle_check(obj, &bad, err, sizeof(err))) {
		report(v, (struct ebpf_program *)bad, -EINVAL, err);
		return 1;
	}
	ncclbpf_rt_bundle_limits(&lim);
	int rc = ebpf_object__check_limits(obj, &lim, &use, err, sizeof(err));
	if (v->o->fmt == VF_TABLE && !v->o->quiet)
		printf("%s: bundle: map memory %s of %s (NCCLBPF_MAX_MAP_BYTES), %u maps; programs "
		       "%u of %u; instructions %u of %u\n",
		       v->file, plugin_host_bytes(use.map_bytes, b1, sizeof(b1)),
		       plugin_host_bytes(lim.map_bytes, b2, sizeof(b2)), use.maps, use.progs,
		       lim.progs, use.insns, lim.insns);
	if (j) {
		json_key(j, "bundle");
		json_obj(j);
		json_ku64(j, "map_bytes", use.map_bytes);
		json_ku64(j, "map_bytes_limit", lim.map_bytes);
		json_ku64(j, "maps", use.maps);
		json_ku64(j, "progs", use.progs);
		json_ku64(j, "progs_limit", lim.progs);
		json_ku64(j, "insns", use.insns);
		json_ku64(j, "insns_limit", lim.insns);
		json_end(j);
	}
	if (rc) {
		object_refused(v, err);
		return 1;
	}
	return 0;
}

/* Verifies one object into rows. 0, or 1 (a rejection, or the object does not load). */
static int verify_file(const struct verify_opts *o, const char *file, struct vrows *rows,
		       struct json *j, char *log)
{
	struct ebpf_object_load_opts lo = {.sz = sizeof(lo), .verify_flags = o->flags};
	struct verify_run v = {.o = o, .file = file, .rows = rows};
	char err[512];

	if (j) {
		json_obj(j);
		json_kstr(j, "file", file);
	}
	struct ebpf_object *obj = ncclbpf_object_open_file(file, NULL, err, sizeof(err));
	if (!obj) {
		cli_warn("%s", err);
		if (j) {
			json_kstr(j, "error", err);
			json_end(j);
		}
		return 1;
	}
	if (log) {
		log[0] = 0;
		lo.verify_flags |= EBPF_VERIFY_F_LOG;
		lo.log_buf = log;
		lo.log_size = LOG_SIZE;
		v.log = log;
	}
	int status = check_bundle(&v, obj, j);
	const char *oerr = NULL; /* the object's own error (not a program's) */
	if (!status && ebpf_object__verify(obj, &lo, report, &v, err, sizeof(err)) < 0) {
		cli_warn("%s: %s", file, err);
		oerr = err;
	} else if (!status && o->only && !v.matched) {
		snprintf(err, sizeof(err), "no program named %s", o->only);
		cli_warn("%s: %s", file, err);
		oerr = err;
	}
	status |= oerr != NULL;
	if (j) {
		json_kstr(j, "error", oerr);
		json_key(j, "programs");
		vrows_json_programs(rows, file, j);
		json_end(j);
	}
	ebpf_object__close(obj);
	return status || v.rejected;
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One side of --compare: a CSV of `-o csv`, an object, or a directory's *.o (sorted). */
static int load_side(const struct verify_opts *o, const char *path, struct vrows *rows)
{
	size_t n = strlen(path);
	char err[1024];
	if (n > 4 && !strcmp(path + n - 4, ".csv")) {
		if (vrows_read_csv(path, rows, err, sizeof(err)))
			return cli_fail("%s", err);
		return 0;
	}
	if (!is_dir(path))
		return verify_file(o, path, rows, NULL, NULL) && !rows->n ? CLI_FAIL : 0;
	DIR *d = opendir(path);
	if (!d)
		return cli_fail("%s: %s", path, strerror(errno));
	char **names = NULL;
	size_t cnt = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		char **g;
		if (l < 3 || strcmp(e->d_name + l - 2, ".o") ||
		    !(g = realloc(names, (cnt + 1) * sizeof(*names))))
			continue;
		names = g;
		if (asprintf(&names[cnt], "%s/%s", path, e->d_name) >= 0)
			cnt++;
	}
	closedir(d);
	if (cnt)
		qsort(names, cnt, sizeof(*names), cmp_str);
	for (size_t i = 0; i < cnt; i++) {
		verify_file(o, names[i], rows, NULL, NULL);
		free(names[i]);
	}
	free(names);
	return cnt ? 0 : cli_fail("%s: no .o files", path);
}

static int compare(const struct verify_opts *o, const char *before, const char *after)
{
	struct vrows a = {0}, b = {0};
	int rc = load_side(o, before, &a);
	if (!rc)
		rc = load_side(o, after, &b);
	if (!rc) {
		vrows_compare(&a, &b, o->fmt, stdout);
		for (size_t i = 0; i < b.n; i++)
			rc |= !b.v[i].accepted;
	}
	vrows_free(&a);
	vrows_free(&b);
	return rc ? CLI_FAIL : CLI_OK;
}

static int parse_format(const char *s, enum vformat *f)
{
	if (!strcmp(s, "table"))
		*f = VF_TABLE;
	else if (!strcmp(s, "csv"))
		*f = VF_CSV;
	else if (!strcmp(s, "json"))
		*f = VF_JSON;
	else
		return cli_usage_error("-o takes table, csv or json, not '%s'", s);
	return 0;
}

static int cmd_verify(int argc, char **argv)
{
	struct verify_opts o = {.fmt = VF_TABLE};
	const char **files = calloc((size_t)argc, sizeof(*files)), *fmt = NULL;
	int n = 0, cmp = 0, k, status = 0;
	if (!files)
		return cli_fail("out of memory");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--log"))
			o.log = 1;
		else if (!strcmp(a, "--allow-rank-local"))
			o.flags |= EBPF_VERIFY_F_ALLOW_RANK_LOCAL;
		else if (!strcmp(a, "--json"))
			fmt = "json";
		else if (!strcmp(a, "-C") || !strcmp(a, "--compare"))
			cmp = 1;
		else if ((k = cli_opt(argc, argv, &i, "--prog", &o.only)) ||
			 (k = cli_opt(argc, argv, &i, "-o", &fmt)) ||
			 (k = cli_opt(argc, argv, &i, "--output", &fmt))) {
			if (k < 0)
				status = CLI_USAGE;
		} else if (a[0] == '-')
			status = cli_usage_error("unknown option '%s'", a);
		else
			files[n++] = a;
		if (status)
			goto out;
	}
	if ((fmt && (status = parse_format(fmt, &o.fmt))))
		goto out;
	if (!n) {
		status = cli_usage_error("no object file given");
		goto out;
	}
	if (cmp && n != 2) {
		status = cli_usage_error("--compare takes BEFORE and AFTER");
		goto out;
	}
	if (o.flags & EBPF_VERIFY_F_ALLOW_RANK_LOCAL)
		cli_warn(
		    "WARNING: unsafe mode: rank-dependent tuner decisions are accepted and may "
		    "hang collectives");
	if (cmp) {
		o.quiet = 1;
		status = compare(&o, files[0], files[1]);
		goto out;
	}
	char *log = o.log ? malloc(LOG_SIZE) : NULL;
	if (o.log && !log) {
		status = cli_fail("out of memory");
		goto out;
	}
	struct vrows rows = {0};
	struct json j, *jp = o.fmt == VF_JSON ? &j : NULL;
	if (jp) {
		json_init(jp, stdout);
		json_obj(jp);
		json_key(jp, "objects");
		json_arr(jp);
	}
	for (int i = 0; i < n; i++)
		status |= verify_file(&o, files[i], &rows, jp, log);
	if (jp) {
		json_end(jp);
		size_t acc = 0;
		for (size_t i = 0; i < rows.n; i++)
			acc += rows.v[i].accepted != 0;
		json_ku64(jp, "accepted", acc);
		json_ku64(jp, "rejected", rows.n - acc);
		json_end(jp);
	} else if (o.fmt == VF_CSV) {
		vrows_print_csv(&rows, stdout);
	} else {
		vrows_print_table(&rows, stdout);
	}
	vrows_free(&rows);
	free(log);
out:
	free(files);
	return status;
}

NCCLBPF_COMMAND(
    verify_cmd, .name = "verify",
    .args = "[-o table|csv|json] [--json] [--prog NAME] [--log] [--allow-rank-local] FILE.o... "
	    "| --compare BEFORE AFTER",
    .summary = "run the static verifier over policy objects, one row per program",
    .help =
	"  -o, --output FORMAT  table (default), csv or json (--json: the same as -o json;\n"
	"                       docs/cli-json.md)\n"
	"  --prog NAME          only this program (function or section name)\n"
	"  --log                print the verifier's per-instruction state trace\n"
	"  --allow-rank-local   unsafe experimental mode: accept rank-dependent decisions\n"
	"  -C, --compare B A    compare two runs program by program (matched by file name and\n"
	"                       program): each an object, a directory of objects, or a CSV\n"
	"                       written by -o csv; the differences of the verifier's measures\n\n"
	"Columns: the verdict; the program's length (Insns); the instructions the analysis\n"
	"visited (Processed); its peak of stored states; the most instructions one run can\n"
	"execute (Worst path) against the hook's Budget; the time verification took; the context\n"
	"fields the program may read (duration_ns/N: one request in N per connection is timed).\n"
	"Rejections: one line each on stderr, \"FILE: PROGRAM (SECTION): REJECTED: reason\".\n\n"
	"exit status: 0 every program accepted, 1 a program rejected (with --compare: in AFTER)\n"
	"or an object that does not load, 2 usage error\n",
    .run = cmd_verify);
