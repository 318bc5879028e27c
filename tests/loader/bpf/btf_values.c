/* Maps whose keys and values exercise the BTF-typed JSON of map contents
 * (ebpf_object_map__json, tests/loader/test_btf_json.c): nested structs, an anonymous union,
 * bitfields, enums, a char array holding a name, bools, signed fields, arrays, per-CPU values,
 * a map declared by sizes only, and global data sections. */
#include "ncclbpf.h"

enum phase { PHASE_IDLE = 0, PHASE_RUN = 1, PHASE_DONE = 7 };

struct span {
	__u64 start_ns;
	__u64 end_ns;
};

struct stats {
	char name[8];
	_Bool seen;
	__s32 delta;
	enum phase phase;
	struct span span;
	union {
		__u32 raw;
		__u16 half[2];
	};
	__u32 low : 3, high : 5;
	__u64 hist[3];
};

struct key2 {
	__u32 comm;
	__u16 coll;
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, struct key2);
	__type(value, struct stats);
} typed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} percpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__uint(key_size, 4);
	__uint(value_size, 12);
} untyped SEC(".maps");

__u64 counter = 5;
struct span last;

SEC("profiler")
int touch(struct ncclbpf_profiler_ctx *ctx)
{
	__u32 k = 0;
	struct key2 key = {.comm = 1, .coll = 4};
	struct stats *s = bpf_map_lookup_elem(&typed, &key);
	__s64 *p = bpf_map_lookup_elem(&percpu, &k);
	void *u = bpf_map_lookup_elem(&untyped, &k);
	if (s)
		s->delta -= 1;
	if (p)
		*p += 1;
	if (u)
		*(__u32 *)u += 1;
	counter++;
	last.end_ns = ctx->end_ns;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
