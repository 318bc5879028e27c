/* Only SEC("net/complete"): one log line per completion with its time and duration (test_net
 * probe_complete). No isend/irecv program, so the posting time a duration needs must still be
 * taken because a completion program is attached. */
#include "ncclbpf.h"

SEC("net/complete")
int on_complete(struct ncclbpf_net_ctx *ctx)
{
	static const char f[] = "probe complete op=%u bytes=%llu timed=%u";
	__u32 timed = ctx->time_ns > 0 && ctx->duration_ns > 0 && ctx->duration_ns < ctx->time_ns;
	bpf_trace_printk(f, sizeof(f), ctx->op, ctx->bytes, timed);
	return 0;
}
