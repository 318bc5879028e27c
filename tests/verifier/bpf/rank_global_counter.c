/* The counter in a global variable (.bss) instead of a map: the same problem. */
/* EXPECT-REJECT: `n_channels` depends on a rank-local value (rank-local map `.bss` */
/* EXPECT-REJECT: `.bss` is written by tuner program `every_fourth` at line @seen = n + 1;@ */
/* EXPECT-REJECT: keep decision state in a per-communicator map (__uint(map_flags, */
/* EXPECT-REJECT: NCCLBPF_F_PER_COMM)) or decide from ctx->seq, and make read-only settings */
/* EXPECT-REJECT: make read-only settings const (.rodata) */
/* EXPECT-CLASS: .bss rank-local */
#include "ncclbpf.h"

__u64 seen;

SEC("tuner")
int every_fourth(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 n = seen;

	seen = n + 1;
	ctx->n_channels = (n % 4 == 0) ? 2 : 4;
	return 0;
}
