/* A CO-RE field access: the loader cannot honour preserve_access_index relocations. */
#include "ncclbpf.h"
struct ncclbpf_tuner_ctx___core {
	__u64 comm_id;
	__u64 n_bytes;
} __attribute__((preserve_access_index));
SEC("tuner")
int core_access(struct ncclbpf_tuner_ctx *ctx)
{
	struct ncclbpf_tuner_ctx___core *c = (void *)ctx;
	ctx->n_channels = c->n_bytes > 4096;
	return 0;
}
