/* Built-in telemetry end to end, with the profiler tables driven as NCCL 2.28 drives them (the
 * adapter and runtime linked in): the activation mask follows the configuration; finished
 * collectives land in the right cells (count, execution-time histogram, bytes, bus bytes,
 * algorithm/protocol) with nccl-tests' definitions; the Prometheus text parses under a strict
 * parser with exactly the documented names and labels; communicators beyond the slots are
 * counted; JSON lines are sampled every Nth above a size floor and parse as JSON with the
 * documented fields; the textfile is replaced atomically (a reader never sees a partial file
 * while it is rewritten a hundred times and more) and removed at the end; a directory that cannot
 * be written or fills up degrades to one WARN; a FIFO or another user's file planted at the JSON
 * lines file's name in a shared directory is refused with a WARN, never waited on or written;
 * HTTP /metrics answers only GET /metrics, within bounds.
 *
 * usage: test_telemetry */
#include <arpa/inet.h>
#include <dirent.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "check.h"
#include "json_tree.h"
#include "ncclbpf/proc_registry.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/telemetry.h"
#include "prom_text.h"
#include "telem_harness.h"

static char host[256];

static char *render(struct prom_doc *d)
{
	size_t cap = 8u << 20;
	char *buf = malloc(cap);
	size_t n = ncclbpf_telem_prometheus(buf, cap);
	CHECK(n > 0);
	if (prom_parse(d, buf, n) != 0) {
		CHECKF(0, "Prometheus text rejected: %s", d->err);
		fwrite(buf, 1, n, stderr);
	}
	return buf;
}

/* The one sample of name whose labels include every (name, value) pair given (NULL-ended). */
static const struct prom_sample *find(const struct prom_doc *d, const char *name, ...)
{
	const struct prom_sample *hit = NULL;
	int hits = 0;
	for (int i = 0; i < d->n; i++) {
		const struct prom_sample *s = &d->s[i];
		if (strcmp(s->name, name))
			continue;
		va_list ap;
		va_start(ap, name);
		int ok = 1;
		for (const char *k = va_arg(ap, const char *); k; k = va_arg(ap, const char *)) {
			const char *v = va_arg(ap, const char *), *got = prom_label(s, k);
			ok &= got && !strcmp(got, v);
		}
		va_end(ap);
		if (ok) {
			hit = s;
			hits++;
		}
	}
	return hits == 1 ? hit : NULL;
}

/* --- The mask ------------------------------------------------------------------------------ */

static void test_mask(void)
{
	th_env_clear();
	void *c = th_comm(0x10, NULL, 2, 0);
	CHECK_EQ_U64(th_mask, 0); /* no policy, telemetry off: NCCL sends nothing */
	CHECK(!ncclbpf_telem_enabled());
	th_finalize(c);
	setenv("NCCLBPF_TELEMETRY", "1", 1);
	c = th_comm(0x11, NULL, 2, 0);
	CHECK(ncclbpf_telem_enabled());
	CHECK_EQ_U64(th_mask, ncclProfileColl | ncclProfileKernelCh);
	th_finalize(c);
	/* An export alone turns it on. */
	th_env_clear();
	setenv("NCCLBPF_PROM_PORT", "0", 1);
	setenv("NCCLBPF_JSONL_DIR", "/nonexistent-dir-of-the-test", 1);
	setenv("NCCLBPF_TELEMETRY", "0", 1); /* ... unless turned off */
	c = th_comm(0x12, NULL, 2, 0);
	CHECK(!ncclbpf_telem_enabled());
	CHECK_EQ_U64(th_mask, 0);
	th_finalize(c);
}

/* --- Tables and the Prometheus text ------------------------------------------------------------
 */

/* le of the histogram bucket holding t ns: the smallest 2^k us (k <= 20) not below it. */
static double le_of(uint64_t t)
{
	for (int k = 0; k <= 20; k++)
		if ((double)t <= 1000.0 * (double)(1ull << k))
			return (double)(1ull << k) / 1e6;
	return INFINITY;
}

static double bucket_at(const struct prom_doc *d, const char *comm, const char *coll,
			const char *size, double le)
{
	for (int i = 0; i < d->n; i++) {
		const struct prom_sample *s = &d->s[i];
		if (strcmp(s->name, "ncclbpf_coll_exec_seconds_bucket") ||
		    strcmp(prom_label(s, "comm"), comm) || strcmp(prom_label(s, "coll"), coll) ||
		    strcmp(prom_label(s, "size"), size))
			continue;
		double l = isinf(le) ? INFINITY : strtod(prom_label(s, "le"), NULL);
		if (isinf(le) ? !strcmp(prom_label(s, "le"), "+Inf") : fabs(l - le) < 1e-12)
			return s->value;
	}
	return -1;
}

