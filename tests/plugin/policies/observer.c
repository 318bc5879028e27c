/* Test policy that writes no output: it records what it sees (the call count, n_bytes and the
 * three outputs as the adapter filled them) in a map. It calls nothing and reads only words the
 * register-keeping path fills, so the adapter runs it there and, the verifier having found no
 * store to an output, never looks at the outputs afterwards (tests/plugin/test_tuner_paths.c). */
#include "ncclbpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 5);
	__type(key, __u32);
	__type(value, __s64);
} seen SEC(".maps");

static void put(__u32 k, __s64 v)
{
	__s64 *p = bpf_map_lookup_elem(&seen, &k);
	if (p)
		*p = v;
}

SEC("tuner")
int observer(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 k = 0;
	__s64 *n = bpf_map_lookup_elem(&seen, &k);
	if (n)
		*n += 1;
	put(1, (__s64)ctx->n_bytes);
	put(2, ctx->algorithm);
	put(3, ctx->protocol);
	put(4, ctx->n_channels);
	return 0;
}
