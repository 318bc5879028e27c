/* Native twin of benchmarks/policies/two_lookups.c (native_tuner.h): the algorithm from a
 * per-collective array, the protocol and channels from a per-size-bucket array (a stored 0 means
 * NCCL's choice, value - 1 is the id). With one dimension chosen, the cheapest available cell
 * along it is forced; no available cell leaves the whole decision to NCCL. */
#include "native_tuner.h"

struct choice {
	int32_t algorithm_plus1, protocol_plus1, n_channels;
	uint32_t _pad;
};
/* Zero, like the policy's maps until an operator fills them. */
static struct choice by_coll[8], by_size[64];

static void decide(const struct native_comm *c, ncclFunc_t coll, size_t n_bytes, float *t, int na,
		   int np, int *n_channels)
{
	(void)c;
	const struct choice *a = &by_coll[(uint32_t)coll & 7];
	const struct choice *s = &by_size[(n_bytes >> 10) & 63];
	int algo = a->algorithm_plus1 - 1, proto = s->protocol_plus1 - 1;
	if (algo >= 0 || proto >= 0) {
		int best = -1;
		for (int x = 0; x < na; x++)
			for (int y = 0; y < np; y++)
				if ((algo < 0 || x == algo) && (proto < 0 || y == proto) &&
				    native_cell_ok(t, na, np, x, y) &&
				    (best < 0 || t[x * np + y] < t[best]))
					best = x * np + y;
		if (best < 0)
			return;
		t[best] = 0.0f;
	}
	if (s->n_channels > 0 && s->n_channels <= NCCL_MAX_CHANNELS)
		*n_channels = s->n_channels;
}
