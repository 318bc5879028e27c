/* UNSAFE: calls a helper the engine does not provide (Linux's bpf_get_current_pid_tgid, id 14;
 * process identity is meaningless and rank-local inside NCCL). Expected: rejected (unknown
 * helper). */
#include "ncclbpf.h"

static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} last_pid SEC(".maps");

SEC("profiler")
int unknown_helper(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 key = 0;
	__u64 pid = bpf_get_current_pid_tgid(); /* BUG: not an engine helper */

	bpf_map_update_elem(&last_pid, &key, &pid, BPF_ANY);
	return 0;
}
