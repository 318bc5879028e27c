/* UNSAFE: writes an input field of the tuner context. Only algorithm, protocol and n_channels
 * are outputs; n_bytes is NCCL's input. Expected: rejected (write to read-only ctx field). */
#include "ncclbpf.h"

SEC("tuner")
int ctx_write_input(struct ncclbpf_tuner_ctx *ctx)
{
	ctx->n_bytes = 0; /* BUG: input field */
	return 0;
}
