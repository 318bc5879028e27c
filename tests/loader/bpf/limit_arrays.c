/* Resource limits: a small object declaring two 4 GiB arrays (1 MiB values x 4096). A bundle's
 * maps may hold 1 GiB by default (NCCLBPF_MAX_MAP_BYTES), so loading and `ncclbpf verify` refuse
 * it from the definitions, with the total and the limit, before creating any map. */
#include "ncclbpf.h"

struct big {
	__u8 bytes[1 << 20];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct big);
} big0 SEC(".maps"), big1 SEC(".maps");

SEC("tuner")
int touch(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 key = 0;
	struct big *a = bpf_map_lookup_elem(&big0, &key);
	struct big *b = bpf_map_lookup_elem(&big1, &key);

	if (a && b)
		ctx->n_channels = a->bytes[0] + b->bytes[0];
	return 0;
}
