/* Benchmark-only net program: the clock reads of net_counters.c without its map work. It reads
 * duration_ns, so the plugin reads the clock at every post and completion (four reads per
 * message over both sides), and does nothing else with it. Against net_count_only.o (the map
 * work without clocks) it splits net_counters.o's hook cost into its two parts. */
#include "ncclbpf.h"

SEC("net/complete")
int net_time_only(struct ncclbpf_net_ctx *ctx)
{
	/* A use the compiler cannot drop; never true for a real duration. */
	return ctx->duration_ns == ~0ull;
}
