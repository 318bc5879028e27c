/* Protocol exploration per communicator: the first EXPLORE_CALLS calls of each (collective, size
 * bucket) of a communicator try NCCL's protocols in turn (LL, LL128, SIMPLE, LL, ...), then NCCL
 * chooses again. A trace (NCCLBPF_TRACE) records what each try cost; `ncclbpf tune` or an
 * operator turns that into a table.
 *
 * The count lives in a per-communicator map (__uint(map_flags, NCCLBPF_F_PER_COMM)): NCCL calls
 * a communicator's tuner in the same order on every rank, so every rank counts the same and tries
 * the same protocol at the same call, even where a rank serves several communicators (tensor-
 * and data-parallel groups) whose calls interleave differently on each rank. In a plain ARRAY
 * the count would mix every communicator of the process, and the verifier rejects the policy
 * (the tests build it with -DEXPLORE_MAP_FLAGS=0 to show that). */
#include "ncclbpf.h"

#ifndef EXPLORE_MAP_FLAGS
#define EXPLORE_MAP_FLAGS NCCLBPF_F_PER_COMM
#endif
#define EXPLORE_CALLS 6 /* two rounds of the three protocols */
#define MAX_BUCKETS   64

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 5 * MAX_BUCKETS); /* coll_type * 64 + size bucket */
	__uint(map_flags, EXPLORE_MAP_FLAGS);
	__type(key, __u32);
	__type(value, __u32);
} explore_calls SEC(".maps");

SEC("tuner")
int explore(struct ncclbpf_tuner_ctx *ctx)
{
	__u32 key, *n, proto;

	if (ctx->coll_type > NCCLBPF_COLL_ALLREDUCE)
		return 0;
	key = ctx->coll_type * MAX_BUCKETS + ncclbpf_log2_u64(ctx->n_bytes);
	n = bpf_map_lookup_elem(&explore_calls, &key);
	if (!n || *n >= EXPLORE_CALLS)
		return 0;
	proto = *n % NCCLBPF_NUM_PROTOS;
	*n += 1;
	if (proto < ctx->num_proto)
		ctx->protocol = (__s32)proto;
	return 0;
}
