/* `ncclbpf top` against a live process (this one: the profiler tables driven as NCCL drives
 * them, the adapter and runtime linked in, its inspection server on a private directory): the
 * first refresh shows each communicator's collective since its start (no rate yet); a second
 * one shows the interval's collectives per second (count over the configured interval), and
 * the interval's busbw, mean and 99th-percentile GPU time, not the totals'; the most used
 * algorithm/protocol and the total count; the table names the same row.
 *
 * usage: test_top NCCLBPF */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "json_tree.h"
#include "ncclbpf/telemetry.h"
#include "telem_harness.h"

static const char *cli;
static char dir[256];

/* The AllReduce row of this process in one JSON refresh (a line of `top --json`). */
static const struct json *my_row(const struct json *doc, const char *coll)
{
	const struct json *rows = json_get(doc, "rows");
	for (int i = 0; rows && rows->kind == JSON_ARR && i < rows->n; i++)
		if (json_num(rows->v[i], "pid", -1) == getpid() &&
		    !strcmp(json_str(rows->v[i], "coll"), coll))
			return rows->v[i];
	return NULL;
}

static struct json *read_doc(FILE *p)
{
	char line[65536], err[256];
	if (!fgets(line, sizeof(line), p))
		return NULL;
	struct json *j = json_parse(line, strlen(line), err, sizeof(err));
	CHECKF(j != NULL, "top --json: %s: %s", err, line);
	return j;
}

static void allreduces(void *c, int n, uint64_t seq0, uint64_t dur)
{
	for (int i = 0; i < n; i++)
		th_coll(c, 1, seq0 + (uint64_t)i, "AllReduce", 262144, "ncclFloat32", 2, "RING",
			"SIMPLE", 1000000ull * (seq0 + (uint64_t)i + 1), dur);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_top NCCLBPF\n");
		return 2;
	}
	cli = argv[1];
	th_tmpdir(dir, sizeof(dir), "top");
	chmod(dir, 0700);
	th_env_clear();
	setenv("NCCLBPF_CP_DIR", dir, 1);
	setenv("NCCLBPF_TELEMETRY", "1", 1);
	setenv("RANK", "5", 1);
	void *c = th_comm(0x70b, "top", 4, 1);
	/* 10 AllReduce of 1 MiB, 100 us (+13 ns: 2 channels), one TREE/LL among RING/SIMPLE. */
	allreduces(c, 10, 0, 100000);
	th_coll(c, 1, 99, "AllReduce", 262144, "ncclFloat32", 2, "TREE", "LL", 1, 100000);

	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s top --dir %s --count 2 --interval 1500 --json", cli, dir);
	FILE *p = popen(cmd, "r");
	CHECK(p != NULL);
	struct json *first = p ? read_doc(p) : NULL;
	const struct json *r = my_row(first, "AllReduce");
	CHECKF(r != NULL, "no AllReduce row of pid %d in the first refresh", (int)getpid());
	if (r) {
		double bus = 11.0 * 1048576 * 1.5 / (11.0 * 100013);
		CHECK(json_num(r, "total", -1) == 11);
		CHECK(json_get(r, "ops_per_s") && json_get(r, "ops_per_s")->kind == JSON_NULL);
		CHECKF(fabs(json_num(r, "busbw_gbs", -1) - bus) < 1e-3, "busbw %g, want %g",
		       json_num(r, "busbw_gbs", -1), bus);
		CHECK(fabs(json_num(r, "avg_us", -1) - 100.013) < 1e-3);
		CHECK(!strcmp(json_str(r, "p99_us"), "128"));
		CHECK(!strcmp(json_str(r, "algo_proto"), "RING/SIMPLE"));
		CHECK(!strcmp(json_str(r, "comm"), "000000000000070b"));
		CHECK(!strcmp(json_str(r, "rank"), "5"));
	}
	/* Between the refreshes: 30 more, 200 us each. */
	allreduces(c, 30, 100, 200000);
	struct json *second = p ? read_doc(p) : NULL;
	r = my_row(second, "AllReduce");
	CHECK(r != NULL);
	if (r) {
		double bus = 1048576 * 1.5 / 200013.0;
		CHECK(json_num(r, "total", -1) == 41);
		CHECKF(fabs(json_num(r, "ops_per_s", -1) - 30 / 1.5) < 1e-6, "ops/s %g",
		       json_num(r, "ops_per_s", -1));
		CHECKF(fabs(json_num(r, "busbw_gbs", -1) - bus) < 1e-3, "busbw %g, want %g",
		       json_num(r, "busbw_gbs", -1), bus);
		CHECK(fabs(json_num(r, "avg_us", -1) - 200.013) < 1e-3);
		CHECK(!strcmp(json_str(r, "p99_us"), "256"));
	}
	json_free(first);
	json_free(second);
	CHECK(p && pclose(p) == 0);

	/* The table: the same row, on one line. */
	snprintf(cmd, sizeof(cmd), "%s top --dir %s --count 1", cli, dir);
	p = popen(cmd, "r");
	char line[1024], want[64];
	int found = 0;
	snprintf(want, sizeof(want), "%d ", (int)getpid());
	while (p && fgets(line, sizeof(line), p))
		found += !strncmp(line, want, strlen(want)) && strstr(line, " AllReduce ") &&
			 strstr(line, " RING/SIMPLE ") && strstr(line, " 41\n");
	CHECK(p && pclose(p) == 0);
	CHECK_EQ_U64(found, 1);
	th_finalize(c);
	rmdir(dir);
	return check_summary("test_top");
}