static void test_tables(void)
{
	th_env_clear();
	setenv("NCCLBPF_TELEMETRY", "1", 1);
	setenv("SLURM_JOB_ID", "4242", 1);
	setenv("RANK", "7", 1);
	setenv("LOCAL_RANK", "2", 1);
	setenv("CUDA_VISIBLE_DEVICES", "0,1,5,6", 1);
	const char *comm = "0000000000000abc";
	void *c = th_comm(0xabc, "dp \"group\" 0", 4, 1);
	enum { N = 20 };
	uint64_t sum_ar = 0;
	for (int i = 0; i < N; i++) {
		/* AllReduce of 1 MiB (262144 floats), 2 channels, 100 .. 290 us (+13 ns). */
		uint64_t dur = 100000 + 10000 * (uint64_t)i;
		th_coll(c, 1, (uint64_t)i, "AllReduce", 262144, "ncclFloat32", 2, "RING", "SIMPLE",
			1000000000ull * (uint64_t)(i + 1), dur);
		sum_ar += dur + 13;
	}
	/* AllGather of 1024 bf16 per rank: 2 KiB each, 8 KiB for the 4 ranks; 4 channels. */
	for (int i = 0; i < 5; i++)
		th_coll(c, 1, 100 + (uint64_t)i, "AllGather", 1024, "ncclBfloat16", 4,
			i < 3 ? "RING" : "TREE", "LL", 5000000000ull, 5000);

	struct prom_doc d;
	char *buf = render(&d);
	/* Families and types. */
	static const char *const want[][2] = {
	    {"ncclbpf_process_info", "gauge"},
	    {"ncclbpf_coll_exec_seconds", "histogram"},
	    {"ncclbpf_coll_bytes_total", "counter"},
	    {"ncclbpf_coll_bus_bytes_total", "counter"},
	    {"ncclbpf_coll_algbw_gbps", "gauge"},
	    {"ncclbpf_coll_busbw_gbps", "gauge"},
	    {"ncclbpf_coll_algo_proto_total", "counter"},
	    {"ncclbpf_telemetry_comms", "gauge"},
	    {"ncclbpf_telemetry_comms_overflow_total", "counter"},
	    {"ncclbpf_policy_version", "gauge"},
	    {"ncclbpf_policy_reloads_total", "counter"},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *t = prom_type_of(&d, want[i][0]);
		CHECKF(t && !strcmp(t, want[i][1]), "%s: type %s", want[i][0], t ? t : "(none)");
	}
	/* Labels: the job's environment, the communicator, the cell. */
	const struct prom_sample *s =
	    find(&d, "ncclbpf_coll_exec_seconds_count", "comm", comm, "coll", "AllReduce", NULL);
	CHECK(s != NULL);
	if (s) {
		static const char *const labels[][2] = {
		    {"job_id", "4242"}, {"rank", "7"},	     {"local_rank", "2"},
		    {"gpu", "5"},	{"comm_size", "4"},  {"comm_rank", "1"},
		    {"n_nodes", "1"},	{"size", "1048576"}, {"comm_name", "dp _group_ 0"},
		};
		for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
			const char *v = prom_label(s, labels[i][0]);
			CHECKF(v && !strcmp(v, labels[i][1]), "label %s=%s", labels[i][0],
			       v ? v : "(none)");
		}
		CHECK(prom_label(s, "node") && !strcmp(prom_label(s, "node"), host));
		CHECK_EQ_U64(s->n_labels, 13); /* exactly these, plus node, pid, comm, coll */
		CHECK_EQ_U64(s->value, N);
	}
	s = find(&d, "ncclbpf_coll_exec_seconds_sum", "comm", comm, "coll", "AllReduce", NULL);
	CHECK(s && fabs(s->value - (double)sum_ar / 1e9) < 1e-9);
	/* Every collective in the bucket its time belongs to (cumulative counts). */
	for (int k = 0; k <= 21; k++) {
		double le = k <= 20 ? (double)(1ull << k) / 1e6 : INFINITY;
		uint64_t want_n = 0;
		for (int i = 0; i < N; i++)
			want_n += le_of(100000 + 10000 * (uint64_t)i + 13) <= le;
		CHECKF(bucket_at(&d, comm, "AllReduce", "1048576", le) == (double)want_n,
		       "le=%g: %g, want %llu", le, bucket_at(&d, comm, "AllReduce", "1048576", le),
		       (unsigned long long)want_n);
	}
	s = find(&d, "ncclbpf_coll_bytes_total", "comm", comm, "coll", "AllReduce", NULL);
	CHECK(s && s->value == (double)N * 1048576);
	/* AllReduce busbw factor 2(n-1)/n = 1.5 for 4 ranks. */
	s = find(&d, "ncclbpf_coll_bus_bytes_total", "comm", comm, "coll", "AllReduce", NULL);
	CHECK(s && s->value == (double)N * 1048576 * 1.5);
	s = find(&d, "ncclbpf_coll_busbw_gbps", "comm", comm, "coll", "AllReduce", NULL);
	CHECK(s && fabs(s->value - (double)N * 1048576 * 1.5 / (double)sum_ar) < 1e-6);
	s = find(&d, "ncclbpf_coll_algbw_gbps", "comm", comm, "coll", "AllReduce", NULL);
	CHECK(s && fabs(s->value - (double)N * 1048576 / (double)sum_ar) < 1e-6);
	s = find(&d, "ncclbpf_coll_algo_proto_total", "comm", comm, "coll", "AllReduce", "algo",
		 "RING", "proto", "SIMPLE", NULL);
	CHECK(s && s->value == N);
	/* AllGather: nccl-tests' size is the whole buffer (2 KiB x 4 ranks), factor 3/4. */
	s = find(&d, "ncclbpf_coll_bytes_total", "comm", comm, "coll", "AllGather", NULL);
	CHECK(s && s->value == 5.0 * 8192 && !strcmp(prom_label(s, "size"), "8192"));
	s = find(&d, "ncclbpf_coll_bus_bytes_total", "comm", comm, "coll", "AllGather", NULL);
	CHECK(s && s->value == 5.0 * 8192 * 0.75);
	s = find(&d, "ncclbpf_coll_exec_seconds_sum", "comm", comm, "coll", "AllGather", NULL);
	CHECK(s && fabs(s->value - 5 * (5000 + 3 * 13) / 1e9) < 1e-12);
	s = find(&d, "ncclbpf_coll_algo_proto_total", "comm", comm, "coll", "AllGather", "algo",
		 "TREE", "proto", "LL", NULL);
	CHECK(s && s->value == 2);
	s = find(&d, "ncclbpf_coll_algo_proto_total", "comm", comm, "coll", "AllGather", "algo",
		 "RING", "proto", "LL", NULL);
	CHECK(s && s->value == 3);
	s = find(&d, "ncclbpf_telemetry_comms", NULL);
	CHECK(s && s->value >= 1);
	prom_free(&d);
	free(buf);
	th_finalize(c);
	unsetenv("SLURM_JOB_ID");
	unsetenv("RANK");
	unsetenv("LOCAL_RANK");
	unsetenv("CUDA_VISIBLE_DEVICES");
}

