/* The net hooks read the clock only when a program can see the time (ncclbpf_rt_net_event):
 * the verifier records which context fields each program may read, and the runtime reads
 * CLOCK_MONOTONIC for an event only when its program may read time_ns (or, for a completion,
 * duration_ns), and at isend/irecv posts only when the SEC("net/complete") program may read
 * duration_ns. No timing: *now is either 0 (no clock read) or not.
 * With a 4th argument "tsc" (NCCLBPF_NET_TSC=1): posting stamps are TSC ticks and a
 * completion's duration is converted from them (exit 77, skipped, on a CPU without an
 * invariant TSC); "notsc" (NCCLBPF_NET_TSC=0): stamps are CLOCK_MONOTONIC ns.
 * Sampled timing declared by the section (clk_sampled.o, SEC("net/complete/time_every=4")):
 * posts are to be stamped one in 4; sections no hook serves (bad_section.o, bad_every0.o,
 * bad_every_big.o, next to CLK_DURATION.o) are refused and the active policy stays.
 * usage: test_net_clock CLK_BYTES.o CLK_DURATION.o CLK_TIME.o [tsc|notsc] */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "ncclbpf/runtime.h"

struct ev {
	int err;
	uint64_t now, ret, time_ns, duration_ns;
};

static struct ev event_stamp(uint32_t op, uint64_t t0, int *stamp_after);

static struct ev event(uint32_t op, uint64_t t0)
{
	return event_stamp(op, t0, NULL);
}

/* With stamp_after: the adapter's form for posts (the post time may be taken after the
 * hand-over to the transport). */
static struct ev event_stamp(uint32_t op, uint64_t t0, int *stamp_after)
{
	struct ncclbpf_net_ctx x;
	struct ev e = {0};
	memset(&x, 0, sizeof(x));
	x.op = op;
	x.bytes = 100;
	x.peer = 0xffffffffu;
	x.time_ns = x.duration_ns = 12345; /* the runtime owns these: 0 unless it read the clock */
	e.now = 777;
	if (stamp_after)
		*stamp_after = 55;
	e.err = ncclbpf_rt_net_event(&x, t0, &e.now, &e.ret, stamp_after);
	e.time_ns = x.time_ns;
	e.duration_ns = x.duration_ns;
	return e;
}

/* path of NAME in the folder of sibling */
static const char *beside(const char *sibling, const char *name)
{
	static char buf[4096];
	const char *slash = strrchr(sibling, '/');
	int dir = slash ? (int)(slash - sibling) : 1;
	snprintf(buf, sizeof(buf), "%.*s/%s", dir, slash ? sibling : ".", name);
	return buf;
}

/* A bundle the runtime must refuse, with a message naming the section. */
static void refused(const char *path, const char *section)
{
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	int e = ncclbpf_rt_reload(path, &r);
	char want[128];
	snprintf(want, sizeof(want), "no hook serves SEC(\"%s\")", section);
	CHECK(e == -EINVAL);
	CHECK(strstr(r.msg, want) != NULL);
	if (!strstr(r.msg, want))
		fprintf(stderr, "%s: %s\n", path, r.msg);
}

