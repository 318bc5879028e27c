/* The SDK header on the host (gcc, -Wall -Wextra -Werror -pedantic): it must compile without the
 * BPF-only parts, and its layouts and constants are the ABI policies are compiled against. */
#include <stddef.h>

#include "check.h"
#include "ncclbpf.h"

int main(void)
{
	CHECK_EQ_U64(sizeof(struct ncclbpf_tuner_ctx), 240);
	CHECK_EQ_U64(offsetof(struct ncclbpf_tuner_ctx, cost_ns[1][2]), 48 + (1 * 3 + 2) * 8);
	CHECK_EQ_U64(offsetof(struct ncclbpf_tuner_ctx, n_channels), 232);
	CHECK_EQ_U64(sizeof(struct ncclbpf_chunk_ctx), 56);
	CHECK_EQ_U64(offsetof(struct ncclbpf_chunk_ctx, chunk_size), 48);
	CHECK_EQ_U64(sizeof(struct ncclbpf_profiler_ctx), 88);
	CHECK_EQ_U64(offsetof(struct ncclbpf_profiler_ctx, event), 48);
	CHECK_EQ_U64(sizeof(struct ncclbpf_net_ctx), 72);
	CHECK_EQ_U64(offsetof(struct ncclbpf_net_ctx, peer_addr), 48);
	/* NCCL's ids and the "leave it to NCCL" values. */
	CHECK_EQ_U64(NCCLBPF_COLL_ALLREDUCE, 4);
	CHECK_EQ_U64(NCCLBPF_ALGO_PAT, 6);
	CHECK_EQ_U64(NCCLBPF_PROTO_SIMPLE, 2);
	CHECK(NCCLBPF_ALGO_DEFAULT < 0 && NCCLBPF_PROTO_DEFAULT < 0);
	CHECK_EQ_U64(NCCLBPF_CHANNELS_DEFAULT, 0);
	CHECK_EQ_U64(NCCLBPF_COST_NA, UINT64_MAX);
	/* Every context is a multiple of 8 bytes: no tail padding the verifier could miss. */
	CHECK(sizeof(struct ncclbpf_tuner_ctx) % 8 == 0 && sizeof(struct ncclbpf_net_ctx) % 8 == 0);
	return check_summary("sdk_host");
}