/* --- Slots --------------------------------------------------------------------------------- */

static void test_overflow(void)
{
	th_env_clear();
	setenv("NCCLBPF_TELEMETRY", "1", 1);
	enum { EXTRA = 3 };
	void *c[NCCLBPF_TELEM_COMMS + EXTRA];
	for (int i = 0; i < NCCLBPF_TELEM_COMMS + EXTRA; i++)
		c[i] = th_comm(0x5000 + (uint64_t)i, NULL, 2, 0);
	struct prom_doc d;
	char *buf = render(&d);
	const struct prom_sample *s = find(&d, "ncclbpf_telemetry_comms_overflow_total", NULL);
	CHECK(s && s->value == EXTRA);
	s = find(&d, "ncclbpf_telemetry_comms", NULL);
	CHECK(s && s->value == NCCLBPF_TELEM_COMMS);
	/* Collectives of a communicator without a slot are not counted anywhere, and cost
	 * nothing else. */
	th_coll(c[NCCLBPF_TELEM_COMMS], 0, 1, "AllReduce", 4, "ncclInt32", 1, "RING", "LL", 1, 10);
	prom_free(&d);
	free(buf);
	for (int i = 0; i < NCCLBPF_TELEM_COMMS + EXTRA; i++)
		th_finalize(c[i]);
	/* Closed slots are taken again by new communicators. */
	void *again = th_comm(0x6000, NULL, 2, 0);
	buf = render(&d);
	s = find(&d, "ncclbpf_telemetry_comms", NULL);
	CHECK(s && s->value == 1);
	prom_free(&d);
	free(buf);
	th_finalize(again);
}

/* Communicators taking over closed slots while the text is rendered (more communicators than
 * slots): every render is valid text, each slot's lines one communicator's. Before the slot
 * generation, a histogram's buckets could carry the old communicator's labels and its _count
 * the new one's ("histogram without _count"). */
static _Atomic int stop_churn;
static void *churn(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; !stop_churn; i++) {
		void *c = th_comm(0x7000 + i % 4096, i % 2 ? "odd" : "even", 2, (int)(i % 2));
		th_coll(c, 0, 1, "AllReduce", 1 + (i % 64) * 1024, "ncclFloat32", 1, "RING",
			"SIMPLE", 1000, 1000 + i % 5000);
		th_finalize(c);
	}
	return NULL;
}

