/* Per-communicator maps through the runtime's hot path: two communicators of one process,
 * interleaved calls, different call counts, the exploration policy (policies/
 * explore_protocols.c) keeping its counts in a per-communicator map. Each communicator's
 * decision stream must equal the one a process serving that communicator alone produces (a
 * forked child), also across a hot reload halfway (the counts carry over per communicator).
 * Without the binding (the same calls through the process-wide entry, which runs on the one
 * template instance) the streams differ, which is what makes the comparison mean something. The
 * same policy with a plain ARRAY does not load.
 *
 * Memory: every communicator's instances together are held to NCCLBPF_MAX_MAP_BYTES (the bundle
 * limit counts the map once; a thousand communicators made a thousand copies). Under a 1 MiB
 * limit exactly as many communicators as fit run the policy, the next runs without it (and
 * stays so, also when memory frees up), and a communicator created after one is freed fits.
 * usage: test_comm_maps EXPLORE.o EXPLORE_PLAIN.o */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "ebpf/maps.h"
#include "ebpf/object.h"
#include "ncclbpf/nccl_platform.h"
#include "ncclbpf/runtime.h"

/* A cost table of zeros for runs outside NCCL (ncclbpf_rt_tuner_ctx.cost_f32). */
static const float zero_costs[NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS];

#define CALLS	40
#define MAX_DEC 64

struct call {
	int comm; /* 0: A, 1: B */
	uint32_t coll;
	uint64_t bytes;
};

/* A: 25 calls, B: 15, interleaved irregularly; three size buckets, two collectives. */
static void schedule(struct call *s)
{
	static const uint64_t sizes[3] = {1 << 10, 1 << 16, 1 << 22};
	int a = 0, b = 0;
	for (int i = 0; i < CALLS; i++) {
		int comm = (i % 8 == 1 || i % 8 == 4 || i % 8 == 6) && b < 15 ? 1 : 0;
		if (comm == 0 && a == 25)
			comm = 1;
		int k = comm ? b++ : a++;
		s[i] = (struct call){comm,
				     k % 5 == 4 ? NCCLBPF_COLL_ALLGATHER : NCCLBPF_COLL_ALLREDUCE,
				     sizes[(k / 2) % 3]};
	}
}

struct stream {
	int n;
	int32_t protocol[MAX_DEC];
};

static int32_t decide(struct ncclbpf_comm *c, const struct call *k)
{
	struct ncclbpf_rt_tuner_ctx rx = {.cost_f32 = zero_costs};
	rx.x.coll_type = k->coll;
	rx.x.n_bytes = k->bytes;
	rx.x.num_algo = NCCLBPF_NUM_ALGOS;
	rx.x.num_proto = NCCLBPF_NUM_PROTOS;
	rx.x.algorithm = rx.x.protocol = -1;
	uint64_t v;
	if (c) {
		rx.x.seq = ncclbpf_comm__tick(c);
		CHECK(ncclbpf_rt_run_tuner_comm(c, &rx, &v) == 0);
	} else {
		CHECK(ncclbpf_rt_run_tuner(&rx, &v) == 0);
	}
	return rx.x.protocol;
}

/* Runs the schedule's calls of the communicators in `which` (bit 0: A, bit 1: B) and records
 * each one's stream; reload_at >= 0 reloads the bundle before that call; bound = 0 runs every
 * call through the process-wide entry (no communicator bound). */
static void run(const char *policy, int which, int reload_at, int bound, struct stream out[2])
{
	struct call s[CALLS];
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	schedule(s);
	memset(out, 0, 2 * sizeof(*out));
	CHECKF(ncclbpf_rt_reload(policy, &r) == 0, "%s", r.msg);
	struct ncclbpf_comm *c[2] = {NULL, NULL};
	for (int i = 0; i < 2; i++)
		if (which & (1 << i))
			c[i] = ncclbpf_comm__new(0x1111ull * (i + 1), 8 >> i, 1, 5);
	for (int i = 0; i < CALLS; i++) {
		if (i == reload_at)
			CHECKF(ncclbpf_rt_reload(policy, &r) == 0, "%s", r.msg);
		struct stream *st = &out[s[i].comm];
		if (!c[s[i].comm])
			continue;
		st->protocol[st->n++] = decide(bound ? c[s[i].comm] : NULL, &s[i]);
	}
	for (int i = 0; i < 2; i++)
		ncclbpf_comm__free(c[i]);
}

/* The stream of communicator `comm` served alone, from a fresh process. */
static struct stream alone(const char *policy, int comm)
{
	struct stream st[2];
	int fd[2];
	CHECK(pipe(fd) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		run(policy, 1 << comm, -1, 1, st);
		ssize_t w = write(fd[1], &st[comm], sizeof(st[comm]));
		_exit(w == (ssize_t)sizeof(st[comm]) && !check_failures ? 0 : 1);
	}
	close(fd[1]);
	struct stream got = {0};
	CHECK(read(fd[0], &got, sizeof(got)) == (ssize_t)sizeof(got));
	close(fd[0]);
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return got;
}

static int same(const struct stream *a, const struct stream *b)
{
	return a->n == b->n && !memcmp(a->protocol, b->protocol, sizeof(a->protocol[0]) * a->n);
}

