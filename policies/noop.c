/* The smallest tuner: leaves every decision to NCCL (the outputs start at their DEFAULT values).
 * It measures the floor cost of running a policy on every getCollInfo call. */
#include "ncclbpf.h"

SEC("tuner")
int noop(struct ncclbpf_tuner_ctx *ctx)
{
	return 0;
}
