/* A tuner bundle that asks for this library as NCCL's net plugin and ships two more settings,
 * one enforced (test_env_served: net default on, provenance of each served value). */
#include "ncclbpf.h"

__attribute__((section(".ncclbpf.env"), used)) static const char nccl_settings[] =
    "NCCL_NET_PLUGIN=ncclbpf\n"
    "NCCL_ALGO=Ring\n"
    "!NCCL_DEBUG=WARN\n";

SEC("tuner")
int with_net(struct ncclbpf_tuner_ctx *ctx)
{
	return 0;
}
