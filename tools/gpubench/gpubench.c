/* ncclbpf-gpubench: NCCL collectives over a size sweep, nccl-tests style, with or without our
 * plugin. It launches N ranks as processes (forked before anything touches CUDA or NCCL), each on
 * GPU rank % nGPUs; ranks sharing a GPU get distinct NCCL_HOSTIDs, so NCCL sees one node per
 * rank and moves data through its network transport.
 *
 * Rank 0 prints one row per size: bytes, count, type, time over repetitions (mean, min, max),
 * algorithm and bus bandwidth, wrong elements over all ranks (every rank compares its whole
 * output with the exact expected values), and the algorithm/protocol/channels NCCL used (from
 * the plugin's trace, or the forced values). With --split every rank also belongs to a second
 * communicator (ncclCommSplit of the first by rank parity), and each size runs on both,
 * interleaved. Options, formats and statistics: bench_util.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "ab_swap.h"
#include "bench_util.h"
#include "install_file.h"
#include "ncclbpf/envvars.h"

#define DIE(...)                                                                                   \
	do {                                                                                       \
		fprintf(stderr, "gpubench: " __VA_ARGS__);                                         \
		fputc('\n', stderr);                                                               \
		exit(2);                                                                           \
	} while (0)
/* One checker for both libraries: the call's type, its success value and its error text. */
#define CHECK_CALL(type, ok, errstr, call)                                                         \
	do {                                                                                       \
		type e_ = (call);                                                                  \
		if (e_ != (ok))                                                                    \
			DIE("rank %d: %s failed: %s", g_rank, #call, errstr(e_));                  \
	} while (0)
#define CUDACHECK(call) CHECK_CALL(cudaError_t, cudaSuccess, cudaGetErrorString, call)
#define NCCLCHECK(call) CHECK_CALL(ncclResult_t, ncclSuccess, ncclGetErrorString, call)

static int g_rank = -1;

/* Exchanges the unique id through a file: rank 0 writes it atomically (rename), others poll. */
static void share_unique_id(const char *dir, int rank, ncclUniqueId *id)
{
	char path[512], tmp[600];
	snprintf(path, sizeof path, "%s/nccl-unique-id", dir);
	if (rank == 0) {
		NCCLCHECK(ncclGetUniqueId(id));
		snprintf(tmp, sizeof tmp, "%s.tmp", path);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, id, sizeof *id) != (ssize_t)sizeof *id || close(fd))
			DIE("cannot write %s: %s", tmp, strerror(errno));
		if (rename(tmp, path))
			DIE("rename %s: %s", path, strerror(errno));
		return;
	}
	for (int tries = 0; tries < 60000; tries++) {
		int fd = open(path, O_RDONLY);
		if (fd >= 0) {
			ssize_t n = read(fd, id, sizeof *id);
			close(fd);
			if (n == (ssize_t)sizeof *id)
				return;
		}
		usleep(1000);
	}
	DIE("rank %d: no unique id from rank 0 after 60 s", rank);
}

/* Rank 0's view of the plugin trace: reads the records appended since the last call. */
struct trace_reader {
	char path[512];
	long pid; /* filter when the file is shared by all ranks (NCCLBPF_TRACE from outside) */
	long offset;
};

static void trace_scan(struct trace_reader *t, struct gb_decision *d)
{
	if (!t->path[0])
		return;
	FILE *f = fopen(t->path, "r");
	if (!f)
		return;
	char line[2048];
	if (fseek(f, t->offset, SEEK_SET) == 0)
		while (fgets(line, sizeof line, f)) {
			size_t n = strlen(line);
			if (!n || line[n - 1] != '\n')
				break; /* incomplete: read it next time */
			if (d)
				gb_decision_add_line(d, line, t->pid);
			t->offset += (long)n;
		}
	fclose(f);
}

static ncclResult_t launch(enum gb_op op, const void *sb, void *rb, size_t send, size_t recv,
			   ncclDataType_t dt, ncclComm_t comm, cudaStream_t s)
{
	switch (op) {
	case GB_ALLREDUCE:
		return ncclAllReduce(sb, rb, send, dt, ncclSum, comm, s);
	case GB_ALLGATHER:
		return ncclAllGather(sb, rb, send, dt, comm, s);
	case GB_REDUCESCATTER:
		return ncclReduceScatter(sb, rb, recv, dt, ncclSum, comm, s);
	default:
		return ncclBroadcast(sb, rb, send, dt, 0, comm, s);
	}
}

