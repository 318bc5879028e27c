/* The CUDA-free parts of ncclbpf-gpubench (tools/gpubench/bench_util.c): sizes, options and their
 * exact errors, forced settings and labels, counts, adaptive iterations, statistics, the trace
 * reader's decisions, exact test values and the CSV row format (docs/tuning.md). */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "check.h"

static int parse(struct gb_opts *o, char *err, const char *line)
{
	static char buf[512]; /* o keeps pointers into it (policy, csv) */
	char *argv[48];
	int argc = 0;
	snprintf(buf, sizeof buf, "gpubench %s", line);
	for (char *s, *t = strtok_r(buf, " ", &s); t && argc < 47; t = strtok_r(NULL, " ", &s))
		argv[argc++] = t;
	argv[argc] = NULL;
	err[0] = 0;
	return gb_parse_args(argc, argv, o, err, 256);
}

static void test_sizes(void)
{
	size_t v = 0;
	CHECK(gb_parse_size("8", &v) == 0 && v == 8);
	CHECK(gb_parse_size("1K", &v) == 0 && v == 1024);
	CHECK(gb_parse_size("4KB", &v) == 0 && v == 4096);
	CHECK(gb_parse_size("64M", &v) == 0 && v == 64u << 20);
	CHECK(gb_parse_size("256m", &v) == 0 && v == 256u << 20);
	CHECK(gb_parse_size("1G", &v) == 0 && v == 1u << 30);
	v = 7;
	CHECK(gb_parse_size("", &v) == -1 && v == 7);
	CHECK(gb_parse_size("-1", &v) == -1);
	CHECK(gb_parse_size("1X", &v) == -1);
	CHECK(gb_parse_size("1KK", &v) == -1);
	CHECK(gb_parse_size("K", &v) == -1);
	CHECK(gb_parse_size("99999999999999999999", &v) == -1);
	CHECK(gb_parse_size("17179869184G", &v) == -1); /* 2^34 G overflows 64 bits */
	CHECK(gb_next_size(8, 2, 64) == 16);
	CHECK(gb_next_size(64, 2, 64) == 0);
	CHECK(gb_next_size(40, 2, 64) == 0);
	CHECK(gb_next_size((size_t)1 << 62, 4, ~(size_t)0) == 0); /* overflow ends the sweep */
}