/* The memory of one communicator's instances of policy's per-communicator maps. */
static uint64_t per_comm_bytes(const char *policy)
{
	char err[256];
	struct ebpf_object *o = ncclbpf_object_open_file(policy, NULL, err, sizeof(err));
	uint64_t b = 0;
	CHECKF(o != NULL, "%s", err);
	for (uint32_t i = 0; o && i < ebpf_object__map_cnt(o); i++) {
		struct ebpf_map_def d = *ebpf_object_map__def(ebpf_object__map(o, i));
		if (d.flags & EBPF_MAP_F_PER_COMM) {
			d.flags &= ~EBPF_MAP_F_PER_COMM;
			b += ebpf_map__def_memory(&d);
		}
	}
	ebpf_object__close(o);
	return b;
}

/* Whether c's program runs (its per-communicator maps exist). */
static int runs(struct ncclbpf_comm *c)
{
	struct call k = {0, NCCLBPF_COLL_ALLREDUCE, 1 << 10};
	struct ncclbpf_rt_tuner_ctx rx = {.cost_f32 = zero_costs};
	rx.x.coll_type = k.coll;
	rx.x.n_bytes = k.bytes;
	rx.x.num_algo = NCCLBPF_NUM_ALGOS;
	rx.x.num_proto = NCCLBPF_NUM_PROTOS;
	rx.x.algorithm = rx.x.protocol = -1;
	rx.x.seq = ncclbpf_comm__tick(c);
	uint64_t v;
	return ncclbpf_rt_run_tuner_comm(c, &rx, &v) == 0;
}

#define MAX_COMMS 4096
static void budget_child(const char *policy)
{
	static struct ncclbpf_comm *c[MAX_COMMS];
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	uint64_t each = per_comm_bytes(policy), fit = each ? (1u << 20) / each : 0;
	CHECKF(each > 0 && fit >= 2 && fit + 1 < MAX_COMMS, "%llu bytes per communicator",
	       (unsigned long long)each);
	setenv("NCCLBPF_MAX_MAP_BYTES", "1M", 1);
	CHECKF(ncclbpf_rt_reload(policy, &r) == 0, "%s", r.msg);
	uint32_t n = 0;
	for (; n <= fit && n < MAX_COMMS; n++)
		c[n] = ncclbpf_comm__new(0x5000ull + n, 2, 1, 5);
	for (uint32_t i = 0; i < fit; i++)
		CHECKF(runs(c[i]), "communicator %u of %llu that fit does not run", i,
		       (unsigned long long)fit);
	CHECKF(!runs(c[fit]), "communicator %llu runs past the limit", (unsigned long long)fit);
	ncclbpf_comm__free(c[0]);
	CHECKF(!runs(c[fit]), "the communicator over the limit switched to the policy halfway");
	struct ncclbpf_comm *late = ncclbpf_comm__new(0x6000, 2, 1, 5);
	CHECK(runs(late));
	/* a reload: every communicator's new instances replace its old ones within the limit */
	CHECKF(ncclbpf_rt_reload(policy, &r) == 0, "%s", r.msg);
	for (uint32_t i = 1; i < fit; i++)
		CHECKF(runs(c[i]), "communicator %u does not run after a reload", i);
	CHECK(runs(late));
	ncclbpf_comm__free(late);
	for (uint32_t i = 1; i < n; i++)
		ncclbpf_comm__free(c[i]);
	_exit(check_failures ? 1 : 0);
}

/* In a child: the limit is read once per process, and the parent must keep the default. */
static void test_budget(const char *policy)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		budget_child(policy);
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the memory limit phase failed");
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s EXPLORE.o EXPLORE_PLAIN.o\n", argv[0]);
		return 2;
	}
	setenv("NCCLBPF_WATCH", "0", 1);
	setenv("NCCLBPF_INSPECT", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	unsetenv("NCCLBPF_CP_DIR");
	ncclbpf_rt_acquire();
	test_budget(argv[1]);

	struct stream lone[2] = {alone(argv[1], 0), alone(argv[1], 1)}, both[2], shared[2];
	CHECK(lone[0].n == 25 && lone[1].n == 15);
	/* the policy explores: several protocols, then NCCL's choice again */
	int seen[4] = {0};
	for (int i = 0; i < lone[0].n; i++)
		seen[lone[0].protocol[i] + 1] = 1;
	CHECK(seen[0] && seen[1] && seen[2] && seen[3]);

	run(argv[1], 3, -1, 1, both);
	CHECKF(same(&both[0], &lone[0]) && same(&both[1], &lone[1]),
	       "interleaved communicators decide as if alone");
	run(argv[1], 3, CALLS / 2, 1, both);
	CHECKF(same(&both[0], &lone[0]) && same(&both[1], &lone[1]),
	       "... also across a hot reload (per-communicator contents carried over)");
	/* one instance for both (no communicator bound): the streams mix */
	run(argv[1], 3, -1, 0, shared);
	CHECKF(!same(&shared[0], &lone[0]) || !same(&shared[1], &lone[1]),
	       "sharing one instance changes the streams");

	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	CHECK(ncclbpf_rt_reload(argv[2], &r) != 0);
	CHECKF(strstr(r.msg, "`explore_calls` is written by tuner program `explore`") &&
		   strstr(r.msg, "NCCLBPF_F_PER_COMM"),
	       "plain ARRAY refused: %s", r.msg);
	ncclbpf_rt_unload();
	ncclbpf_rt_release();
	return check_summary("test_comm_maps");
}
