/* `ncclbpf verify FILE.o [--prog NAME] [--log] [--allow-rank-local]`: runs the static verifier
 * over every program of a policy object, as loading would (observers first, so that maps they
 * write count as rank-local for the tuner programs), and prints one line per program: its
 * statistics when accepted, the one-line reason when rejected, the full per-instruction state
 * trace with --log. Exit status: 0 all accepted, 1 any rejected, 2 the object cannot be loaded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ncclbpf/helpers.h"
#include "ncclbpf/object.h"
#include "ncclbpf/runtime.h"

#define LOG_SIZE (16u << 20)

static int usage(void)
{
	fprintf(
	    stderr,
	    "usage: ncclbpf verify FILE.o [--prog NAME] [--log] [--allow-rank-local]\n"
	    "  --prog NAME          only this program (function or section name)\n"
	    "  --log                print the verifier's per-instruction state trace\n"
	    "  --allow-rank-local   unsafe experimental mode: accept rank-dependent decisions\n");
	return 2;
}

/* The maps the programs will use, created from the object's definitions and initial data. */
static int create_maps(struct ebpf_object *obj, struct ebpf_map **maps, char *err, size_t len)
{
	uint32_t n = ebpf_object__map_cnt(obj);

	for (uint32_t i = 0; i < n; i++) {
		struct ebpf_object_map *om = ebpf_object__map(obj, i);
		const struct ebpf_map_def *d = ebpf_object_map__def(om);
		size_t size = 0;
		const void *init = ebpf_object_map__initial_data(om, &size);
		uint32_t key = 0;

		maps[i] = ebpf_map__create(d, err, len);
		if (!maps[i])
			return -EINVAL;
		if (init && size && ebpf_map__update_elem(maps[i], &key, init, EBPF_ANY)) {
			snprintf(err, len, "map %s: cannot set initial data",
				 ebpf_object_map__name(om));
			return -EINVAL;
		}
	}
	return 0;
}

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

static int verify_one(struct ebpf_program *p, struct ebpf_map **maps, uint32_t n_maps,
		      uint8_t *flags, uint32_t vflags, char *log, int *rejected)
{
	uint32_t n_lines = 0;
	const struct ebpf_line_info *lines = ebpf_program__line_info(p, &n_lines);
	struct ebpf_verify_opts vo = {
	    .sz = sizeof(vo),
	    .type = ebpf_program__type(p),
	    .maps = maps,
	    .n_maps = n_maps,
	    .map_flags = flags,
	    .helpers = ebpf_helpers_default(),
	    .lines = lines,
	    .n_lines = n_lines,
	    .flags = vflags | (log ? EBPF_VERIFY_F_LOG : 0),
	    .log_buf = log,
	    .log_size = log ? LOG_SIZE : 0,
	};
	struct ebpf_verify_stats st;
	char err[1024];
	int rc = ebpf_verify(ebpf_program__insns(p), ebpf_program__insn_cnt(p), &vo, &st, err,
			     sizeof(err));

	if (log && log[0]) {
		printf("--- %s (%s) verifier log ---\n%s", ebpf_program__name(p),
		       ebpf_program__section(p), log);
		printf("--- end of log ---\n");
	}
	/* Verified code the plugin would still refuse to load: say it here, before deploying. */
	uint32_t every = 0;
	if (!rc)
		rc = ncclbpf_rt_section_served(ebpf_program__section(p), &every, err, sizeof(err));
	if (rc) {
		*rejected = 1;
		printf("%s (%s): REJECTED: %s\n", ebpf_program__name(p), ebpf_program__section(p),
		       err);
		return rc;
	}
	printf("%s (%s): accepted: %u insns, %llu processed, %u peak states, worst-case path %llu "
	       "insns (budget %llu), %.1f us\n",
	       ebpf_program__name(p), ebpf_program__section(p), st.insns,
	       (unsigned long long)st.processed, st.peak_states,
	       (unsigned long long)st.worst_case_insns,
	       (unsigned long long)ebpf_program__type(p)->insn_budget, (double)st.time_ns / 1e3);
	print_reads(ebpf_program__type(p), st.ctx_read);
	uint64_t dur = ebpf_prog_type_field_bit(ebpf_program__type(p), "duration_ns");
	if (every > 1 && (st.ctx_read & dur))
		printf("  duration_ns: one request in %u per connection is timed (sampled; "
		       "NCCLBPF_NET_TIME_EVERY overrides)\n",
		       every);
	return 0;
}