static void test_reuse_while_read(void)
{
	th_env_clear();
	setenv("NCCLBPF_TELEMETRY", "1", 1);
	void *c[NCCLBPF_TELEM_COMMS];
	for (int i = 0; i < NCCLBPF_TELEM_COMMS; i++) {
		c[i] = th_comm(0x8000 + (uint64_t)i, "full", 2, 0);
		th_coll(c[i], 0, 1, "AllReduce", 256, "ncclFloat32", 1, "RING", "LL", 1000, 2000);
	}
	/* Every other slot CLOSED: new communicators take them over. c[0] stays open, so that
	 * the runtime (and the configuration the labels come from) stays as it is. */
	for (int i = 1; i < NCCLBPF_TELEM_COMMS; i++)
		th_finalize(c[i]);
	size_t cap = 8u << 20;
	char *buf = malloc(cap);
	pthread_t t;
	stop_churn = 0;
	pthread_create(&t, NULL, churn, NULL);
	int reads = 0, bad = 0;
	for (; reads < 400 && !bad; reads++) {
		size_t n = ncclbpf_telem_prometheus(buf, cap);
		struct prom_doc d;
		if (!n || prom_parse(&d, buf, n) != 0) {
			CHECKF(0, "render %d: %s", reads, n ? d.err : "empty");
			bad = 1;
		} else {
			prom_free(&d);
		}
	}
	stop_churn = 1;
	pthread_join(t, NULL);
	free(buf);
	th_finalize(c[0]);
	CHECKF(!bad, "%d renders", reads);
}

/* --- JSON lines ------------------------------------------------------------------------------- */

static void test_jsonl(void)
{
	char dir[256], path[512];
	th_tmpdir(dir, sizeof(dir), "jsonl");
	th_env_clear();
	setenv("NCCLBPF_JSONL_DIR", dir, 1);
	setenv("NCCLBPF_JSONL_EVERY", "2", 1);
	setenv("NCCLBPF_JSONL_MIN_BYTES", "1024", 1);
	void *c = th_comm(0xfeed, "tp", 2, 1);
	for (int i = 0; i < 10; i++) {
		th_coll(c, 1, 2 * (uint64_t)i, "AllReduce", 262144, "ncclFloat32", 2, "RING",
			"LL128", 7000000ull * (uint64_t)(i + 1), 50000 + 1000 * (uint64_t)i);
		/* Below the floor: never written, never counted for the sampling. */
		th_coll(c, 1, 2 * (uint64_t)i + 1, "AllReduce", 64, "ncclFloat32", 1, "TREE", "LL",
			9000000ull, 3000);
	}
	th_finalize(c); /* stops the exporter: the queue is written out */
	th_out_name(path, sizeof(path), dir, "jsonl");
	size_t len = 0;
	char *text = th_read_file(path, &len);
	CHECKF(text != NULL, "%s not written", path);
	int lines = 0;
	for (char *l = text, *nl; l && (nl = strchr(l, '\n')); l = nl + 1) {
		char err[256];
		struct json *j = json_parse(l, (size_t)(nl - l), err, sizeof(err));
		CHECKF(j != NULL, "line %d: %s", lines + 1, err);
		if (!j)
			continue;
		/* Every 2nd AllReduce of 1 MiB (the 1st, 3rd, ...): seq 0, 4, 8, ... */
		int k = lines++;
		uint64_t ns = 50000 + 1000 * (uint64_t)(2 * k) + 13;
		CHECK(json_num(j, "seq", -1) == 4.0 * k);
		CHECK(!strcmp(json_str(j, "coll"), "AllReduce"));
		CHECK(!strcmp(json_str(j, "comm"), "000000000000feed"));
		CHECK(!strcmp(json_str(j, "comm_name"), "tp"));
		CHECK(!strcmp(json_str(j, "algo"), "RING"));
		CHECK(!strcmp(json_str(j, "proto"), "LL128"));
		CHECK(!strcmp(json_str(j, "host"), host));
		CHECK(json_num(j, "comm_rank", -1) == 1 && json_num(j, "comm_size", -1) == 2);
		CHECK(json_num(j, "channels", -1) == 2);
		CHECK(json_num(j, "msg_size_bytes", -1) == 1048576);
		CHECK(json_num(j, "size_bytes", -1) == 1048576);
		CHECK(fabs(json_num(j, "exec_time_us", -1) - (double)ns / 1e3) < 1e-3);
		CHECK(fabs(json_num(j, "algbw_gbs", -1) - 1048576.0 / (double)ns) < 1e-5);
		/* 2 ranks: busbw = algbw x 2(n-1)/n = algbw. */
		CHECK(fabs(json_num(j, "busbw_gbs", -1) - 1048576.0 / (double)ns) < 1e-5);
		CHECK(json_num(j, "gpu_end_ns", 0) - json_num(j, "gpu_start_ns", 0) == (double)ns);
		/* The longest channel (Inspector's definition): channel 1, 6 ns longer than 0. */
		CHECK(fabs(json_num(j, "channel_max_us", -1) - (double)(ns - 13 + 6) / 1e3) < 1e-6);
		CHECK(json_num(j, "ts_us", 0) > 1.6e15); /* wall-clock time, in us */
		CHECK(json_num(j, "pid", -1) == getpid());
		json_free(j);
	}
	CHECK_EQ_U64(lines, 5);
	free(text);
	unlink(path);
	rmdir(dir);
}

