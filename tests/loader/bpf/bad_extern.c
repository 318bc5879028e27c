/* A reference to an extern variable (libbpf's kconfig/ksym style): nothing can resolve it. */
#include "ncclbpf.h"
extern __u32 CONFIG_HZ;
SEC("tuner")
int uses_extern(struct ncclbpf_tuner_ctx *ctx)
{
	ctx->n_channels = CONFIG_HZ;
	return 0;
}