struct bufs {
	void *base;	   /* device allocation */
	const void *sb;	   /* send buffer */
	void *rb;	   /* receive buffer */
	size_t in_off;	   /* element offset of the input inside base (in-place) */
	size_t out_off;	   /* element offset of the result inside base */
	size_t base_elems; /* elements allocated */
	void *other;	   /* the second allocation out of place */
};

/* Fills the input (and poisons the output) for one run. Out of place: sb and rb are separate.
 * In place (NCCL's rules): AllGather's input is the rank's slice of the output, ReduceScatter's
 * output the rank's slice of the input, AllReduce/Broadcast use one buffer. */
static void prepare(const struct gb_opts *o, int rank, size_t send, size_t recv, struct bufs *b,
		    void *host)
{
	const struct gb_type *t = o->type;
	size_t ts = t->size;
	if (!o->in_place) {
		for (size_t i = 0; i < send; i++)
			gb_store(t, host, i, gb_input_value(rank, i));
		CUDACHECK(cudaMemcpy((void *)b->sb, host, send * ts, cudaMemcpyHostToDevice));
		CUDACHECK(cudaMemset(b->rb, 0xff, recv * ts)); /* poison: NaN / -1 everywhere */
		return;
	}
	memset(host, 0xff, b->base_elems * ts);
	for (size_t i = 0; i < send; i++)
		gb_store(t, host, b->in_off + i, gb_input_value(rank, i));
	CUDACHECK(cudaMemcpy(b->base, host, b->base_elems * ts, cudaMemcpyHostToDevice));
}

/* Returns the number of wrong elements of this rank's result. */
static unsigned long long check(const struct gb_opts *o, enum gb_op op, int rank, size_t recv,
				const struct bufs *b, void *host)
{
	const struct gb_type *t = o->type;
	const void *res = (const char *)b->rb;
	CUDACHECK(cudaMemcpy(host, res, recv * t->size, cudaMemcpyDeviceToHost));
	unsigned long long wrong = 0;
	for (size_t i = 0; i < recv; i++)
		if (gb_load(t, host, i) != gb_expected(op, t, rank, o->nranks, i, recv))
			wrong++;
	return wrong;
}

static void setup_bufs(const struct gb_opts *o, enum gb_op op, int rank, size_t send, size_t recv,
		       struct bufs *b)
{
	size_t ts = o->type->size;
	memset(b, 0, sizeof *b);
	if (!o->in_place) {
		void *sb;
		CUDACHECK(cudaMalloc(&sb, send * ts));
		CUDACHECK(cudaMalloc(&b->base, recv * ts));
		b->other = sb;
		b->sb = sb;
		b->rb = b->base;
		b->base_elems = recv;
		return;
	}
	size_t n = send > recv ? send : recv;
	CUDACHECK(cudaMalloc(&b->base, n * ts));
	b->base_elems = n;
	if (op == GB_ALLGATHER)
		b->in_off = (size_t)rank * send;
	if (op == GB_REDUCESCATTER)
		b->out_off = (size_t)rank * recv;
	b->sb = (const char *)b->base + b->in_off * ts;
	b->rb = (char *)b->base + b->out_off * ts;
}

static void free_bufs(struct bufs *b)
{
	CUDACHECK(cudaFree(b->base));
	if (b->other)
		CUDACHECK(cudaFree(b->other));
}

/* --target-ms: the slowest rank's time of one warm operation, exchanged with the benchmarked
 * collective itself (whatever NCCL_ALGO/NCCL_PROTO force must work for it), so that every rank
 * derives the same iteration count. Broadcast: rank 0's time. dev holds 2 x GB_MAX_RANKS. */
static double agree_time(enum gb_op op, double mine, int nranks, ncclComm_t comm, cudaStream_t s,
			 double *dev)
{
	double h[GB_MAX_RANKS], v = mine;
	size_t n = (size_t)nranks;
	for (size_t i = 0; i < n; i++)
		h[i] = mine;
	CUDACHECK(cudaMemcpy(dev, h, n * sizeof *h, cudaMemcpyHostToDevice));
	switch (op) {
	case GB_ALLREDUCE:
		NCCLCHECK(ncclAllReduce(dev, dev + n, 1, ncclFloat64, ncclMax, comm, s));
		break;
	case GB_ALLGATHER:
		NCCLCHECK(ncclAllGather(dev, dev + n, 1, ncclFloat64, comm, s));
		break;
	case GB_REDUCESCATTER:
		NCCLCHECK(ncclReduceScatter(dev, dev + n, 1, ncclFloat64, ncclMax, comm, s));
		break;
	default:
		NCCLCHECK(ncclBroadcast(dev, dev + n, 1, ncclFloat64, 0, comm, s));
		break;
	}
	CUDACHECK(cudaStreamSynchronize(s));
	size_t got = op == GB_ALLGATHER ? n : 1;
	CUDACHECK(cudaMemcpy(h, dev + n, got * sizeof *h, cudaMemcpyDeviceToHost));
	v = h[0];
	for (size_t i = 1; i < got; i++)
		if (h[i] > v)
			v = h[i];
	return v;
}

