/* Map contents across reloads: .maps maps whose name, type and sizes match keep their contents
 * when a new bundle replaces the running one; a bundle without them starts empty; global data
 * always comes from the new bundle. Uses benchmarks/policies/two_lookups.c (two ARRAY maps: a
 * stored value v means id v - 1, 0 means NCCL's choice).
 * usage: test_map_carry TWO_LOOKUPS.o SIZE_AWARE.o */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ncclbpf/runtime.h"

/* A cost table of zeros for runs outside NCCL (ncclbpf_rt_tuner_ctx.cost_f32). */
static const float zero_costs[NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS];

struct choice {
	int32_t algorithm_plus1, protocol_plus1, n_channels;
	uint32_t _pad;
};

static void decide(int32_t *algo, int32_t *proto, int32_t *ch)
{
	struct ncclbpf_rt_tuner_ctx rx = {.cost_f32 = zero_costs};
	rx.x.coll_type = NCCLBPF_COLL_ALLREDUCE;
	rx.x.n_bytes = 5 << 10; /* size bucket 5 */
	rx.x.algorithm = rx.x.protocol = -1;
	uint64_t v = 0;
	CHECK(ncclbpf_rt_run_tuner(&rx, &v) == 0);
	*algo = rx.x.algorithm;
	*proto = rx.x.protocol;
	*ch = rx.x.n_channels;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s TWO_LOOKUPS.o SIZE_AWARE.o\n", argv[0]);
		return 2;
	}
	setenv("NCCLBPF_WATCH", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	ncclbpf_rt_acquire();
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	CHECK(ncclbpf_rt_reload(argv[1], &r) == 0);
	CHECK(r.maps_kept == 0);
	int32_t a, p, ch;
	decide(&a, &p, &ch);
	CHECK(a == -1 && p == -1 && ch == 0); /* empty maps: NCCL's choice */

	uint32_t coll = NCCLBPF_COLL_ALLREDUCE, bucket = 5;
	struct choice by_coll = {NCCLBPF_ALGO_RING + 1, 0, 0, 0};
	struct choice by_size = {0, NCCLBPF_PROTO_LL128 + 1, 12, 0};
	CHECK(ncclbpf_rt_map_update("by_coll", &coll, &by_coll) == 0);
	CHECK(ncclbpf_rt_map_update("by_size", &bucket, &by_size) == 0);
	CHECK(ncclbpf_rt_map_update("no_such_map", &bucket, &by_size) == -ENOENT);
	decide(&a, &p, &ch);
	CHECK(a == NCCLBPF_ALGO_RING && p == NCCLBPF_PROTO_LL128 && ch == 12);

	/* Same bundle again: both maps match and keep their contents. */
	CHECK(ncclbpf_rt_reload(argv[1], &r) == 0);
	CHECK_EQ_U64(r.maps_kept, 2);
	decide(&a, &p, &ch);
	CHECK(a == NCCLBPF_ALGO_RING && p == NCCLBPF_PROTO_LL128 && ch == 12);
	struct choice got;
	CHECK(ncclbpf_rt_map_lookup("by_size", &bucket, &got) == 0 && got.n_channels == 12);

	/* A bundle without those maps, then the original again: nothing to carry, empty maps. */
	CHECK(ncclbpf_rt_reload(argv[2], &r) == 0);
	CHECK(r.maps_kept == 0);
	CHECK(ncclbpf_rt_map_lookup("by_size", &bucket, &got) == -ENOENT);
	CHECK(ncclbpf_rt_reload(argv[1], &r) == 0);
	CHECK(r.maps_kept == 0);
	decide(&a, &p, &ch);
	CHECK(a == -1 && p == -1 && ch == 0);

	ncclbpf_rt_unload();
	CHECK(ncclbpf_rt_map_lookup("by_size", &bucket, &got) == -ENOENT);
	ncclbpf_rt_release();
	return check_summary("test_map_carry");
}
