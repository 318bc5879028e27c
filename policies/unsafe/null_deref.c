/* UNSAFE: dereferences a map lookup result without checking it for NULL. The key may be
 * absent, so the program would fault. Expected: rejected (map_value_or_null dereference). */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("profiler")
int null_deref(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 key = ctx->coll_type;
	__u64 *v = bpf_map_lookup_elem(&counts, &key);

	*v += 1; /* BUG: v may be NULL */
	return 0;
}
