/* Native twin of policies/noop.c: leaves every decision to NCCL (native_tuner.h). */
#include "native_tuner.h"

static void decide(const struct native_comm *c, ncclFunc_t coll, size_t n_bytes, float *t, int na,
		   int np, int *n_channels)
{
	(void)c;
	(void)coll;
	(void)n_bytes;
	(void)t;
	(void)na;
	(void)np;
	(void)n_channels;
}
