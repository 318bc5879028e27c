/* UNSAFE: stores a pointer (the map value's own address) into the map, leaking a host address
 * to anyone who can read the map. Expected: rejected (pointer leak into map). */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} leak SEC(".maps");

SEC("profiler")
int ptr_to_map(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&leak, &key);

	if (v)
		*v = (__u64)v; /* BUG: pointer stored to a map */
	return 0;
}
