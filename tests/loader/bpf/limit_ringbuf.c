/* Resource limits: a 1 GiB ring buffer, over the 256 MiB one ring buffer may have; refused
 * before any memory is allocated. */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 30);
} events SEC(".maps");

SEC("profiler")
int record(struct ncclbpf_profiler_ctx *ctx)
{
	__u64 d = ctx->duration_ns;

	bpf_ringbuf_output(&events, &d, sizeof(d), 0);
	return 0;
}
