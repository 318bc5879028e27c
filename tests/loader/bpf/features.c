/* Loader feature object: several programs per section, static subprograms in .text called from
 * several programs (one calls another), BTF maps of every kind, .rodata/.data/.bss and a
 * net program. test_loader.c checks what the loader makes of it. */
#include "ncclbpf.h"

struct big_key {
	__u64 a;
	__u32 b[2]; /* no padding: every byte of a key must be written (verifier) */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 128);
	__type(key, struct big_key);
	__type(value, __u64);
} hmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__uint(key_size, 4);
	__uint(value_size, 24);
} pcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32);
	__uint(map_flags, 0);
	__type(key, __u32);
	__type(value, __u32);
} lru SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

const volatile __u32 limit = 1234;
__u64 counter = 77;
__u32 zeroed;

static __attribute__((noinline)) __u64 twice(__u64 x)
{
	return x * 2 + limit;
}

static __attribute__((noinline)) __u64 thrice_plus(__u64 x)
{
	counter += 1;
	return twice(x) + x;
}

SEC("tuner")
int first(struct ncclbpf_tuner_ctx *ctx)
{
	ctx->n_channels = (__s32)twice(ctx->n_ranks);
	return 0;
}

SEC("tuner")
int second(struct ncclbpf_tuner_ctx *ctx)
{
	ctx->n_channels = (__s32)thrice_plus(ctx->n_ranks);
	zeroed = 1;
	return 0;
}

SEC("profiler")
int prof(struct ncclbpf_profiler_ctx *ctx)
{
	struct big_key k = {.a = ctx->comm_id};
	__u64 one = 1;
	__u32 idx = 0, lk = ctx->rank;

	bpf_map_update_elem(&hmap, &k, &one, BPF_ANY);
	bpf_map_lookup_elem(&pcpu, &idx);
	bpf_map_update_elem(&lru, &lk, &lk, BPF_ANY);
	bpf_ringbuf_output(&events, &one, sizeof(one), 0);
	return 0;
}

SEC("net/connect")
int on_connect(struct ncclbpf_net_ctx *ctx)
{
	return ctx->peer == 3 ? NCCLBPF_NET_DENY : NCCLBPF_NET_ALLOW;
}