/* Another local user can create the JSON lines file's name first (it is predictable: host and
 * pid) in a shared directory such as /tmp: a FIFO held the exporter thread in open() for good,
 * and with it the finalize that stops the thread (the job's exit); a file of theirs got our
 * lines appended. Both must be refused with a WARN. Runs in a child (a hang fails, after 20 s,
 * instead of hanging the test); the child plants at its own pid's name. */
static void jsonl_planted_child(int as_fifo)
{
	char dir[256], path[512];
	th_tmpdir(dir, sizeof(dir), "planted");
	th_out_name(path, sizeof(path), dir, "jsonl");
	if (as_fifo) {
		CHECK(mkfifo(path, 0666) == 0);
	} else {
		FILE *f = fopen(path, "w");
		CHECK(f && fclose(f) == 0);
		CHECK(chmod(path, 0666) == 0 && chown(path, 65534, 65534) == 0);
	}
	th_env_clear();
	setenv("NCCLBPF_JSONL_DIR", dir, 1);
	th_warns = 0;
	void *c = th_comm(0xbad, "planted", 2, 0);
	th_coll(c, 0, 0, "AllReduce", 262144, "ncclFloat32", 1, "RING", "LL", 1, 1000);
	th_finalize(c);
	CHECKF(th_warns == 1 && strstr(th_last_warn, as_fifo ? "is a FIFO" : "owned by uid 65534"),
	       "%d WARN(s), last: %s", th_warns, th_last_warn);
	struct stat st;
	CHECK(stat(path, &st) == 0 && st.st_size == 0); /* nothing written into it */
	unlink(path);
	rmdir(dir);
	exit(check_summary(as_fifo ? "jsonl planted FIFO" : "jsonl planted file") != 0);
}

static void test_jsonl_planted(void)
{
	for (int as_fifo = 1; as_fifo >= 0; as_fifo--) {
		if (!as_fifo && geteuid() != 0) {
			printf("SKIP: a file of another uid needs root (chown)\n");
			continue;
		}
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0)
			jsonl_planted_child(as_fifo);
		int status = -1;
		for (uint64_t t0 = th_now_ms(); th_now_ms() - t0 < 20000;) {
			if (waitpid(pid, &status, WNOHANG) == pid)
				break;
			th_sleep_ms(10);
		}
		if (status == -1) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "planted %s: %s",
		       as_fifo ? "FIFO" : "file",
		       status == -1 ? "still hung after 20 s" : "failed (its lines above)");
	}
}

/* --- Textfile ----------------------------------------------------------------------------------
 */

static _Atomic int stop_driver;
static void *driver(void *ctx)
{
	for (uint64_t i = 0; !stop_driver; i++) {
		th_coll(ctx, 0, i, i % 3 ? "AllReduce" : "ReduceScatter", 1 + (i % 4096) * 64,
			"ncclFloat16", 2, "RING", "SIMPLE", 1000 + i, 1000 + (i % 1000) * 977);
		if (i % 64 == 0)
			th_sleep_ms(1);
	}
	return NULL;
}

static void test_textfile_atomic(void)
{
	char dir[256], path[512];
	th_tmpdir(dir, sizeof(dir), "prom");
	th_env_clear();
	setenv("NCCLBPF_PROM_DIR", dir, 1);
	setenv("NCCLBPF_PROM_INTERVAL_MS", "10", 1);
	th_out_name(path, sizeof(path), dir, "prom");
	void *c = th_comm(0xa70, NULL, 2, 0);
	pthread_t t;
	stop_driver = 0;
	pthread_create(&t, NULL, driver, c);
	/* Read while the exporter rewrites it (every 10 ms): every read is a whole file. */
	int reads = 0, versions = 0;
	char *prev = NULL;
	uint64_t t0 = th_now_ms();
	while ((versions < 100 || reads < 150) && th_now_ms() - t0 < 60000) {
		size_t len = 0;
		char *text = th_read_file(path, &len);
		if (!text) {
			th_sleep_ms(1);
			continue;
		}
		reads++;
		struct prom_doc d;
		int ok = prom_parse(&d, text, len) == 0;
		CHECKF(ok, "read %d: %s", reads, d.err);
		/* Whole: the last family rendered is there. */
		CHECK(ok && prom_type_of(&d, "ncclbpf_coll_algo_proto_total") != NULL);
		prom_free(&d);
		if (!prev || strcmp(prev, text))
			versions++;
		free(prev);
		prev = text;
		if (!ok)
			break;
	}
	free(prev);
	CHECKF(versions >= 100, "%d versions seen in %d reads", versions, reads);
	stop_driver = 1;
	pthread_join(t, NULL);
	th_finalize(c);
	/* The process's series end with it; no temporary file is left behind. */
	CHECK(access(path, F_OK) != 0);
	CHECK(rmdir(dir) == 0);
}