/* Times one size REPS times and checks a fresh run; fills r (wrong: this rank's count). With
 * --target-ms the last warm-up operation is timed to choose the iteration count; tr (rank 0's
 * trace reader, else NULL) then skips the records of the warm-up and of that exchange. */
static double timed_block(enum gb_op op, const struct bufs *b, size_t send, size_t recv,
			  ncclDataType_t dt, ncclComm_t comm, cudaStream_t s, int iters,
			  cudaEvent_t t0, cudaEvent_t t1)
{
	CUDACHECK(cudaEventRecord(t0, s));
	for (int i = 0; i < iters; i++)
		NCCLCHECK(launch(op, b->sb, b->rb, send, recv, dt, comm, s));
	CUDACHECK(cudaEventRecord(t1, s));
	CUDACHECK(cudaStreamSynchronize(s));
	float ms = 0;
	CUDACHECK(cudaEventElapsedTime(&ms, t0, t1));
	return ms * 1000.0 / iters;
}

/* --ab: per repetition one block with each bundle, the order alternating. Every rank switches
 * its own plugin and waits until the new version is active; the warm-up operations after the
 * switch complete only once every rank has switched, so each timed block runs one bundle on
 * all ranks. */
static void run_ab(const struct gb_opts *o, enum gb_op op, const struct bufs *b, size_t send,
		   size_t recv, ncclDataType_t dt, ncclComm_t comm, cudaStream_t s, int iters,
		   cudaEvent_t t0, cudaEvent_t t1, struct gb_swap *swap, struct gb_row *r)
{
	static double us[2][1000];
	for (int rep = 0; rep < o->reps; rep++)
		for (int j = 0; j < 2; j++) {
			int test = (j + rep) % 2;
			char err[600];
			if (gb_swap_to(swap, test ? o->ab_test : o->ab_base, 10000, err,
				       sizeof err) != 0)
				DIE("rank %d: --ab: %s", g_rank, err);
			for (int i = 0; i < o->warmup; i++)
				NCCLCHECK(launch(op, b->sb, b->rb, send, recv, dt, comm, s));
			CUDACHECK(cudaStreamSynchronize(s));
			us[test][rep] = timed_block(op, b, send, recv, dt, comm, s, iters, t0, t1);
		}
	gb_stats_of(us[0], o->reps, &r->time_us);
	gb_ab_stats(us[0], us[1], o->reps, &r->ab);
}

