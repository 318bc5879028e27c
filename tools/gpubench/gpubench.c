/* ncclbpf-gpubench: NCCL collectives over a size sweep, nccl-tests style, with or without our
 * plugin. It launches N ranks as processes (forked before anything touches CUDA or NCCL), each on
 * GPU rank % nGPUs; ranks sharing a GPU get distinct NCCL_HOSTIDs, so NCCL sees one node per
 * rank and moves data through its network transport.
 *
 * Rank 0 prints one row per size: bytes, count, type, time, algorithm and bus bandwidth, and the
 * result check (every rank compares the whole output with the exact expected values). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

enum op { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCESCATTER, OP_BROADCAST, OP_COUNT };
static const char *op_names[OP_COUNT] = {"allreduce", "allgather", "reducescatter", "broadcast"};

struct opts {
	int nranks;
	int ops[OP_COUNT];
	size_t min_bytes, max_bytes;
	int iters, warmup;
	int check;
	int in_place;
	const char *plugin; /* NCCL_TUNER_PLUGIN value, NULL = leave the environment alone */
	const char *policy; /* NCCLBPF_POLICY */
	const char *outdir; /* per-rank files (unique id, traces) */
	int no_plugin;
};

#define DIE(...)                                                                                   \
	do {                                                                                       \
		fprintf(stderr, "gpubench: " __VA_ARGS__);                                         \
		fputc('\n', stderr);                                                               \
		exit(2);                                                                           \
	} while (0)
#define CUDACHECK(call)                                                                            \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess)                                                             \
			DIE("rank %d: %s failed: %s", g_rank, #call, cudaGetErrorString(e_));      \
	} while (0)
#define NCCLCHECK(call)                                                                            \
	do {                                                                                       \
		ncclResult_t r_ = (call);                                                          \
		if (r_ != ncclSuccess)                                                             \
			DIE("rank %d: %s failed: %s", g_rank, #call, ncclGetErrorString(r_));      \
	} while (0)

static int g_rank = -1;

static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0)
		DIE("bad size '%s'", s);
	switch (*end) {
	case 'k':
	case 'K':
		v *= 1024;
		break;
	case 'm':
	case 'M':
		v *= 1024 * 1024;
		break;
	case 'g':
	case 'G':
		v *= 1024.0 * 1024 * 1024;
		break;
	case '\0':
		break;
	default:
		DIE("bad size suffix in '%s'", s);
	}
	return (size_t)v;
}

