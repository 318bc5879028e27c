/* The comparison tuner's policies: the same decision logic as the shipped eBPF policies, as
 * native C compiled with the host compiler, plus a few deliberately bad policies the plugin
 * tests use. Linked only into libncclbpf-native-tuner.so (a test/benchmark library built from
 * the plugin's own sources), never into libnccl-ncclbpf.so; they register themselves at load
 * and are selected with NCCLBPF_POLICY=native:NAME. */
#include <stdint.h>

#include "ncclbpf.h"
#include "ncclbpf/runtime.h"

#define CTX(c) ((struct ncclbpf_tuner_ctx *)(uintptr_t)(c))

/* noop: leaves every decision to NCCL. */
static uint64_t noop(uint64_t c, uint64_t arg)
{
	(void)c;
	(void)arg;
	return 0;
}

/* size: message-size-aware choice (mirrors the size-based eBPF policy): small messages on
 * ring/LL, medium on ring/LL128, large AllReduce on NVLS when NCCL offers it, else ring/SIMPLE.
 * Cells NCCL cannot use are skipped by reading the cost table. */
static uint64_t size_based(uint64_t c, uint64_t arg)
{
	struct ncclbpf_tuner_ctx *x = CTX(c);
	(void)arg;
	if (x->n_bytes < (64u << 10)) {
		x->algorithm = NCCLBPF_ALGO_RING;
		x->protocol = NCCLBPF_PROTO_LL;
	} else if (x->n_bytes < (4u << 20)) {
		x->algorithm = NCCLBPF_ALGO_RING;
		x->protocol = NCCLBPF_PROTO_LL128;
	} else if (x->coll_type == NCCLBPF_COLL_ALLREDUCE &&
		   x->cost_ns[NCCLBPF_ALGO_NVLS][NCCLBPF_PROTO_SIMPLE] != NCCLBPF_COST_NA) {
		x->algorithm = NCCLBPF_ALGO_NVLS;
		x->protocol = NCCLBPF_PROTO_SIMPLE;
	} else {
		x->algorithm = NCCLBPF_ALGO_RING;
		x->protocol = NCCLBPF_PROTO_SIMPLE;
	}
	return 0;
}

/* pick: always ring/SIMPLE on 8 channels. */
static uint64_t pick(uint64_t c, uint64_t arg)
{
	(void)arg;
	CTX(c)->algorithm = NCCLBPF_ALGO_RING;
	CTX(c)->protocol = NCCLBPF_PROTO_SIMPLE;
	CTX(c)->n_channels = 8;
	return 0;
}

/* Bad outputs the adapter must refuse (the verifier keeps real policies within the field
 * types, not within NCCL's rules). */
static uint64_t bad_range(uint64_t c, uint64_t arg)
{
	(void)arg;
	CTX(c)->algorithm = 9;
	CTX(c)->protocol = 7;
	CTX(c)->n_channels = 1000;
	return 0;
}

static uint64_t bad_cell(uint64_t c, uint64_t arg)
{
	(void)arg;
	CTX(c)->algorithm = NCCLBPF_ALGO_COLLNET_DIRECT; /* -1.0 in every table without CollNet */
	CTX(c)->protocol = NCCLBPF_PROTO_SIMPLE;
	CTX(c)->n_channels = 4;
	return 0;
}

/* chunk: doubles NCCL's chunk size; chunk_bad asks for less than one protocol grain. */
static uint64_t chunk_double(uint64_t c, uint64_t arg)
{
	struct ncclbpf_chunk_ctx *x = (struct ncclbpf_chunk_ctx *)(uintptr_t)c;
	(void)arg;
	x->chunk_size = x->nccl_chunk * 2;
	return 0;
}

static uint64_t chunk_bad(uint64_t c, uint64_t arg)
{
	struct ncclbpf_chunk_ctx *x = (struct ncclbpf_chunk_ctx *)(uintptr_t)c;
	(void)arg;
	x->chunk_size = 8;
	return 0;
}

__attribute__((constructor)) static void register_natives(void)
{
	static const struct ncclbpf_native_policy list[] = {
	    {.sz = sizeof(list[0]), .name = "noop", .tuner = noop},
	    {.sz = sizeof(list[0]), .name = "size", .tuner = size_based},
	    {.sz = sizeof(list[0]), .name = "pick", .tuner = pick, .chunk = chunk_double},
	    {.sz = sizeof(list[0]), .name = "bad_range", .tuner = bad_range, .chunk = chunk_bad},
	    {.sz = sizeof(list[0]), .name = "bad_cell", .tuner = bad_cell},
	};
	for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++)
		ncclbpf_rt_register_native(&list[i]);
}
