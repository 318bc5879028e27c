/* Verification time of every shipped policy: the median of many ebpf_verify runs per program,
 * next to a baseline measured in the same run (ebpf_exec__new on the same instructions: the
 * structural validation any engine must do), and the target of 200 us; with the work done
 * (instructions processed, peak stored states) and the page faults of a verification (minor
 * faults of the process during the ebpf_verify calls, averaged: memory the verifier takes from
 * the system and gives back every time shows here).
 * Usage: verify_bench [--quick] [FILE.o ...]   (default: the policies built with the project) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ebpf/helpers.h"
#include "ebpf/object.h"
#include "ncclbpf/nccl_platform.h"

static const char *default_files[] = {NCCLBPF_BENCH_POLICIES NULL};

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int bench_file(const char *file, int reps)
{
	char err[512];
	struct ebpf_object *obj = ncclbpf_object_open_file(file, NULL, err, sizeof(err));
	uint32_t n_maps;
	struct ebpf_map **maps;
	uint8_t *flags;
	double *t = malloc(sizeof(double) * (size_t)reps),
	       *b = malloc(sizeof(double) * (size_t)reps);
	int bad = 0;

	if (!obj || !t || !b) {
		fprintf(stderr, "%s: %s\n", file, obj ? "out of memory" : err);
		free(t);
		free(b);
		ebpf_object__close(obj);
		return 1;
	}
	n_maps = ebpf_object__map_cnt(obj);
	maps = calloc(n_maps + 1, sizeof(*maps));
	flags = calloc(n_maps + 1, 1);
	for (uint32_t i = 0; i < n_maps; i++) {
		struct ebpf_object_map *om = ebpf_object__map(obj, i);
		size_t size = 0;
		const void *init = ebpf_object_map__initial_data(om, &size);
		uint32_t key = 0;
		maps[i] = ebpf_map__create(ebpf_object_map__def(om), err, sizeof(err));
		if (maps[i] && init && size)
			ebpf_map__update_elem(maps[i], &key, init, EBPF_ANY);
	}
	for (struct ebpf_program *p = ebpf_object__next_program(obj, NULL); p;
	     p = ebpf_object__next_program(obj, p)) {
		uint32_t n_lines = 0;
		const struct ebpf_line_info *lines = ebpf_program__line_info(p, &n_lines);
		struct ebpf_verify_opts vo = {.sz = sizeof(vo),
					      .type = ebpf_program__type(p),
					      .maps = maps,
					      .n_maps = n_maps,
					      .map_flags = flags,
					      .helpers = ebpf_helpers_default(),
					      .lines = lines,
					      .n_lines = n_lines};
		struct ebpf_exec_opts po = {.sz = sizeof(po),
					    .helpers = ebpf_helpers_default(),
					    .maps = maps,
					    .n_maps = n_maps};
		struct ebpf_verify_stats st;
		long faults = 0;
		int rc = 0;

		for (int r = 0; r < reps; r++) {
			long f0 = minor_faults();
			double t0 = now_ns();
			rc |= ebpf_verify(ebpf_program__insns(p), ebpf_program__insn_cnt(p), &vo,
					  &st, err, sizeof(err));
			double t1 = now_ns();
			faults += minor_faults() - f0;
			double t2 = now_ns();
			struct ebpf_exec *ep = ebpf_exec__new(
			    ebpf_program__insns(p), ebpf_program__insn_cnt(p), &po, NULL, 0);
			ebpf_exec__free(ep);
			double t3 = now_ns();
			t[r] = t1 - t0;
			b[r] = t3 - t2;
		}
		qsort(t, (size_t)reps, sizeof(double), cmp_d);
		qsort(b, (size_t)reps, sizeof(double), cmp_d);
		printf(
		    "%-28s %-10s %5u insns %6llu processed %4u peak states %6.1f faults  verify "
		    "%8.1f us  (%5.2fx of the 200 us target, %6.1fx structural check %.1f us)%s\n",
		    ebpf_program__name(p), ebpf_program__section(p), st.insns,
		    (unsigned long long)st.processed, st.peak_states, (double)faults / reps,
		    t[reps / 2] / 1e3, t[reps / 2] / 200e3,
		    t[reps / 2] / (b[reps / 2] > 0 ? b[reps / 2] : 1), b[reps / 2] / 1e3,
		    rc ? "  REJECTED" : "");
		bad |= rc != 0;
	}
	for (uint32_t i = 0; i < n_maps; i++)
		ebpf_map__free(maps[i]);
	free(maps);
	free(flags);
	free(t);
	free(b);
	ebpf_object__close(obj);
	return bad;
}

int main(int argc, char **argv)
{
	int reps = 501, bad = 0, nfiles = 0;

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--quick")) {
			reps = 3;
		} else {
			bad |= bench_file(argv[k], reps);
			nfiles++;
		}
	}
	if (!nfiles)
		for (const char **f = default_files; *f; f++)
			bad |= bench_file(*f, reps);
	return bad;
}