/* Exchanges the unique id through a file: rank 0 writes it atomically (rename), others poll. */
static void share_unique_id(const struct opts *o, int rank, ncclUniqueId *id)
{
	char path[512], tmp[600];
	snprintf(path, sizeof path, "%s/nccl-unique-id", o->outdir);
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

/* Input element i of rank r: small integers so float sums are exact. */
static float input_value(int rank, size_t i)
{
	return (float)((rank + 1) * 3 + (int)(i % 7));
}

static double bus_factor(enum op op, int n)
{
	switch (op) {
	case OP_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case OP_ALLGATHER:
	case OP_REDUCESCATTER:
		return (double)(n - 1) / n;
	default:
		return 1.0;
	}
}

/* Counts as nccl-tests reports them: "size" is the largest buffer (AG output, RS input). */
static void counts(enum op op, size_t bytes, int n, size_t *send, size_t *recv, size_t *size)
{
	size_t elems = bytes / sizeof(float);
	if (op == OP_ALLGATHER || op == OP_REDUCESCATTER)
		elems = elems / n * n;
	if (elems == 0)
		elems = (op == OP_ALLGATHER || op == OP_REDUCESCATTER) ? (size_t)n : 1;
	*size = elems * sizeof(float);
	switch (op) {
	case OP_ALLGATHER:
		*send = elems / n;
		*recv = elems;
		break;
	case OP_REDUCESCATTER:
		*send = elems;
		*recv = elems / n;
		break;
	default:
		*send = elems;
		*recv = elems;
		break;
	}
}

static ncclResult_t launch(enum op op, const void *sb, void *rb, size_t send, size_t recv,
			   ncclComm_t comm, cudaStream_t s)
{
	switch (op) {
	case OP_ALLREDUCE:
		return ncclAllReduce(sb, rb, send, ncclFloat, ncclSum, comm, s);
	case OP_ALLGATHER:
		return ncclAllGather(sb, rb, send, ncclFloat, comm, s);
	case OP_REDUCESCATTER:
		return ncclReduceScatter(sb, rb, recv, ncclFloat, ncclSum, comm, s);
	default:
		return ncclBroadcast(sb, rb, send, ncclFloat, 0, comm, s);
	}
}

static float expected(enum op op, int rank, int n, size_t i, size_t recv)
{
	switch (op) {
	case OP_ALLREDUCE: {
		float sum = 0;
		for (int r = 0; r < n; r++)
			sum += input_value(r, i);
		return sum;
	}
	case OP_ALLGATHER: {
		size_t per = recv / n;
		return input_value((int)(i / per), i % per);
	}
	case OP_REDUCESCATTER: {
		float sum = 0;
		for (int r = 0; r < n; r++)
			sum += input_value(r, (size_t)rank * recv + i);
		return sum;
	}
	default:
		return input_value(0, i);
	}
}

/* Returns the number of wrong elements on this rank. */
static size_t run_size(const struct opts *o, enum op op, size_t bytes, int rank, ncclComm_t comm,
		       cudaStream_t s, float *host, double *us_out, size_t *size_out)
{
	size_t send, recv, size;
	counts(op, bytes, o->nranks, &send, &recv, &size);
	*size_out = size;
	void *sb, *rb;
	CUDACHECK(cudaMalloc(&sb, send * sizeof(float)));
	CUDACHECK(cudaMalloc(&rb, recv * sizeof(float)));
	for (size_t i = 0; i < send; i++)
		host[i] = input_value(rank, i);
	CUDACHECK(cudaMemcpy(sb, host, send * sizeof(float), cudaMemcpyHostToDevice));
	CUDACHECK(cudaMemset(rb, 0xff, recv * sizeof(float))); /* poison: NaN everywhere */

	cudaEvent_t t0, t1;
	CUDACHECK(cudaEventCreate(&t0));
	CUDACHECK(cudaEventCreate(&t1));
	for (int i = 0; i < o->warmup; i++)
		NCCLCHECK(launch(op, sb, rb, send, recv, comm, s));
	CUDACHECK(cudaEventRecord(t0, s));
	for (int i = 0; i < o->iters; i++)
		NCCLCHECK(launch(op, sb, rb, send, recv, comm, s));
	CUDACHECK(cudaEventRecord(t1, s));
	CUDACHECK(cudaStreamSynchronize(s));
	float ms = 0;
	CUDACHECK(cudaEventElapsedTime(&ms, t0, t1));
	*us_out = ms * 1000.0 / o->iters;

	size_t wrong = 0;
	if (o->check) {
		/* Check a fresh run: poison, one collective, compare every element. */
		CUDACHECK(cudaMemset(rb, 0xff, recv * sizeof(float)));
		NCCLCHECK(launch(op, sb, rb, send, recv, comm, s));
		CUDACHECK(cudaStreamSynchronize(s));
		CUDACHECK(cudaMemcpy(host, rb, recv * sizeof(float), cudaMemcpyDeviceToHost));
		for (size_t i = 0; i < recv; i++)
			if (host[i] != expected(op, rank, o->nranks, i, recv))
				wrong++;
	}
	CUDACHECK(cudaEventDestroy(t0));
	CUDACHECK(cudaEventDestroy(t1));
	CUDACHECK(cudaFree(sb));
	CUDACHECK(cudaFree(rb));
	return wrong;
}

static int rank_main(const struct opts *o, int rank, int wrong_fd)
{
	g_rank = rank;
	char buf[64];
	int ngpus = 0;
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
	if (getenv("GPUBENCH_TRACE_DIR")) {
		char path[512];
		snprintf(path, sizeof path, "%s/trace.rank%d", getenv("GPUBENCH_TRACE_DIR"), rank);
		setenv("NCCLBPF_TRACE", path, 1);
	}

	ncclUniqueId id;
	share_unique_id(o, rank, &id);
	CUDACHECK(cudaGetDeviceCount(&ngpus));
	if (ngpus < 1)
		DIE("no GPU");
	CUDACHECK(cudaSetDevice(rank % ngpus));
	ncclComm_t comm;
	NCCLCHECK(ncclCommInitRank(&comm, o->nranks, id, rank));
	cudaStream_t s;
	CUDACHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

	size_t max_elems = o->max_bytes / sizeof(float) + (size_t)o->nranks;
	float *host = malloc(max_elems * sizeof(float));
	if (!host)
		DIE("out of memory");
	unsigned long long total_wrong = 0;
	for (int op = 0; op < OP_COUNT; op++) {
		if (!o->ops[op])
			continue;
		if (rank == 0) {
			printf(
			    "# %s, %d ranks on %d GPU(s), float, sum, %d iters (+%d warm-up), %s\n",
			    op_names[op], o->nranks, ngpus, o->iters, o->warmup,
			    o->no_plugin ? "no tuner plugin"
					 : (o->policy ? o->policy : "default tuner"));
			printf("%12s %12s %6s %10s %10s %10s %8s\n", "size(B)", "count", "type",
			       "time(us)", "algbw", "busbw", "#wrong");
		}
		for (size_t bytes = o->min_bytes; bytes <= o->max_bytes; bytes *= 2) {
			double us;
			size_t size;
			size_t wrong =
			    run_size(o, (enum op)op, bytes, rank, comm, s, host, &us, &size);
			total_wrong += wrong;
			double algbw = size / us / 1e3; /* GB/s */
			if (rank == 0)
				printf("%12zu %12zu %6s %10.2f %10.3f %10.3f %8zu\n", size,
				       size / sizeof(float), "float", us, algbw,
				       algbw * bus_factor((enum op)op, o->nranks), wrong);
			if (bytes == 0)
				break;
		}
		if (rank == 0)
			fflush(stdout);
	}
	free(host);
	NCCLCHECK(ncclCommDestroy(comm));
	if (write(wrong_fd, &total_wrong, sizeof total_wrong) != sizeof total_wrong)
		return 2;
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ncclbpf-gpubench [-n RANKS] [-o "
		"allreduce,allgather,reducescatter,broadcast|all]\n"
		"         [-b MIN] [-e MAX] [-i ITERS] [-w WARMUP] [--no-check]\n"
		"         [--plugin LIB] [--policy BUNDLE] [--no-plugin]\n"
		"  Ranks are processes on GPU rank %% nGPUs with distinct NCCL_HOSTIDs.\n"
		"  --plugin sets NCCL_TUNER_PLUGIN, --policy NCCLBPF_POLICY, --no-plugin\n"
		"  NCCL_TUNER_PLUGIN=none. GPUBENCH_TRACE_DIR=dir records each rank's tuner calls\n"
		"  (NCCLBPF_TRACE) as dir/trace.rankN.\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = {.nranks = 2,
			 .min_bytes = 8,
			 .max_bytes = 64 << 20,
			 .iters = 20,
			 .warmup = 5,
			 .check = 1};
	o.ops[OP_ALLREDUCE] = 1;
	static const struct option lo[] = {
	    {"no-check", no_argument, 0, 'C'},	   {"plugin", required_argument, 0, 'P'},
	    {"policy", required_argument, 0, 'Y'}, {"no-plugin", no_argument, 0, 'N'},
	    {"help", no_argument, 0, 'h'},	   {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "n:o:b:e:i:w:h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			o.nranks = atoi(optarg);
			break;
		case 'o':
			memset(o.ops, 0, sizeof o.ops);
			for (char *save, *t = strtok_r(optarg, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				int found = 0;
				for (int i = 0; i < OP_COUNT; i++)
					if (!strcmp(t, "all") || !strcmp(t, op_names[i]))
						o.ops[i] = found = 1;
				if (!found)
					DIE("unknown collective '%s'", t);
			}
			break;
		case 'b':
			o.min_bytes = parse_size(optarg);
			break;
		case 'e':
			o.max_bytes = parse_size(optarg);
			break;
		case 'i':
			o.iters = atoi(optarg);
			break;
		case 'w':
			o.warmup = atoi(optarg);
			break;
		case 'C':
			o.check = 0;
			break;
		case 'P':
			o.plugin = optarg;
			break;
		case 'Y':
			o.policy = optarg;
			break;
		case 'N':
			o.no_plugin = 1;
			break;
		default:
			usage();
		}
	}
	if (o.nranks < 1 || o.nranks > 64 || o.iters < 1 || o.warmup < 0 || o.min_bytes < 4 ||
	    o.max_bytes < o.min_bytes)
		usage();
	char dir[] = "/tmp/gpubench-XXXXXX";
	if (!mkdtemp(dir))
		DIE("mkdtemp: %s", strerror(errno));
	o.outdir = dir;
	int pipefd[2];
	if (pipe(pipefd))
		DIE("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pids[64];
	for (int r = 0; r < o.nranks; r++) {
		pids[r] = fork();
		if (pids[r] < 0)
			DIE("fork: %s", strerror(errno));
		if (pids[r] == 0) {
			close(pipefd[0]);
			_exit(rank_main(&o, r, pipefd[1]));
		}
	}
	close(pipefd[1]);
	int failed = 0;
	for (int r = 0; r < o.nranks; r++) {
		int st;
		if (waitpid(pids[r], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "gpubench: rank %d failed (status 0x%x)\n", r, st);
			failed = 1;
		}
	}
	unsigned long long wrong, total = 0;
	int reports = 0;
	while (read(pipefd[0], &wrong, sizeof wrong) == sizeof wrong) {
		total += wrong;
		reports++;
	}
	char path[600];
	snprintf(path, sizeof path, "%s/nccl-unique-id", dir);
	unlink(path);
	rmdir(dir);
	if (failed || reports != o.nranks) {
		fprintf(stderr, "gpubench: FAILED (%d of %d ranks reported)\n", reports, o.nranks);
		return 1;
	}
	printf("# %s: %llu wrong elements over all ranks and sizes\n",
	       total ? "FAILED" : (o.check ? "OK" : "unchecked"), total);
	return total ? 1 : 0;
}
