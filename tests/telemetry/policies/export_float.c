/* Refused at open: an exported value member that is not an integer. */
#include "ncclbpf.h"

struct val {
	__u64 count;
	double mean;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct val);
	NCCLBPF_EXPORT_GAUGES;
} stats SEC(".maps");

SEC("profiler/coll_end")
int p(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 k = 0;
	struct val *v = bpf_map_lookup_elem(&stats, &k);
	if (v)
		v->count++;
	return 0;
}
