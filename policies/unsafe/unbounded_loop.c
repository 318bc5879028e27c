/* UNSAFE: a loop bounded only by the message size (up to 2^64 iterations): the hook could hang
 * NCCL. Expected: rejected (loop not provably bounded within the complexity budget). */
#include "ncclbpf.h"

SEC("tuner")
int unbounded_loop(struct ncclbpf_tuner_ctx *ctx)
{
	volatile __u64 i = 0;

	while (i < ctx->n_bytes) /* BUG: no useful bound */
		i++;
	return 0;
}
