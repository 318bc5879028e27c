/* Test policy with one outcome per message size: 1 byte asks for an algorithm that does not
 * exist (invalid), 2 bytes for RING/SIMPLE (applied), 3 bytes for 8 channels (applied, counted
 * in the channel histogram too), anything else leaves NCCL's choice. Compiled as by_size.o;
 * with -DREAD_SEQ as by_size_seq.o, which also records each call's seq in a map: reading seq
 * takes it off the register-keeping path; with -DNO_CHANNELS as by_size_cells.o, where 3 bytes
 * leaves NCCL's choice too: a program that never touches n_channels takes the keeping entry
 * that neither fills nor checks it (tests/plugin/test_tuner_paths.c). */
#include "ncclbpf.h"

#ifdef READ_SEQ
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} last_seq SEC(".maps");
#endif

SEC("tuner")
int by_size(struct ncclbpf_tuner_ctx *ctx)
{
#ifdef READ_SEQ
	__u32 k = 0;
	__u64 *s = bpf_map_lookup_elem(&last_seq, &k);
	if (s)
		*s = ctx->seq;
#endif
	if (ctx->n_bytes == 1) {
		ctx->algorithm = 9;
	} else if (ctx->n_bytes == 2) {
		ctx->algorithm = NCCLBPF_ALGO_RING;
		ctx->protocol = NCCLBPF_PROTO_SIMPLE;
	}
#ifndef NO_CHANNELS
	else if (ctx->n_bytes == 3) {
		ctx->n_channels = 8;
	}
#endif
	return 0;
}
