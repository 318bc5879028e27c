/* A pointer inside global data: it would need an address the program cannot have. */
#include "ncclbpf.h"
__u32 target = 5;
__u32 *ptr = &target;
SEC("tuner")
int reads_ptr(struct ncclbpf_tuner_ctx *ctx)
{
	ctx->n_channels = *ptr;
	return 0;
}
