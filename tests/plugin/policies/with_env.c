/* A tuner bundle that ships NCCL settings in its ".ncclbpf.env" section: two good ones (one
 * enforced) and two that must be refused (an unknown name, an out-of-range value). */
#include "ncclbpf.h"

/* One setting per line, as a user writes them. */
/* clang-format off */
__attribute__((section(".ncclbpf.env"), used)) static const char nccl_settings[] =
	"# shipped with the policy\n"
	"NCCL_PROTO=Simple\n"
	"!NCCL_MAX_NCHANNELS=8\n"
	"NCCL_NOT_A_PARAM=1\n"
	"NCCL_MIN_NCHANNELS=99\n";
/* clang-format on */

SEC("tuner")
int with_env(struct ncclbpf_tuner_ctx *ctx)
{
	return 0;
}