static void load(const char *path)
{
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	int e = ncclbpf_rt_reload(path, &r);
	if (e)
		fprintf(stderr, "%s: %s\n", path, r.msg);
	CHECK(e == 0);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s CLK_BYTES.o CLK_DURATION.o CLK_TIME.o\n", argv[0]);
		return 2;
	}
	const char *mode = argc > 4 ? argv[4] : "";
	if (!strcmp(mode, "tsc"))
		setenv("NCCLBPF_NET_TSC", "1", 1);
	else if (!strcmp(mode, "notsc"))
		setenv("NCCLBPF_NET_TSC", "0", 1);
	setenv("NCCLBPF_WATCH", "0", 1);
	setenv("NCCLBPF_INSPECT", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	ncclbpf_rt_acquire();
	struct ev e;
	if (!strcmp(mode, "tsc") && !ncclbpf_rt_net_tsc()) {
		printf("SKIP: no invariant TSC on this CPU\n");
		ncclbpf_rt_release();
		return 77;
	}
	if (!strcmp(mode, "notsc"))
		CHECK(!ncclbpf_rt_net_tsc());

	/* No policy: nothing runs, no clock. */
	e = event(NCCLBPF_NET_ISEND, 0);
	CHECK(e.err == -ENOENT && e.now == 0 && e.time_ns == 0);

	/* Programs that read only bytes: they run, and no event reads the clock. */
	load(argv[1]);
	e = event(NCCLBPF_NET_CONNECT, 0);
	CHECK(e.err == 0 && e.ret == 101);
	CHECK_EQ_U64(e.now, 0);
	CHECK_EQ_U64(e.time_ns, 0);
	e = event(NCCLBPF_NET_ISEND, 0);
	CHECK(e.err == 0 && e.ret == 101);
	CHECK_EQ_U64(e.now, 0);
	CHECK_EQ_U64(e.time_ns, 0);
	e = event(NCCLBPF_NET_IRECV, 0); /* no program, and the completion needs no post time */
	CHECK(e.err == -ENOENT);
	CHECK_EQ_U64(e.now, 0);
	int stamp;
	e = event_stamp(NCCLBPF_NET_ISEND, 0, &stamp);
	CHECK(e.err == 0 && e.now == 0 && stamp == 0);
	for (uint32_t op = NCCLBPF_NET_COMPLETE; op <= NCCLBPF_NET_COMPLETE_RECV; op++) {
		e = event(op, 1000);
		CHECK(e.err == 0 && e.ret == 102);
		CHECK_EQ_U64(e.now, 0);
		CHECK_EQ_U64(e.time_ns, 0);
		CHECK_EQ_U64(e.duration_ns, 0);
	}

	/* A complete program that reads duration_ns: the posts read the clock (no post program
	 * runs), and the duration reaches the program. */
	load(argv[2]);
	e = event(NCCLBPF_NET_ISEND, 0);
	CHECK(e.err == -ENOENT && e.now != 0 && e.time_ns == e.now);
	e = event(NCCLBPF_NET_IRECV, 0);
	CHECK(e.err == -ENOENT && e.now != 0);
	uint64_t t0 = e.now;
	nanosleep(&(struct timespec){0, 1000000}, NULL); /* the clock moves on */
	e = event(NCCLBPF_NET_COMPLETE_RECV, t0);
	CHECK(e.err == 0 && e.ret == 7);
	CHECK(e.now > t0 && e.time_ns == e.now);
	CHECK_EQ_U64(e.duration_ns, e.now - t0);
	/* The adapter's form: no clock at the post itself, the caller stamps after the
	 * hand-over. */
	for (uint32_t op = NCCLBPF_NET_ISEND; op <= NCCLBPF_NET_IRECV; op++) {
		e = event_stamp(op, 0, &stamp);
		CHECK(e.err == -ENOENT && stamp == 1);
		CHECK_EQ_U64(e.now, 0);
		CHECK_EQ_U64(e.time_ns, 0);
	}
	/* The stamp the adapter takes after the hand-over, passed back as t0. */
	struct timespec m;
	clock_gettime(CLOCK_MONOTONIC, &m);
	uint64_t m0 = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
	uint64_t s = ncclbpf_rt_net_stamp();
	CHECK((s >> 63) == (uint64_t)ncclbpf_rt_net_tsc());
	nanosleep(&(struct timespec){0, 2000000}, NULL);
	e = event(NCCLBPF_NET_COMPLETE, s);
	clock_gettime(CLOCK_MONOTONIC, &m);
	uint64_t m1 = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
	CHECK(e.err == 0 && e.ret == 7);
	/* at least the sleep, at most the bracket (a 1e-3 margin for the TSC's rate) */
	CHECK(e.duration_ns >= 1998000 && e.duration_ns <= (m1 - m0) + (m1 - m0) / 1000);
	if (e.duration_ns < 1998000 || e.duration_ns > m1 - m0 + (m1 - m0) / 1000)
		fprintf(stderr, "duration %llu ns, bracket %llu ns\n",
			(unsigned long long)e.duration_ns, (unsigned long long)(m1 - m0));
	/* Unstamped (sampled timing, or posted while no program needed a time): no clock. */
	e = event(NCCLBPF_NET_COMPLETE, 0);
	CHECK(e.err == 0 && e.ret == 3 && e.now == 0 && e.duration_ns == 0);
	e = event(NCCLBPF_NET_CONNECT, 0);
	CHECK(e.err == -ENOENT && e.now == 0);

	/* Sampled timing declared by the section: the caller stamps one post in 4; a stamped
	 * completion gets its duration, an unstamped one reads no clock. */
	load(beside(argv[2], "clk_sampled.o"));
	for (uint32_t op = NCCLBPF_NET_ISEND; op <= NCCLBPF_NET_IRECV; op++) {
		e = event_stamp(op, 0, &stamp);
		CHECK(e.err == -ENOENT && stamp == 4 && e.now == 0);
	}
	s = ncclbpf_rt_net_stamp();
	e = event(NCCLBPF_NET_COMPLETE_RECV, s);
	CHECK(e.err == 0 && e.ret == 7 && e.duration_ns > 0);
	e = event(NCCLBPF_NET_COMPLETE, 0);
	CHECK(e.err == 0 && e.ret == 3 && e.now == 0 && e.duration_ns == 0);
	/* Refused: a misspelt section, N out of 1..1048576. The sampled policy stays active. */
	refused(beside(argv[2], "bad_section.o"), "net/complte");
	refused(beside(argv[2], "bad_every0.o"), "net/complete/time_every=0");
	refused(beside(argv[2], "bad_every_big.o"), "net/complete/time_every=1048577");
	e = event_stamp(NCCLBPF_NET_ISEND, 0, &stamp);
	CHECK(e.err == -ENOENT && stamp == 4);

	/* Connect and isend programs that read time_ns; a complete program that reads only op:
	 * no clock at completion, none at irecv. */
	load(argv[3]);
	e = event(NCCLBPF_NET_CONNECT, 0);
	CHECK(e.err == 0 && e.ret == 5 && e.now != 0 && e.time_ns == e.now);
	e = event(NCCLBPF_NET_ACCEPT, 0);
	CHECK(e.err == -ENOENT && e.now == 0);
	e = event_stamp(NCCLBPF_NET_ISEND, 0, &stamp); /* its own program reads the time */
	CHECK(e.err == 0 && e.ret == 5 && e.now != 0 && stamp == 0);
	t0 = e.now;
	e = event(NCCLBPF_NET_IRECV, 0);
	CHECK(e.err == -ENOENT);
	CHECK_EQ_U64(e.now, 0);
	e = event(NCCLBPF_NET_COMPLETE, t0);
	CHECK(e.err == 0 && e.ret == NCCLBPF_NET_COMPLETE);
	CHECK_EQ_U64(e.now, 0);
	CHECK_EQ_U64(e.duration_ns, 0);
	e = event(NCCLBPF_NET_COMPLETE, ncclbpf_rt_net_stamp()); /* a stamp, but no reader */
	CHECK(e.err == 0 && e.now == 0 && e.duration_ns == 0);

	/* Back to the bytes-only bundle: the flags follow the active policy. */
	load(argv[1]);
	e = event(NCCLBPF_NET_ISEND, 0);
	CHECK(e.err == 0 && e.ret == 101);
	CHECK_EQ_U64(e.now, 0);
	ncclbpf_rt_unload();
	e = event(NCCLBPF_NET_ISEND, 0);
	CHECK(e.err == -ENOENT && e.now == 0);
	ncclbpf_rt_release();
	return check_summary("test_net_clock");
}
