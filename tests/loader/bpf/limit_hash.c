/* Resource limits: a hash map allocates per element, but is charged for what it may grow to:
 * 2^24 entries of 1 MiB values is 16 TiB against the bundle's map memory, refused at load. */
#include "ncclbpf.h"

struct big {
	__u8 bytes[1 << 20];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 24);
	__type(key, __u64);
	__type(value, struct big);
} grows SEC(".maps");

SEC("profiler")
int record(struct ncclbpf_profiler_ctx *ctx)
{
	__u64 key = ctx->duration_ns;
	struct big *v = bpf_map_lookup_elem(&grows, &key);

	if (v)
		v->bytes[0]++;
	return 0;
}