static void run_size(const struct gb_opts *o, enum gb_op op, size_t bytes, int rank,
		     ncclComm_t comm, cudaStream_t s, void *host, struct gb_row *r,
		     double *dev_scratch, struct trace_reader *tr, struct gb_swap *swap)
{
	size_t send, recv, size;
	gb_counts(op, bytes, o->nranks, o->type->size, &send, &recv, &size);
	r->op = op;
	r->size = size;
	r->count = size / o->type->size;
	ncclDataType_t dt = (ncclDataType_t)o->type->nccl;
	struct bufs b;
	setup_bufs(o, op, rank, send, recv, &b);
	prepare(o, rank, send, recv, &b, host);

	cudaEvent_t t0, t1;
	CUDACHECK(cudaEventCreate(&t0));
	CUDACHECK(cudaEventCreate(&t1));
	int timed_warmup = o->target_ms > 0 && o->warmup > 0;
	for (int i = 0; i < o->warmup - timed_warmup; i++)
		NCCLCHECK(launch(op, b.sb, b.rb, send, recv, dt, comm, s));
	int iters = o->iters;
	if (timed_warmup) {
		float ms = 0;
		CUDACHECK(cudaStreamSynchronize(s));
		CUDACHECK(cudaEventRecord(t0, s));
		NCCLCHECK(launch(op, b.sb, b.rb, send, recv, dt, comm, s));
		CUDACHECK(cudaEventRecord(t1, s));
		CUDACHECK(cudaStreamSynchronize(s));
		CUDACHECK(cudaEventElapsedTime(&ms, t0, t1));
		double op_us = agree_time(op, ms * 1000.0, o->nranks, comm, s, dev_scratch);
		iters = gb_adapt_iters(op_us, o->target_ms, o->reps, o->iters);
		if (tr)
			trace_scan(tr, NULL);
	}
	r->iters = iters;
	if (swap) {
		run_ab(o, op, &b, send, recv, dt, comm, s, iters, t0, t1, swap, r);
	} else {
		double us[1000];
		for (int rep = 0; rep < o->reps; rep++)
			us[rep] = timed_block(op, &b, send, recv, dt, comm, s, iters, t0, t1);
		gb_stats_of(us, o->reps, &r->time_us);
	}

	r->wrong = 0;
	if (o->check) {
		/* A fresh run on freshly written input and poisoned output. */
		prepare(o, rank, send, recv, &b, host);
		NCCLCHECK(launch(op, b.sb, b.rb, send, recv, dt, comm, s));
		CUDACHECK(cudaStreamSynchronize(s));
		r->wrong = check(o, op, rank, recv, &b, host);
	}
	CUDACHECK(cudaEventDestroy(t0));
	CUDACHECK(cudaEventDestroy(t1));
	free_bufs(&b);
}

/* Sum of every rank's wrong count, through NCCL itself (so rank 0 can print it per row). */
static unsigned long long sum_wrong(unsigned long long mine, ncclComm_t comm, cudaStream_t s,
				    unsigned long long *dev)
{
	unsigned long long total = 0;
	CUDACHECK(cudaMemcpy(dev, &mine, sizeof mine, cudaMemcpyHostToDevice));
	NCCLCHECK(ncclAllReduce(dev, dev, 1, ncclUint64, ncclSum, comm, s));
	CUDACHECK(cudaStreamSynchronize(s));
	CUDACHECK(cudaMemcpy(&total, dev, sizeof total, cudaMemcpyDeviceToHost));
	return total;
}

