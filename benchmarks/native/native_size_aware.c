/* Native twin of policies/size_aware.c (native_tuner.h): small messages on LL, medium on LL128,
 * large on SIMPLE, the first available cell of each list; none available: NCCL's choice. */
#include "native_tuner.h"

static void decide(const struct native_comm *c, ncclFunc_t coll, size_t n_bytes, float *t, int na,
		   int np, int *n_channels)
{
	(void)c;
	(void)coll;
	(void)n_channels;
	if (n_bytes <= (64u << 10)) {
		if (!native_pick(t, na, np, NCCL_ALGO_TREE, NCCL_PROTO_LL))
			native_pick(t, na, np, NCCL_ALGO_RING, NCCL_PROTO_LL);
	} else if (n_bytes <= (4u << 20)) {
		if (!native_pick(t, na, np, NCCL_ALGO_RING, NCCL_PROTO_LL128) &&
		    !native_pick(t, na, np, NCCL_ALGO_TREE, NCCL_PROTO_LL128))
			native_pick(t, na, np, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
	} else {
		if (!native_pick(t, na, np, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE))
			native_pick(t, na, np, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE);
	}
}