/* ncclbpf_exporter_errors_total{output=...}, rendered in-process (no HTTP involved). */
static double export_errors(const char *output)
{
	struct prom_doc d;
	char *buf = render(&d);
	const struct prom_sample *s =
	    find(&d, "ncclbpf_exporter_errors_total", "output", output, NULL);
	double v = s ? s->value : -1;
	prom_free(&d);
	free(buf);
	return v;
}

/* Waits until the textfile has failed n more times than before (bounded). The count is the
 * process's, over every test so far: before is what it was before this test's exporter began
 * (a count left by an earlier test would end the wait at once, before this exporter's first
 * write on a loaded machine). */
static void wait_errors(double before, double n)
{
	double e = before;
	for (uint64_t t0 = th_now_ms(); e < before + n && th_now_ms() - t0 < 30000;) {
		th_sleep_ms(20);
		e = export_errors("textfile");
	}
	CHECKF(e >= before + n, "%g errors, want %g", e, before + n);
}

/* Waits for the textfile to appear again, then for the exporter's "works again" INFO: it logs
 * that after the rename that makes the file appear, so the file alone does not mean the line
 * was logged yet (a loaded machine can stop the exporter between the two). */
static void wait_file(const char *path, int infos_ok)
{
	for (uint64_t t0 = th_now_ms(); access(path, F_OK) != 0 && th_now_ms() - t0 < 30000;)
		th_sleep_ms(10);
	CHECK(access(path, F_OK) == 0);
	for (uint64_t t0 = th_now_ms();
	     __atomic_load_n(&th_infos_ok, __ATOMIC_RELAXED) < infos_ok &&
	     th_now_ms() - t0 < 30000;)
		th_sleep_ms(10);
	CHECK_EQ_U64(__atomic_load_n(&th_infos_ok, __ATOMIC_RELAXED), infos_ok);
}

/* The directory is missing (the exporter never errs to NCCL: one WARN, failures counted), then
 * created (INFO: works again), then removed while in use and created again: a flapping output
 * does not WARN again within the rate limit. */
static void test_unwritable(void)
{
	char dir[256], path[512], missing[300];
	th_tmpdir(dir, sizeof(dir), "ro");
	snprintf(missing, sizeof(missing), "%s/later", dir);
	th_env_clear();
	setenv("NCCLBPF_PROM_DIR", missing, 1);
	setenv("NCCLBPF_PROM_INTERVAL_MS", "10", 1);
	th_out_name(path, sizeof(path), missing, "prom");
	th_warns = th_infos_ok = 0;
	double before = export_errors("textfile");
	void *c = th_comm(0xdead, NULL, 2, 0);
	th_coll(c, 0, 0, "AllReduce", 1024, "ncclFloat32", 1, "RING", "LL", 1, 1000);
	wait_errors(before, 20);
	CHECK_EQ_U64(th_warns, 1);
	CHECK(strstr(th_last_warn, missing) != NULL);
	CHECK(mkdir(missing, 0755) == 0);
	wait_file(path, 1);
	/* Removed under the exporter (its file taken away first; it may write it again). */
	int gone = 0;
	for (int i = 0; i < 1000 && !gone; i++) {
		unlink(path);
		gone = rmdir(missing) == 0;
	}
	CHECK(gone);
	wait_errors(export_errors("textfile"), 5);
	CHECK_EQ_U64(th_warns, 1); /* rate-limited */
	CHECK(mkdir(missing, 0755) == 0);
	wait_file(path, 2);
	CHECK_EQ_U64(th_warns, 1);
	th_finalize(c);
	CHECK(access(path, F_OK) != 0);
	rmdir(missing);
	rmdir(dir);
}

/* Writes fail part-way (RLIMIT_FSIZE 0: every write that would grow a file fails with EFBIG, as
 * a full disk fails with ENOSPC): one WARN naming the error, no temporary file left behind, no
 * partial textfile ever in place, INFO once writes succeed again. */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

/* While every write fails, the exporter still tries each interval (10 ms): its temporary file
 * exists for the moment of one attempt and is removed as the attempt fails, so a single look at
 * the directory may catch it (CI did, under load). What must hold is that the textfile itself
 * never appears and the temporary one never stays: the directory is seen empty at three looks
 * in a row, 1 ms apart. Without the removal on failure the file stays but for the instant
 * between the next attempt's unlink and create, which one look in a few thousand catches, never
 * three in a row (measured: 1 look in 2000 empty without the removal, 1992 with it). */
