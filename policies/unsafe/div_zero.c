/* UNSAFE: divides by a context value that may be zero (n_nodes is 0 in some NCCL set-ups).
 * The engine defines x/0 = 0 like Linux, but the verifier rejects a possibly-zero divisor
 * because the policy almost certainly did not mean it. Expected: rejected (division by zero). */
#include "ncclbpf.h"

__u64 bytes_per_node;

SEC("tuner")
int div_zero(struct ncclbpf_tuner_ctx *ctx)
{
	bytes_per_node = ctx->n_bytes / ctx->n_nodes; /* BUG: n_nodes may be 0 */
	return 0;
}
