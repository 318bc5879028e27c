/* A map attribute the loader does not know (pinning by path would need a file system). */
#include "ncclbpf.h"
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(frobnicate, 1);
} odd SEC(".maps");
SEC("tuner")
int uses_odd(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	bpf_map_lookup_elem(&odd, &k);
	return 0;
}