static void check_no_file_left(const char *dir, const char *path)
{
	int empty_run = 0;
	for (uint64_t t0 = th_now_ms(); empty_run < 3 && th_now_ms() - t0 < 30000;) {
		CHECK(access(path, F_OK) != 0); /* never a partial textfile */
		empty_run = dir_entries(dir) == 0 ? empty_run + 1 : 0;
		th_sleep_ms(1);
	}
	CHECKF(empty_run == 3, "%s kept a file for 30 s while every write failed", dir);
}

static void test_full_disk(void)
{
	char dir[256], path[512];
	th_tmpdir(dir, sizeof(dir), "full");
	th_env_clear();
	setenv("NCCLBPF_PROM_DIR", dir, 1);
	setenv("NCCLBPF_PROM_INTERVAL_MS", "10", 1);
	th_out_name(path, sizeof(path), dir, "prom");
	th_warns = th_infos_ok = 0;
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit old, zero = {0, 0};
	getrlimit(RLIMIT_FSIZE, &old);
	zero.rlim_max = old.rlim_max;
	double before = export_errors("textfile");
	CHECK(setrlimit(RLIMIT_FSIZE, &zero) == 0);
	void *c = th_comm(0xf011, NULL, 2, 0);
	th_coll(c, 0, 0, "AllReduce", 1024, "ncclFloat32", 1, "RING", "LL", 1, 1000);
	wait_errors(before, 20);
	CHECK_EQ_U64(th_warns, 1);
	CHECKF(strstr(th_last_warn, strerror(EFBIG)) != NULL, "%s", th_last_warn);
	check_no_file_left(dir, path);
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
	wait_file(path, 1);
	CHECK_EQ_U64(th_warns, 1);
	th_finalize(c);
	CHECK_EQ_U64(dir_entries(dir), 0);
	CHECK(rmdir(dir) == 0);
}

/* --- HTTP ----------------------------------------------------------------------------------------
 */

static int connect_port(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	struct timeval tv = {10, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Sends req and reads the whole answer (the server closes). */
static char *http(int port, const char *req, size_t *len)
{
	int fd = connect_port(port);
	if (fd < 0)
		return NULL;
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		close(fd);
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap + 1);
	for (;;) {
		ssize_t k = recv(fd, p + n, cap - n, 0);
		if (k <= 0)
			break;
		n += (size_t)k;
		if (n == cap)
			p = realloc(p, (cap *= 2) + 1);
	}
	close(fd);
	p[n] = 0;
	*len = n;
	return p;
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof(sa);
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	close(fd);
	return ntohs(sa.sin_port);
}

static void test_http(void)
{
	int port = free_port();
	char v[16];
	snprintf(v, sizeof(v), "%d", port - 3); /* the process with local rank 3 binds base + 3 */
	th_env_clear();
	setenv("NCCLBPF_PROM_PORT", v, 1);
	setenv("LOCAL_RANK", "3", 1);
	void *c = th_comm(0x4771, NULL, 2, 0);
	th_coll(c, 0, 0, "Broadcast", 4096, "ncclInt8", 1, "RING", "SIMPLE", 10, 2000);
	size_t len = 0;
	char *r = http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &len);
	CHECK(r && !strncmp(r, "HTTP/1.1 200 OK\r\n", 17));
	const char *body = r ? strstr(r, "\r\n\r\n") : NULL;
	if (body) {
		body += 4;
		struct prom_doc d;
		CHECKF(prom_parse(&d, body, len - (size_t)(body - r)) == 0, "%s", d.err);
		const struct prom_sample *s = find(&d, "ncclbpf_coll_exec_seconds_count", "comm",
						   "0000000000004771", "coll", "Broadcast", NULL);
		CHECK(s != NULL);
		/* No CUDA_VISIBLE_DEVICES: the GPU is not known (the local rank is no device). */
		CHECK(s && !strcmp(prom_label(s, "gpu"), "-") &&
		      !strcmp(prom_label(s, "local_rank"), "3"));
		char cl[64];
		snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", len - (size_t)(body - r));
		CHECK(strstr(r, cl) != NULL);
		prom_free(&d);
	}
	free(r);
	r = http(port, "GET /other HTTP/1.0\r\n\r\n", &len);
	CHECK(r && !strncmp(r, "HTTP/1.1 404 ", 13));
	free(r);
	r = http(port, "POST /metrics HTTP/1.0\r\n\r\n", &len);
	CHECK(r && !strncmp(r, "HTTP/1.1 405 ", 13));
	free(r);
	/* Four idle connections take every slot: a fifth is answered 503 at once. */
	int idle[4];
	for (int i = 0; i < 4; i++)
		idle[i] = connect_port(port);
	th_sleep_ms(200);
	r = http(port, "GET /metrics HTTP/1.0\r\n\r\n", &len);
	CHECK(r && !strncmp(r, "HTTP/1.1 503 ", 13));
	free(r);
	/* An idle connection is dropped after its deadline (2 s), freeing its slot. */
	char b;
	CHECK(recv(idle[0], &b, 1, 0) == 0);
	for (int i = 0; i < 4; i++)
		close(idle[i]);
	r = http(port, "GET /metrics HTTP/1.0\r\n\r\n", &len);
	CHECK(r && !strncmp(r, "HTTP/1.1 200 ", 13));
	free(r);
	th_finalize(c);
	CHECK(connect_port(port) < 0); /* closed with the last communicator */
	unsetenv("LOCAL_RANK");
}

