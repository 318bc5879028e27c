/* Built without -g by the test: BTF-defined maps need BTF. */
#include "ncclbpf.h"
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} m SEC(".maps");
SEC("tuner")
int uses_m(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	bpf_map_lookup_elem(&m, &k);
	return 0;
}
