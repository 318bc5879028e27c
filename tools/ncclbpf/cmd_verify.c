/* `ncclbpf verify FILE.o [--prog NAME] [--log] [--allow-rank-local]`: runs the static verifier
 * over every program of a policy object exactly as loading does (ebpf_object__verify: the same
 * rounds, the same maps rank-local), and prints one line per program: its statistics when
 * accepted, the one-line reason when rejected, the full per-instruction state trace with --log.
 * First, as the plugin does before verifying anything, the bundle's structure (served sections,
 * one program per hook) and its limits (map memory, ring buffers, programs, instructions), with
 * one line of what it asks against the limits. Exit status: 0 all accepted, 1 any rejected or
 * the object cannot be loaded, 2 usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ncclbpf/object.h"
#include "ncclbpf/runtime.h"
#include "plugin_host.h"

#define LOG_SIZE (16u << 20)

/* One line: the context fields the program may read (the net hooks read the clock only for
 * programs that may read time_ns or duration_ns). */
static void print_reads(const struct ebpf_prog_type *t, uint64_t reads)
{
	const char *sep = "";

	printf("  ctx fields read:");
	for (uint32_t i = 0; t && i < t->n_fields; i++)
		if (reads & (1ull << (i < 63 ? i : 63))) {
			printf("%s %s", sep, t->fields[i].name);
			sep = ",";
		}
	printf("%s\n", *sep ? "" : " none");
}

struct verify_run {
	const char *only; /* --prog */
	const char *log;  /* the verifier log buffer (NULL without --log) */
	int matched, rejected;
};

static void report(void *arg, struct ebpf_program *p, int rc, const char *msg)
{
	struct verify_run *v = arg;
	const struct ebpf_verify_stats *st = ebpf_program__verify_stats(p);
	char err[1024];

	if (v->only && strcmp(v->only, ebpf_program__name(p)) &&
	    strcmp(v->only, ebpf_program__section(p)))
		return;
	v->matched++;
	if (v->log && v->log[0]) {
		printf("--- %s (%s) verifier log ---\n%s", ebpf_program__name(p),
		       ebpf_program__section(p), v->log);
		printf("--- end of log ---\n");
	}
	snprintf(err, sizeof(err), "%s", msg);
	uint32_t every = 0; /* the section is served: ncclbpf_rt_bundle_check */
	ncclbpf_rt_section_served(ebpf_program__section(p), &every, NULL, 0);
	if (rc) {
		v->rejected = 1;
		printf("%s (%s): REJECTED: %s\n", ebpf_program__name(p), ebpf_program__section(p),
		       err);
		return;
	}
	printf("%s (%s): accepted: %u insns, %llu processed, %u peak states, worst-case path %llu "
	       "insns (budget %llu), %.1f us\n",
	       ebpf_program__name(p), ebpf_program__section(p), st->insns,
	       (unsigned long long)st->processed, st->peak_states,
	       (unsigned long long)st->worst_case_insns,
	       (unsigned long long)ebpf_program__type(p)->insn_budget, (double)st->time_ns / 1e3);
	print_reads(ebpf_program__type(p), st->ctx_read);
	uint64_t dur = ebpf_prog_type_field_bit(ebpf_program__type(p), "duration_ns");
	if (every > 1 && (st->ctx_read & dur))
		printf("  duration_ns: one request in %u per connection is timed (sampled; "
		       "NCCLBPF_NET_TIME_EVERY overrides)\n",
		       every);
}

/* What the plugin refuses before verifying anything: a broken structural rule (a section no
 * hook serves, two programs for one hook) or a limit; prints the bundle's usage against the
 * limits. 0, or 1 with the reason printed. */