static int rank_main(const struct gb_opts *o, const char *dir, int rank, int wrong_fd)
{
	g_rank = rank;
	char buf[600];
	int ngpus = 0;
	struct trace_reader tr = {.pid = 0};
	/* Per-rank settings must exist before NCCL reads them. */
	snprintf(buf, sizeof buf, "gpubench-host-%d", rank);
	setenv("NCCL_HOSTID", buf, 1);
	setenv("NCCL_NVLS_ENABLE", "0", 1);
	if (o->no_plugin)
		setenv("NCCL_TUNER_PLUGIN", "none", 1);
	else if (o->plugin)
		setenv("NCCL_TUNER_PLUGIN", o->plugin, 1);
	if (o->policy)
		setenv("NCCLBPF_POLICY", o->policy, 1);
	struct gb_swap swap_state, *swap = NULL;
	if (o->ab_base[0]) {
		/* Each rank its own live file (its own watcher), starting with the base bundle. */
		snprintf(buf, sizeof buf, "%s/ab-policy.rank%d.o", dir, rank);
		gb_swap_init(&swap_state, buf);
		char err[600];
		if (install_file(o->ab_base, buf, err, sizeof err) != 0)
			DIE("rank %d: --ab: %s", rank, err);
		setenv("NCCLBPF_POLICY", buf, 1);
		swap = &swap_state;
	}
	const char *trace_dir = ncclbpf_env_str("GPUBENCH_TRACE_DIR");
	const char *trace = ncclbpf_env_str("NCCLBPF_TRACE");
	if (trace_dir && !o->no_plugin) {
		snprintf(tr.path, sizeof tr.path, "%s/trace.rank%d", trace_dir, rank);
		setenv("NCCLBPF_TRACE", tr.path, 1);
	} else if (trace && !o->no_plugin) {
		snprintf(tr.path, sizeof tr.path, "%s", trace);
		tr.pid = (long)getpid(); /* shared by all ranks: keep our own records */
	}
	struct stat st;
	if (tr.path[0] && stat(tr.path, &st) == 0)
		tr.offset = (long)st.st_size; /* an older run's records are not ours */

	FILE *csv = NULL;
	if (rank == 0 && o->csv) {
		csv = fopen(o->csv, "w");
		if (!csv)
			DIE("cannot write %s: %s", o->csv, strerror(errno));
		fprintf(csv, "%s\n", gb_csv_header);
		fflush(csv);
	}

	ncclUniqueId id;
	share_unique_id(dir, rank, &id);
	CUDACHECK(cudaGetDeviceCount(&ngpus));
	if (ngpus < 1)
		DIE("no GPU");
	CUDACHECK(cudaSetDevice(rank % ngpus));
	ncclComm_t comm, half = NULL;
	NCCLCHECK(ncclCommInitRank(&comm, o->nranks, id, rank));
	/* --split: the second communicator, and its view of the options (ranks, this rank) */
	struct gb_opts ho = *o;
	int hrank = 0;
	if (o->split) {
		NCCLCHECK(ncclCommSplit(comm, rank % 2, rank, &half, NULL));
		NCCLCHECK(ncclCommCount(half, &ho.nranks));
		NCCLCHECK(ncclCommUserRank(half, &hrank));
		ho.reps = 1; /* its times are not reported */
	}
	cudaStream_t s;
	CUDACHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	unsigned long long *dev_wrong;
	CUDACHECK(cudaMalloc((void **)&dev_wrong, sizeof *dev_wrong));
	double *dev_scratch;
	CUDACHECK(cudaMalloc((void **)&dev_scratch, 2 * GB_MAX_RANKS * sizeof *dev_scratch));

	/* Largest buffer: max_bytes rounded up to whole elements plus one element per rank. */
	size_t max_elems = o->max_bytes / o->type->size + (size_t)o->nranks + 1;
	void *host = malloc(max_elems * o->type->size);
	if (!host)
		DIE("out of memory");
	unsigned long long total_wrong = 0;
	for (int op = 0; op < GB_NOPS; op++) {
		if (!o->ops[op])
			continue;
		if (rank == 0) {
			gb_print_header(stdout, o, (enum gb_op)op, ngpus);
			fflush(stdout);
		}
		for (size_t bytes = o->min_bytes; bytes;
		     bytes = gb_next_size(bytes, o->factor, o->max_bytes)) {
			struct gb_row r;
			memset(&r, 0, sizeof r);
			run_size(o, (enum gb_op)op, bytes, rank, comm, s, host, &r, dev_scratch,
				 rank == 0 ? &tr : NULL, swap);
			struct gb_decision d;
			gb_decision_reset(&d);
			if (rank == 0)
				trace_scan(&tr, &d);
			if (half) {
				struct gb_row hr;
				memset(&hr, 0, sizeof hr);
				run_size(&ho, (enum gb_op)op, bytes, hrank, half, s, host, &hr,
					 dev_scratch, NULL, NULL);
				r.wrong += hr.wrong;
				if (rank == 0)
					trace_scan(&tr, NULL); /* the rows show the first's */
			}
			if (o->check)
				r.wrong = sum_wrong(r.wrong, comm, s, dev_wrong);
			if (rank == 0) {
				trace_scan(&tr, NULL); /* skip the count's own AllReduce */
				total_wrong += r.wrong;
				gb_decision_strings(&d, o, r.algo, r.proto, r.ch);
				gb_print_row(stdout, o, &r);
				if (swap)
					gb_print_ab(stdout, o, &r);
				fflush(stdout);
				if (csv) {
					gb_print_csv_row(csv, o, &r);
					fflush(csv);
				}
			}
		}
	}
	free(host);
	if (swap) {
		gb_swap_close(swap);
		unlink(swap->live);
	}
	if (o->hold_s > 0) {
		/* The timeout (if any) still runs: --timeout must exceed the run plus the hold. */
		printf("gpubench: rank %d pid %d holding %d s\n", rank, (int)getpid(), o->hold_s);
		fflush(stdout);
		sleep((unsigned)o->hold_s);
	}
	CUDACHECK(cudaFree(dev_wrong));
	CUDACHECK(cudaFree(dev_scratch));
	if (half)
		NCCLCHECK(ncclCommDestroy(half));
	NCCLCHECK(ncclCommDestroy(comm));
	if (csv && fclose(csv))
		DIE("writing %s: %s", o->csv, strerror(errno));
	if (rank == 0 &&
	    write(wrong_fd, &total_wrong, sizeof total_wrong) != (ssize_t)sizeof total_wrong)
		return 2;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Waits for every rank. A rank that fails ends the others (they would wait for it in NCCL
 * forever); so does the timeout. Returns 0, 1 (a rank failed) or 3 (timeout). */
static int wait_ranks(pid_t *pids, int n, int timeout_s)
{
	int alive = n, rc = 0;
	double deadline = timeout_s > 0 ? now_s() + timeout_s : 0;
	while (alive > 0) {
		int st = 0;
		pid_t p = waitpid(-1, &st, WNOHANG);
		if (p < 0 && errno != EINTR)
			break;
		if (p > 0) {
			for (int r = 0; r < n; r++) {
				if (pids[r] != p)
					continue;
				pids[r] = 0;
				alive--;
				if (!WIFEXITED(st) || WEXITSTATUS(st)) {
					if (!rc)
						fprintf(stderr,
							"gpubench: rank %d failed (%s %d); ending "
							"the others\n",
							r, WIFEXITED(st) ? "exit" : "signal",
							WIFEXITED(st) ? WEXITSTATUS(st)
								      : WTERMSIG(st));
					if (!rc)
						rc = 1;
					for (int k = 0; k < n; k++)
						if (pids[k] > 0)
							kill(pids[k], SIGKILL);
				}
			}
			continue;
		}
		if (deadline > 0 && now_s() > deadline && rc != 3) {
			fprintf(stderr, "gpubench: timeout after %d s; ending all ranks\n",
				timeout_s);
			rc = 3;
			for (int k = 0; k < n; k++)
				if (pids[k] > 0)
					kill(pids[k], SIGKILL);
		}
		usleep(10000);
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct gb_opts o;
	char err[512];
	int pr = gb_parse_args(argc, argv, &o, err, sizeof err);
	if (pr == 1) {
		gb_usage(stdout);
		return 0;
	}
	if (pr < 0) {
		fprintf(stderr, "gpubench: %s\n", err);
		gb_usage(stderr);
		return 2;
	}
	/* Forced settings go into the environment the ranks inherit; nothing here touches CUDA
	 * or NCCL before the fork. */
	const char *names[4];
	char values[4][32];
	int nenv = gb_forced_env(&o, names, values);
	for (int i = 0; i < nenv; i++) {
		setenv(names[i], values[i], 1);
		fprintf(stderr, "gpubench: %s=%s\n", names[i], values[i]);
	}
	if (o.env_forced)
		fprintf(stderr, "gpubench: NCCL_ALGO/NCCL_PROTO/NCCL_M*_NCHANNELS set in the "
				"environment: rows are labelled env:\n");
	char dir[] = "/tmp/gpubench-XXXXXX";
	if (!mkdtemp(dir))
		DIE("mkdtemp: %s", strerror(errno));
	int pipefd[2];
	if (pipe(pipefd))
		DIE("pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid_t pids[GB_MAX_RANKS];
	for (int r = 0; r < o.nranks; r++) {
		pids[r] = fork();
		if (pids[r] < 0) {
			fprintf(stderr, "gpubench: fork: %s\n", strerror(errno));
			for (int k = 0; k < r; k++)
				kill(pids[k], SIGKILL);
			return 2;
		}
		if (pids[r] == 0) {
			close(pipefd[0]);
			fflush(stdout);
			_exit(rank_main(&o, dir, r, pipefd[1]));
		}
	}
	close(pipefd[1]);
	int rc = wait_ranks(pids, o.nranks, o.timeout_s);
	unsigned long long total = 0;
	int reports = 0;
	if (read(pipefd[0], &total, sizeof total) == (ssize_t)sizeof total)
		reports = 1;
	close(pipefd[0]);
	char path[600];
	snprintf(path, sizeof path, "%s/nccl-unique-id", dir);
	unlink(path);
	for (int r = 0; o.ab_base[0] && r < o.nranks; r++) {
		/* A rank that failed leaves its --ab files. */
		snprintf(path, sizeof path, "%s/ab-policy.rank%d.o", dir, r);
		unlink(path);
		snprintf(path, sizeof path, "%s/ab-policy.rank%d.o.ncclbpf-%d.tmp", dir, r,
			 (int)pids[r]);
		unlink(path);
	}
	rmdir(dir);
	if (rc || !reports) {
		fprintf(stderr, "gpubench: FAILED (%s)\n",
			rc == 3 ? "timeout"
			: rc	? "a rank failed"
				: "rank 0 reported nothing");
		return rc ? rc : 1;
	}
	printf("# %s: %llu wrong elements over all ranks and sizes\n",
	       total ? "FAILED" : (o.check ? "OK" : "unchecked"), total);
	return total ? 1 : 0;
}