static void test_args(void)
{
	struct gb_opts o;
	char err[256];
	unsetenv("NCCL_ALGO");
	unsetenv("NCCL_PROTO");
	unsetenv("NCCL_MIN_NCHANNELS");
	unsetenv("NCCL_MAX_NCHANNELS");
	CHECK(parse(&o, err, "") == 0);
	CHECK(o.nranks == 2 && o.min_bytes == 8 && o.max_bytes == 64u << 20 && o.factor == 2);
	CHECK(o.iters == 20 && o.warmup == 5 && o.reps == 1 && o.check == 1 && o.target_ms == 0);
	CHECK(o.hold_s == 0);
	CHECK(o.ops[GB_ALLREDUCE] && !o.ops[GB_ALLGATHER] && o.algo == -1 && o.proto == -1);
	CHECK(!strcmp(o.type->name, "float") && !o.env_forced && !o.csv);

	CHECK(parse(&o, err,
		    "-n 4 -o allgather,reducescatter -b 1K -e 1M -f 4 -i 7 -w 2 -r 3 "
		    "--algo Ring --proto LL128 --channels 8 --csv x.csv --timeout 10 "
		    "--target-ms 20 --no-check --no-plugin -d bf16 --hold 30") == 0);
	CHECK(o.nranks == 4 && !o.ops[GB_ALLREDUCE] && o.ops[GB_ALLGATHER] &&
	      o.ops[GB_REDUCESCATTER] && !o.ops[GB_BROADCAST]);
	CHECK(o.min_bytes == 1024 && o.max_bytes == 1u << 20 && o.factor == 4 && o.iters == 7);
	CHECK(o.warmup == 2 && o.reps == 3 && o.algo == 1 && o.proto == 1 && o.channels == 8);
	CHECK(!strcmp(o.csv, "x.csv") && o.timeout_s == 10 && o.target_ms == 20 && !o.check);
	CHECK(o.no_plugin && o.type->size == 2 && o.type->nccl == 9 && o.hold_s == 30);
	CHECK(parse(&o, err, "--ab a.o,dir/b.o -w 1") == 0 && !strcmp(o.ab_base, "a.o") &&
	      !strcmp(o.ab_test, "dir/b.o"));
	CHECK(parse(&o, err, "-o all") == 0 && o.ops[0] && o.ops[1] && o.ops[2] && o.ops[3]);
	CHECK(parse(&o, err, "-n 4 --split") == 0 && o.split && o.nranks == 4);
	CHECK(parse(&o, err, "-n 4") == 0 && !o.split);
	CHECK(parse(&o, err, "-h") == 1);

	static const struct {
		const char *args, *err;
	} bad[] = {
	    {"-n 0", "-n: ranks must be 1..64, not '0'"},
	    {"--hold 0", "--hold: seconds must be 1..3600, not '0'"},
	    {"--ab a.o", "--ab: need BASE,TEST (two bundle paths), not 'a.o'"},
	    {"--ab a.o,", "--ab: need BASE,TEST (two bundle paths), not 'a.o,'"},
	    {"--ab ,b.o", "--ab: need BASE,TEST (two bundle paths), not ',b.o'"},
	    {"--ab a.o,b.o,c.o", "--ab: need BASE,TEST (two bundle paths), not 'a.o,b.o,c.o'"},
	    {"--ab a.o,b.o --policy p.o",
	     "--ab excludes --policy, --no-plugin and --target-ms, and needs -w >= 1"},
	    {"--ab a.o,b.o -w 0",
	     "--ab excludes --policy, --no-plugin and --target-ms, and needs -w >= 1"},
	    {"-n 65", "-n: ranks must be 1..64, not '65'"},
	    {"-n 2 --split", "--split needs an even -n >= 4 and excludes --ab and --target-ms"},
	    {"-n 5 --split", "--split needs an even -n >= 4 and excludes --ab and --target-ms"},
	    {"-n 4 --split --target-ms 5",
	     "--split needs an even -n >= 4 and excludes --ab and --target-ms"},
	    {"-o allreduce,alltoall", "-o: unknown collective 'alltoall'"},
	    {"-b 1X", "-b: bad size '1X'"},
	    {"-e -5", "-e: bad size '-5'"},
	    {"-f 1", "-f: factor must be 2..1024, not '1'"},
	    {"-i 0", "-i: iterations must be 1..1000000, not '0'"},
	    {"-r 1001", "-r: repetitions must be 1..1000, not '1001'"},
	    {"-d float8", "-d: unknown data type 'float8'"},
	    {"--algo ring2", "--algo: unknown algorithm 'ring2'"},
	    {"--proto LL64", "--proto: unknown protocol 'LL64'"},
	    {"--channels 65", "--channels: must be 1..64, not '65'"},
	    {"--timeout -1", "--timeout: seconds must be 0..86400, not '-1'"},
	    {"--target-ms 0", "--target-ms: must be 1..3600000, not '0'"},
	    {"--target-ms 5 -w 0", "--target-ms needs at least one warm-up operation (-w)"},
	    {"-b 2M -e 1M", "sizes: need 1 <= MIN (-b) <= MAX (-e)"},
	    {"--no-plugin --policy p.o", "--no-plugin excludes --plugin and --policy"},
	    {"extra", "unexpected argument 'extra'"},
	    {"--bogus", "unknown option or missing argument: '--bogus'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = parse(&o, err, bad[i].args);
		CHECK(rc == -1);
		if (strcmp(err, bad[i].err)) {
			fprintf(stderr, "args '%s': got '%s', want '%s'\n", bad[i].args, err,
				bad[i].err);
			CHECK(0);
		}
	}

	/* NCCL settings from outside mark the configuration env:. */
	setenv("NCCL_PROTO", "Simple", 1);
	CHECK(parse(&o, err, "--algo ring") == 0 && o.env_forced);
	CHECK(parse(&o, err, "--proto simple") == 0 && !o.env_forced);
	unsetenv("NCCL_PROTO");
}

static void test_forced_and_labels(void)
{
	struct gb_opts o;
	char err[256], buf[400], values[4][32];
	const char *names[4];
	CHECK(parse(&o, err, "") == 0);
	CHECK(gb_forced_env(&o, names, values) == 0);
	CHECK(!strcmp(gb_config_label(&o, buf, sizeof buf), "default"));
	CHECK(parse(&o, err, "--algo tree --proto ll128 --channels 8") == 0);
	CHECK(gb_forced_env(&o, names, values) == 4);
	CHECK(!strcmp(names[0], "NCCL_ALGO") && !strcmp(values[0], "Tree"));
	CHECK(!strcmp(names[1], "NCCL_PROTO") && !strcmp(values[1], "LL128"));
	CHECK(!strcmp(names[2], "NCCL_MIN_NCHANNELS") && !strcmp(values[2], "8"));
	CHECK(!strcmp(names[3], "NCCL_MAX_NCHANNELS") && !strcmp(values[3], "8"));
	CHECK(!strcmp(gb_config_label(&o, buf, sizeof buf), "tree/ll128/8"));
	CHECK(parse(&o, err, "--algo PAT") == 0 && gb_forced_env(&o, names, values) == 1);
	CHECK(!strcmp(values[0], "PAT") &&
	      !strcmp(gb_config_label(&o, buf, sizeof buf), "pat/-/-"));
	CHECK(parse(&o, err, "--channels 2") == 0);
	CHECK(!strcmp(gb_config_label(&o, buf, sizeof buf), "-/-/2"));
	CHECK(parse(&o, err, "--policy /x/y/tuned.o") == 0);
	CHECK(!strcmp(gb_config_label(&o, buf, sizeof buf), "policy:tuned.o"));
	CHECK(parse(&o, err, "--policy a,b.o --algo ring") == 0);
	CHECK(!strcmp(gb_config_label(&o, buf, sizeof buf), "policy:a;b.o+ring/-/-"));
	setenv("NCCL_ALGO", "Tree", 1);
	CHECK(parse(&o, err, "--proto ll") == 0);
	CHECK(!strcmp(gb_config_label(&o, buf, sizeof buf), "env:-/ll/-"));
	unsetenv("NCCL_ALGO");
	CHECK(!strcmp(gb_algo_name(6), "pat") && !strcmp(gb_algo_name(7), "-"));
	CHECK(!strcmp(gb_proto_name(2), "simple") && !strcmp(gb_proto_name(-1), "-"));
}

static void test_counts(void)
{
	size_t send, recv, size;
	gb_counts(GB_ALLREDUCE, 1024, 4, 4, &send, &recv, &size);
	CHECK(send == 256 && recv == 256 && size == 1024);
	gb_counts(GB_ALLREDUCE, 2, 4, 4, &send, &recv, &size); /* below one element: one */
	CHECK(send == 1 && recv == 1 && size == 4);
	gb_counts(GB_ALLGATHER, 8, 4, 4, &send, &recv, &size); /* one element per rank */
	CHECK(send == 1 && recv == 4 && size == 16);
	gb_counts(GB_ALLGATHER, 1024, 4, 4, &send, &recv, &size);
	CHECK(send == 64 && recv == 256 && size == 1024);
	gb_counts(GB_REDUCESCATTER, 1000, 3, 4, &send, &recv, &size); /* 250 -> 249 elements */
	CHECK(send == 249 && recv == 83 && size == 996);
	CHECK(gb_bus_factor(GB_ALLREDUCE, 4) == 1.5 && gb_bus_factor(GB_ALLGATHER, 4) == 0.75);
	CHECK(gb_bus_factor(GB_BROADCAST, 4) == 1.0);
}

static void test_adapt_iters(void)
{
	CHECK(gb_adapt_iters(10.0, 20, 1, 50) == 50);	 /* 2000 fit: the maximum */
	CHECK(gb_adapt_iters(1000.0, 20, 1, 50) == 20);	 /* 1 ms each: 20 */
	CHECK(gb_adapt_iters(1000.0, 20, 4, 50) == 5);	 /* over 4 repetitions */
	CHECK(gb_adapt_iters(100000.0, 20, 1, 50) == 2); /* at least 2 */
	CHECK(gb_adapt_iters(100000.0, 20, 1, 1) == 1);	 /* never above the maximum */
	CHECK(gb_adapt_iters(0.0, 20, 1, 50) == 50);
	CHECK(gb_adapt_iters(-1.0, 20, 1, 50) == 50);
	CHECK(gb_adapt_iters(NAN, 20, 1, 50) == 50);
	CHECK(gb_adapt_iters(1000.0, 0, 1, 50) == 50); /* off */
}

static void test_stats(void)
{
	struct gb_stats s;
	double v[] = {1, 2, 3, 4};
	gb_stats_of(v, 4, &s);
	CHECK(s.mean == 2.5 && s.min == 1 && s.max == 4);
	CHECK(fabs(s.sd - 1.2909944487358056) < 1e-12);
	gb_stats_of(v + 2, 1, &s);
	CHECK(s.mean == 3 && s.sd == 0 && s.min == 3 && s.max == 3);
	double w[] = {5, 5, 5};
	gb_stats_of(w, 3, &s);
	CHECK(s.mean == 5 && s.sd == 0);
	double small[] = {0.001, 0.002};
	gb_stats_of(small, 2, &s);
	CHECK(fabs(s.sd - 0.000707106781186548) < 1e-15);
	gb_stats_of(v, 0, &s);
	CHECK(s.mean == 0 && s.sd == 0);
}

/* Paired ratios: a slow block hits base and test alike and must cancel in the ratio. */
static void test_ab_stats(void)
{
	struct gb_ab a;
	double base[] = {10, 20, 10, 10, 11}, test[] = {10.1, 20.2, 10.1, 10.2, 11.0};
	gb_ab_stats(base, test, 5, &a);
	CHECK(a.n == 5 && a.base_us == 10 && fabs(a.test_us - 10.2) < 1e-12);
	CHECK(fabs(a.ratio - 1.01) < 1e-12 && fabs(a.q1 - 1.01) < 1e-12);
	CHECK(fabs(a.q3 - 1.01) < 1e-12);	 /* ratios 1.00 1.01 1.01 1.01 1.02 */
	CHECK(base[1] == 20 && test[4] == 11.0); /* inputs untouched */
	double b2[] = {4, 2}, t2[] = {2, 3};
	gb_ab_stats(b2, t2, 2, &a);
	CHECK(a.base_us == 3 && a.test_us == 2.5 && a.ratio == 1.0 && a.q1 == 0.5 && a.q3 == 1.5);
	CHECK(a.ci_lo == 0.5 && a.ci_hi == 1.5); /* n < 6: the whole range */
	/* n = 100 ratios 0.50, 0.51, ..., 1.49: k = 50 - 9.8 -> 40th smallest / largest. */
	double b100[100], t100[100];
	for (int i = 0; i < 100; i++) {
		b100[i] = 100;
		t100[99 - i] = 50 + i; /* order must not matter */
	}
	gb_ab_stats(b100, t100, 100, &a);
	CHECK(fabs(a.ratio - 0.995) < 1e-12);
	CHECK(fabs(a.ci_lo - 0.89) < 1e-12 && fabs(a.ci_hi - 1.10) < 1e-12);
	gb_ab_stats(base, test, 0, &a);
	CHECK(a.n == 0 && a.ratio == 0);
}

static void test_decisions(void)
{
	struct gb_opts o;
	char err[256], a[16], p[16], ch[16];
	struct gb_decision d;
	CHECK(parse(&o, err, "") == 0);
	gb_decision_reset(&d);
	gb_decision_strings(&d, &o, a, p, ch);
	CHECK(!strcmp(a, "-") && !strcmp(p, "-") && !strcmp(ch, "-"));
	const char *l1 = "call c=100.1 seq=0 coll=4 bytes=1024 pipe=1 reg=0 table=7x3 "
			 "cost=1,2,3 algo=1 proto=2 ch=0\n";
	const char *l2 = "call c=200.1 seq=0 coll=4 bytes=1024 pipe=1 reg=0 table=7x3 "
			 "cost=1,2,3 algo=0 proto=2 ch=4\n";
	CHECK(gb_decision_add_line(&d, "load policy x\n", 0) == 0);
	CHECK(gb_decision_add_line(&d, "call c=1.1 seq=0 algo=1\n", 0) == 0); /* incomplete */
	CHECK(gb_decision_add_line(&d, l1, 0) == 1);
	gb_decision_strings(&d, &o, a, p, ch);
	CHECK(!strcmp(a, "ring") && !strcmp(p, "simple") && !strcmp(ch, "-"));
	CHECK(gb_decision_add_line(&d, l2, 100) == 0); /* another process */
	CHECK(gb_decision_add_line(&d, l2, 0) == 1);
	gb_decision_strings(&d, &o, a, p, ch);
	CHECK(!strcmp(a, "mixed") && !strcmp(p, "simple") && !strcmp(ch, "mixed") && d.calls == 2);
	/* No trace: the forced values. */
	CHECK(parse(&o, err, "--algo tree --channels 2") == 0);
	gb_decision_reset(&d);
	gb_decision_strings(&d, &o, a, p, ch);
	CHECK(!strcmp(a, "tree") && !strcmp(p, "-") && !strcmp(ch, "2"));
}

static void test_values(void)
{
	const struct gb_type *h = gb_type_by_name("half"), *b = gb_type_by_name("bf16");
	const struct gb_type *i8 = gb_type_by_name("int8"), *u8 = gb_type_by_name("uint8");
	CHECK(h && b && i8 && u8 && !gb_type_by_name("fp8"));
	unsigned char buf[64];
	for (int v = -40; v <= 252; v += 4) {
		gb_store(h, buf, 1, v);
		CHECK(gb_load(h, buf, 1) == v);
		gb_store(b, buf, 2, v);
		CHECK(gb_load(b, buf, 2) == v);
	}
	gb_store(i8, buf, 0, 200); /* wraps as on the GPU */
	CHECK(gb_load(i8, buf, 0) == -56);
	CHECK(gb_input_value(0, 0) == 1 && gb_input_value(5, 3) == 5);
	/* 64 ranks of int8: sum 256 + ... wraps; AllReduce of 2 ranks, element 0: 1 + 2. */
	CHECK(gb_expected(GB_ALLREDUCE, u8, 0, 2, 0, 4) == 3);
	CHECK(gb_expected(GB_ALLGATHER, h, 0, 2, 5, 8) == gb_input_value(1, 1));
	CHECK(gb_expected(GB_REDUCESCATTER, h, 1, 2, 0, 4) ==
	      gb_input_value(0, 4) + gb_input_value(1, 4));
}

static void test_csv(void)
{
	struct gb_opts o;
	char err[256], *out = NULL;
	size_t len = 0;
	CHECK(parse(&o, err, "-n 4 --algo ring --proto ll --channels 2 -i 50") == 0);
	struct gb_row r = {.op = GB_ALLGATHER, .size = 1048576, .count = 262144, .iters = 7};
	r.time_us = (struct gb_stats){.mean = 100, .min = 90, .max = 125, .sd = 12.5};
	snprintf(r.algo, sizeof r.algo, "ring");
	snprintf(r.proto, sizeof r.proto, "ll");
	snprintf(r.ch, sizeof r.ch, "2");
	FILE *f = open_memstream(&out, &len);
	fprintf(f, "%s\n", gb_csv_header);
	gb_print_csv_row(f, &o, &r);
	r.iters = 0; /* the option's count */
	r.wrong = 3;
	gb_print_csv_row(f, &o, &r);
	fclose(f);
	const char *want =
	    "coll,bytes,count,type,ranks,inplace,config,iters,reps,time_us_mean,time_us_min,"
	    "time_us_max,time_us_sd,algbw_gbs,busbw_gbs,busbw_min_gbs,busbw_max_gbs,algo,proto,"
	    "channels,wrong\n"
	    "allgather,1048576,262144,float,4,0,ring/ll/2,7,1,100.000,90.000,125.000,12.500,"
	    "10.4858,7.8643,6.2915,8.7381,ring,ll,2,0\n"
	    "allgather,1048576,262144,float,4,0,ring/ll/2,50,1,100.000,90.000,125.000,12.500,"
	    "10.4858,7.8643,6.2915,8.7381,ring,ll,2,3\n";
	if (strcmp(out, want)) {
		fprintf(stderr, "CSV:\n%s\nwant:\n%s\n", out, want);
		CHECK(0);
	}
	free(out);
}

int main(void)
{
	test_sizes();
	test_args();
	test_forced_and_labels();
	test_counts();
	test_adapt_iters();
	test_stats();
	test_ab_stats();
	test_decisions();
	test_values();
	test_csv();
	return check_summary("test_bench_util");
}