static int check_bundle(const char *file, struct ebpf_object *obj)
{
	const struct ebpf_program *bad = NULL;
	struct ebpf_object_limits lim;
	struct ebpf_object_usage use = {.sz = sizeof(use)};
	char err[512], b1[32], b2[32];

	if (ncclbpf_rt_bundle_check(obj, &bad, err, sizeof(err))) {
		printf("%s (%s): REJECTED: %s\n", ebpf_program__name(bad),
		       ebpf_program__section(bad), err);
		return 1;
	}
	ncclbpf_rt_bundle_limits(&lim);
	int rc = ebpf_object__check_limits(obj, &lim, &use, err, sizeof(err));
	printf("bundle: map memory %s of %s (NCCLBPF_MAX_MAP_BYTES), %u maps; programs %u of %u; "
	       "instructions %u of %u\n",
	       plugin_host_bytes(use.map_bytes, b1, sizeof(b1)),
	       plugin_host_bytes(lim.map_bytes, b2, sizeof(b2)), use.maps, use.progs, lim.progs,
	       use.insns, lim.insns);
	if (rc) {
		printf("%s: REJECTED: %s\n", file, err);
		return 1;
	}
	return 0;
}

static int cmd_verify(int argc, char **argv)
{
	const char *file = NULL;
	struct verify_run v = {0};
	struct ebpf_object_load_opts lo = {.sz = sizeof(lo)};
	int want_log = 0, status = 1;
	struct ebpf_object *obj;
	char err[512], *log = NULL;

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--prog") && k + 1 < argc)
			v.only = argv[++k];
		else if (!strcmp(argv[k], "--log"))
			want_log = 1;
		else if (!strcmp(argv[k], "--allow-rank-local"))
			lo.verify_flags |= EBPF_VERIFY_F_ALLOW_RANK_LOCAL;
		else if (argv[k][0] == '-')
			return cli_usage_error("unknown option '%s'", argv[k]);
		else if (file)
			return cli_usage_error("one object at a time ('%s' and '%s')", file,
					       argv[k]);
		else
			file = argv[k];
	}
	if (!file)
		return cli_usage_error("no object file given");
	obj = ebpf_object__open_file(file, NULL, err, sizeof(err));
	if (!obj)
		return cli_fail("%s", err);
	if (check_bundle(file, obj)) {
		status = 1;
		goto out;
	}
	if (want_log) {
		log = malloc(LOG_SIZE);
		if (!log) {
			fprintf(stderr, "ncclbpf verify: out of memory\n");
			goto out;
		}
		log[0] = 0;
		lo.verify_flags |= EBPF_VERIFY_F_LOG;
		lo.log_buf = log;
		lo.log_size = LOG_SIZE;
		v.log = log;
	}
	if (lo.verify_flags & EBPF_VERIFY_F_ALLOW_RANK_LOCAL)
		fprintf(stderr,
			"ncclbpf verify: WARNING: unsafe mode: rank-dependent tuner decisions "
			"are accepted and may hang collectives\n");
	if (ebpf_object__verify(obj, &lo, report, &v, err, sizeof(err)) < 0) {
		fprintf(stderr, "ncclbpf verify: %s: %s\n", file, err);
		goto out;
	}
	if (v.only && !v.matched) {
		fprintf(stderr, "ncclbpf verify: %s: no program named %s\n", file, v.only);
		goto out;
	}
	status = v.rejected ? 1 : 0;
out:
	free(log);
	ebpf_object__close(obj);
	return status;
}

NCCLBPF_COMMAND(verify_cmd, .name = "verify",
		.args = "[--prog NAME] [--log] [--allow-rank-local] FILE.o",
		.summary = "run the static verifier over a policy object's programs",
		.help = "  --prog NAME          only this program (function or section name)\n"
			"  --log                print the verifier's per-instruction state trace\n"
			"  --allow-rank-local   unsafe experimental mode: accept rank-dependent "
			"decisions\n\n"
			"exit status: 0 every program accepted, 1 a program rejected or the object "
			"does not load, 2 usage error\n",
		.run = cmd_verify);
