/* Test policy whose every decision encodes its version (POLICY_VERSION, set when compiling):
 * algorithm = v % 2, protocol = (v % 6) / 2, channels = 1 + v % 60, each from its own load of
 * the .rodata constant. A call that ran partly under one version and partly under another, or
 * on freed memory, produces a combination no version produces. */
#include "ncclbpf.h"

#ifndef POLICY_VERSION
#define POLICY_VERSION 1
#endif

const volatile __u32 version = POLICY_VERSION;

SEC("tuner")
int versioned(struct ncclbpf_tuner_ctx *ctx)
{
	ctx->algorithm = version % 2;
	ctx->protocol = (version % 6) / 2;
	ctx->n_channels = 1 + version % 60;
	return 0;
}