/* A scraper that sends its request and then stops reading: the answer cannot be sent before the
 * connection's deadline, so the endpoint drops it and the exporter counts one failed HTTP write,
 * and the next scraper is served. The answer must not fit in the sockets' buffers (the
 * endpoint's grows up to tcp_wmem's maximum; the client's is the smallest the kernel allows):
 * 63 communicators with 16 cells each give about 6 MiB of text. No step depends on timing: the
 * test waits until the answer is on its way before it shrinks the text for the next scrape. */
static void test_http_stalled_client(void)
{
	int port = free_port();
	char v[16];
	snprintf(v, sizeof(v), "%d", port);
	th_env_clear();
	setenv("NCCLBPF_PROM_PORT", v, 1);
	/* The exporter's tick also frees closed communicators' slots: often, so that the text
	 * shrinks soon after they close. */
	setenv("NCCLBPF_PROM_INTERVAL_MS", "100", 1);
	void *keep = th_comm(0x8fff, NULL, 2, 0); /* holds the exporter once the others close */
	double before = export_errors("http");
	enum { BIG = NCCLBPF_TELEM_COMMS - 1 };
	void *c[BIG];
	for (int i = 0; i < BIG; i++) {
		c[i] = th_comm(0x8000 + (uint64_t)i, NULL, 2, 0);
		for (int k = 0; k < 16; k++)
			th_coll(c[i], 0, (uint64_t)k, k % 2 ? "AllReduce" : "AllGather",
				(size_t)1 << k, "ncclFloat32", 1, k % 2 ? "RING" : "TREE",
				k % 2 ? "SIMPLE" : "LL", 100, 1000 + (uint64_t)k);
	}
	unsigned long wmem[3] = {0, 0, 4ul << 20};
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_wmem", "r");
	if (f) {
		if (fscanf(f, "%lu %lu %lu", &wmem[0], &wmem[1], &wmem[2]) != 3)
			wmem[2] = 4ul << 20;
		fclose(f);
	}
	size_t cap = 32u << 20;
	char *text = malloc(cap);
	size_t len = ncclbpf_telem_prometheus(text, cap);
	free(text);
	CHECKF(len > wmem[2] + (1u << 20),
	       "the answer (%zu bytes) must not fit in the socket buffers (%lu bytes)", len,
	       wmem[2]);

	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int small = 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	CHECK(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof(req) - 1));
	/* The first bytes of the answer arrive once the big text is rendered (hang guard 60 s). */
	struct pollfd p = {.fd = fd, .events = POLLIN};
	CHECK(poll(&p, 1, 60000) == 1);
	char b;
	CHECK(recv(fd, &b, 1, MSG_PEEK) == 1);
	for (int i = 0; i < BIG; i++)
		th_finalize(c[i]);
	/* Closed slots are shown until the exporter's next tick, which comes once the stalled
	 * answer is dropped: wait until the text fits in 1 MiB again (hang guard 60 s). */
	text = malloc(1u << 20);
	int shrunk = 0;
	for (int i = 0; i < 1200 && !shrunk; i++) {
		shrunk = ncclbpf_telem_prometheus(text, 1u << 20) > 0;
		if (!shrunk)
			th_sleep_ms(50);
	}
	free(text);
	CHECK(shrunk);
	/* The next scrape is answered (the small text of the communicator left). */
	char *r = http(port, "GET /metrics HTTP/1.0\r\n\r\n", &len);
	CHECK(r && !strncmp(r, "HTTP/1.1 200 ", 13));
	free(r);
	double after = export_errors("http");
	CHECKF(after == before + 1, "HTTP errors: %g before, %g after", before, after);
	close(fd);
	th_finalize(keep);
	unsetenv("NCCLBPF_PROM_INTERVAL_MS");
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	ncclbpf_rt_host_name(host, sizeof(host));
	test_mask();
	test_tables();
	test_overflow();
	test_reuse_while_read();
	test_jsonl();
	test_jsonl_planted();
	test_textfile_atomic();
	test_unwritable();
	test_full_disk();
	test_http();
	test_http_stalled_client();
	return check_summary("test_telemetry");
}
