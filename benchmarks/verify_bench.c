/* Verification time of every shipped policy: the median of many ebpf_verify runs per program,
 * next to a baseline measured in the same run (ebpf_exec__new on the same instructions: the
 * structural validation any engine must do), and the target of 200 us; with the work done
 * (instructions processed, peak stored states) and the page faults of a verification (minor
 * faults of the process during the ebpf_verify calls, averaged: memory the verifier takes from
 * the system and gives back every time shows here).
 *
 * --cold: the verification a process runs first instead (what loading a policy at a job's
 * start costs: the verifier's memory is touched for the first time), in each of many forked
 * processes that have verified nothing before, next to the same process's second verification
 * of the same program (its memory kept, as for a reload) as the baseline.
 * Usage: verify_bench [--quick] [--cold] [FILE.o ...]   (default: the policies built with the
 * project) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* One verification: its time (ns) and the page faults it took; rc the verdict. */
static double verify_once(const struct ebpf_program *p, const struct ebpf_verify_opts *vo,
			  struct ebpf_verify_stats *st, long *faults, int *rc)
{
	char err[512];
	long f0 = minor_faults();
	double t0 = now_ns();
	*rc |= ebpf_verify(ebpf_program__insns(p), ebpf_program__insn_cnt(p), vo, st, err,
			   sizeof(err));
	double t1 = now_ns();
	*faults = minor_faults() - f0;
	return t1 - t0;
}

/* --cold runs each sample in a process of its own: this program again, as
 * `verify_bench --cold-child FILE PROGRAM`, which opens FILE as the parent does, verifies
 * PROGRAM twice and writes {first ns, second ns, first's faults, verdict} to its stdout. A
 * fresh process (not a fork, whose pages are the parent's until written) is what loading a
 * policy at a job's start is. */
static const char *cold_child_prog; /* set in a --cold-child process */

static int cold_child(const struct ebpf_program *p, const struct ebpf_verify_opts *vo)
{
	struct ebpf_verify_stats st;
	long faults, unused;
	int rc = 0;
	double out[4];
	out[0] = verify_once(p, vo, &st, &faults, &rc);
	out[1] = verify_once(p, vo, &st, &unused, &rc);
	out[2] = (double)faults;
	out[3] = rc;
	return write(1, out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 : 1;
}

/* One --cold sample: the child's four numbers, or -1. */
static int cold_sample(const char *file, const char *prog, double out[4])
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl("/proc/self/exe", "verify_bench", "--cold-child", file, prog, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	ssize_t n = pid > 0 ? read(fd[0], out, 4 * sizeof(double)) : -1;
	close(fd[0]);
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	return n == (ssize_t)(4 * sizeof(double)) && WIFEXITED(status) && !WEXITSTATUS(status) ? 0
											       : -1;
}

/* --cold: reps samples; medians of the first verification, the second, and the first's
 * faults. Returns the verdict bits, -1 when a process could not run. */
static int bench_cold(const char *file, const char *prog, int reps, double *cold, double *warm,
		      double *faults)
{
	double *c = calloc((size_t)reps, sizeof(double)), *w = calloc((size_t)reps, sizeof(double)),
	       *f = calloc((size_t)reps, sizeof(double));
	int bad = !c || !w || !f ? -1 : 0;
	for (int r = 0; r < reps && !bad; r++) {
		double in[4];
		if (cold_sample(file, prog, in) != 0) {
			bad = -1;
			break;
		}
		c[r] = in[0];
		w[r] = in[1];
		f[r] = in[2];
		bad |= in[3] != 0;
	}
	if (!bad) {
		qsort(c, (size_t)reps, sizeof(double), cmp_d);
		qsort(w, (size_t)reps, sizeof(double), cmp_d);
		qsort(f, (size_t)reps, sizeof(double), cmp_d);
		*cold = c[reps / 2];
		*warm = w[reps / 2];
		*faults = f[reps / 2];
	}
	free(c);
	free(w);
	free(f);
	return bad;
}

static int bench_file(const char *file, int reps, int cold)
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

		if (cold_child_prog) {
			if (!strcmp(ebpf_program__name(p), cold_child_prog))
				bad |= cold_child(p, &vo);
			continue;
		}
		if (cold) {
			double c = 0, w = 0, f = 0;
			rc = bench_cold(file, ebpf_program__name(p), reps, &c, &w, &f);
			if (rc < 0)
				printf("%-28s %-10s could not run its processes\n",
				       ebpf_program__name(p), ebpf_program__section(p));
			else
				printf("%-28s %-10s %5u insns  first verification in a process "
				       "%8.1f us, %5.0f faults  (%5.2fx of the 200 us target, "
				       "%5.1fx the same process's second %.1f us)%s\n",
				       ebpf_program__name(p), ebpf_program__section(p),
				       ebpf_program__insn_cnt(p), c / 1e3, f, c / 200e3,
				       c / (w > 0 ? w : 1), w / 1e3, rc ? "  REJECTED" : "");
			bad |= rc != 0;
			continue;
		}
		for (int r = 0; r < reps; r++) {
			long f1;
			t[r] = verify_once(p, &vo, &st, &f1, &rc);
			faults += f1;
			double t2 = now_ns();
			struct ebpf_exec *ep = ebpf_exec__new(
			    ebpf_program__insns(p), ebpf_program__insn_cnt(p), &po, NULL, 0);
			ebpf_exec__free(ep);
			double t3 = now_ns();
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
	int reps = 501, cold = 0, bad = 0, nfiles = 0;

	if (argc == 4 && !strcmp(argv[1], "--cold-child")) {
		cold_child_prog = argv[3];
		return bench_file(argv[2], 1, 0);
	}

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--quick"))
			reps = 3;
		else if (!strcmp(argv[k], "--cold"))
			cold = 1;
	}
	if (cold && reps > 3)
		reps = 31; /* a process each */
	for (int k = 1; k < argc; k++) {
		if (strcmp(argv[k], "--quick") && strcmp(argv[k], "--cold")) {
			bad |= bench_file(argv[k], reps, cold);
			nfiles++;
		}
	}
	if (!nfiles)
		for (const char **f = default_files; *f; f++)
			bad |= bench_file(*f, reps, cold);
	return bad;
}