static int cmd_verify(int argc, char **argv)
{
	const char *file = NULL, *only = NULL;
	uint32_t vflags = 0;
	int want_log = 0, rejected = 0, status = 2, matched = 0;
	struct ebpf_object *obj;
	struct ebpf_map **maps = NULL;
	uint8_t *flags = NULL, *written = NULL;
	char err[512], *log = NULL;
	uint32_t n_maps;

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--prog") && k + 1 < argc)
			only = argv[++k];
		else if (!strcmp(argv[k], "--log"))
			want_log = 1;
		else if (!strcmp(argv[k], "--allow-rank-local"))
			vflags |= EBPF_VERIFY_F_ALLOW_RANK_LOCAL;
		else if (argv[k][0] == '-' || file)
			return usage();
		else
			file = argv[k];
	}
	if (!file)
		return usage();
	obj = ebpf_object__open_file(file, NULL, err, sizeof(err));
	if (!obj) {
		fprintf(stderr, "ncclbpf verify: %s\n", err);
		return 2;
	}
	n_maps = ebpf_object__map_cnt(obj);
	maps = calloc(n_maps + 1, sizeof(*maps));
	flags = calloc(n_maps + 1, 1);
	written = calloc(n_maps + 1, 1);
	if (want_log)
		log = malloc(LOG_SIZE);
	if (!maps || !flags || !written || (want_log && !log)) {
		fprintf(stderr, "ncclbpf verify: out of memory\n");
		goto out;
	}
	if (create_maps(obj, maps, err, sizeof(err))) {
		fprintf(stderr, "ncclbpf verify: %s: %s\n", file, err);
		goto out;
	}
	if (vflags & EBPF_VERIFY_F_ALLOW_RANK_LOCAL)
		fprintf(stderr,
			"ncclbpf verify: WARNING: unsafe mode: rank-dependent tuner decisions "
			"are accepted and may hang collectives\n");
	/* Observers first: maps they may write are rank-local for the decision makers. */
	for (int pass = 0; pass < 2; pass++) {
		for (struct ebpf_program *p = ebpf_object__next_program(obj, NULL); p;
		     p = ebpf_object__next_program(obj, p)) {
			int decides =
			    !!(ebpf_program__type(p)->flags & EBPF_PROG_TYPE_F_RANK_CONSISTENT);
			if (decides != pass)
				continue;
			for (uint32_t i = 0; i < n_maps; i++)
				flags[i] = pass && written[i] ? EBPF_VERIFY_MAP_RANK_LOCAL : 0;
			if (only && strcmp(only, ebpf_program__name(p)) &&
			    strcmp(only, ebpf_program__section(p))) {
				if (!pass) /* still learn what observers write */
					verify_one(p, maps, n_maps, flags, vflags, NULL, &(int){0});
				else
					continue;
				for (uint32_t i = 0; i < n_maps; i++)
					written[i] |= flags[i] & EBPF_VERIFY_MAP_WRITTEN;
				continue;
			}
			matched++;
			verify_one(p, maps, n_maps, flags, vflags, log, &rejected);
			if (!pass)
				for (uint32_t i = 0; i < n_maps; i++)
					written[i] |= flags[i] & EBPF_VERIFY_MAP_WRITTEN;
		}
	}
	if (only && !matched) {
		fprintf(stderr, "ncclbpf verify: %s: no program named %s\n", file, only);
		goto out;
	}
	status = rejected ? 1 : 0;
out:
	for (uint32_t i = 0; maps && i < n_maps; i++)
		ebpf_map__free(maps[i]);
	free(maps);
	free(flags);
	free(written);
	free(log);
	ebpf_object__close(obj);
	return status;
}

NCCLBPF_COMMAND(verify_cmd, .name = "verify", .args = "FILE.o [--prog NAME] [--log]",
		.summary = "run the static verifier over a policy object's programs",
		.run = cmd_verify);
