/* UNSAFE: indexes a map value with a bound larger than the value. slots has 4 entries but the
 * index may reach 7. Expected: rejected (map value access out of bounds). */
#include "ncclbpf.h"

struct slots {
	__u64 slot[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slots);
} hist SEC(".maps");

SEC("profiler")
int map_oob(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 key = 0;
	struct slots *s = bpf_map_lookup_elem(&hist, &key);

	if (!s)
		return 0;
	s->slot[ctx->coll_type & 7] += 1; /* BUG: index up to 7, value has 4 slots */
	return 0;
}
