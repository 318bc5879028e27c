/* The comparison tuner's policies: the decision logic of each shipped eBPF policy written as
 * native C and compiled by the host compiler, plus a few deliberately bad policies the plugin
 * tests use. Linked only into libncclbpf-native-tuner.so (built from the plugin's own adapter
 * and runtime sources), never into libnccl-ncclbpf.so; they register themselves at load and are
 * selected with NCCLBPF_POLICY=native:NAME. Each twin follows its policy line by line:
 *   noop        policies/noop.c
 *   size_aware  policies/size_aware.c
 *   table_tuner policies/table_tuner.c
 *   two_lookups benchmarks/policies/two_lookups.c */
#include <stddef.h>
#include <stdint.h>

#include "ncclbpf.h"
#include "native/table_tuner_rows.h"
#include "ncclbpf/runtime.h"

#define CTX(c) ((struct ncclbpf_tuner_ctx *)(uintptr_t)(c))

static uint64_t noop(uint64_t c, uint64_t arg)
{
	(void)c;
	(void)arg;
	return 0;
}

/* --- size_aware ---------------------------------------------------------------------------- */
static inline int try_cell(struct ncclbpf_tuner_ctx *ctx, int algo, int proto)
{
	if ((uint32_t)algo >= ctx->num_algo || (uint32_t)proto >= ctx->num_proto)
		return 0;
	if (ctx->cost_ns[algo][proto] == NCCLBPF_COST_NA)
		return 0;
	ctx->algorithm = algo;
	ctx->protocol = proto;
	return 1;
}

static uint64_t size_aware(uint64_t c, uint64_t arg)
{
	struct ncclbpf_tuner_ctx *ctx = CTX(c);
	(void)arg;
	uint64_t bytes = ctx->n_bytes;
	if (bytes <= (64ull << 10)) {
		if (try_cell(ctx, NCCLBPF_ALGO_TREE, NCCLBPF_PROTO_LL) ||
		    try_cell(ctx, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_LL))
			return 0;
	} else if (bytes <= (4ull << 20)) {
		if (try_cell(ctx, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_LL128) ||
		    try_cell(ctx, NCCLBPF_ALGO_TREE, NCCLBPF_PROTO_LL128) ||
		    try_cell(ctx, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE))
			return 0;
	} else {
		if (try_cell(ctx, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE) ||
		    try_cell(ctx, NCCLBPF_ALGO_TREE, NCCLBPF_PROTO_SIMPLE))
			return 0;
	}
	return 0;
}

/* --- table_tuner --------------------------------------------------------------------------- */
#define ROWS TABLE_TUNER_ROWS
/* Not const: like the policy's .data map, an operator could change it at run time. */
static struct table_tuner_row table[ROWS] = TABLE_TUNER_ROWS_INIT;

static __attribute__((noinline)) int find_row(uint64_t bytes)
{
	for (int i = 0; i < ROWS; i++)
		if (bytes <= table[i].max_bytes)
			return i;
	return ROWS;
}

static uint64_t table_tuner(uint64_t c, uint64_t arg)
{
	struct ncclbpf_tuner_ctx *ctx = CTX(c);
	(void)arg;
	int i = find_row(ctx->n_bytes);
	if (i < 0 || i >= ROWS)
		return 0;
	ctx->algorithm = table[i].algorithm;
	ctx->protocol = table[i].protocol;
	ctx->n_channels = table[i].n_channels;
	return 0;
}

/* --- two_lookups --------------------------------------------------------------------------- */
struct choice {
	int32_t algorithm_plus1, protocol_plus1, n_channels;
	uint32_t _pad;
};
static struct choice by_coll[8], by_size[64];

static uint64_t two_lookups(uint64_t c, uint64_t arg)
{
	struct ncclbpf_tuner_ctx *ctx = CTX(c);
	(void)arg;
	uint32_t coll = ctx->coll_type & 7;
	uint32_t bucket = (uint32_t)(ctx->n_bytes >> 10) & 63;
	struct choice *a = &by_coll[coll], *s = &by_size[bucket];
	ctx->algorithm = a->algorithm_plus1 - 1;
	ctx->protocol = s->protocol_plus1 - 1;
	if (s->n_channels > 0 && s->n_channels <= 64)
		ctx->n_channels = s->n_channels;
	return 0;
}

/* --- Test-only policies -------------------------------------------------------------------- */

/* pick: always ring/SIMPLE on 8 channels. */
static uint64_t pick(uint64_t c, uint64_t arg)
{
	(void)arg;
	CTX(c)->algorithm = NCCLBPF_ALGO_RING;
	CTX(c)->protocol = NCCLBPF_PROTO_SIMPLE;
	CTX(c)->n_channels = 8;
	return 0;
}

/* Outputs the adapter must refuse (the verifier keeps real policies within the field types, not
 * within NCCL's rules). */
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

/* What each twin reads of its context, as the verifier records it for the eBPF policy, so that
 * the adapter prepares the same for both (the benchmark's second column compares the programs,
 * not what the adapter fills). */
#define W(f)	       (1ull << (offsetof(struct ncclbpf_tuner_ctx, f) / 8))
#define CELL(a, p)     (W(cost_ns) << ((a)*NCCLBPF_NUM_PROTOS + (p)))
#define OUTPUTS	       (W(algorithm) | W(n_channels))
#define READS_ONLY(ws) (~((ws) | OUTPUTS))
#define SIZE_AWARE_READS                                                                           \
	(W(n_bytes) | W(num_algo) | CELL(0, 0) | CELL(0, 1) | CELL(0, 2) | CELL(1, 0) |            \
	 CELL(1, 1) | CELL(1, 2))

__attribute__((constructor)) static void register_natives(void)
{
	static const struct ncclbpf_native_policy list[] = {
	    {.sz = sizeof(list[0]), .name = "noop", .tuner = noop, .tuner_skip_words = ~0ull},
	    {.sz = sizeof(list[0]),
	     .name = "size_aware",
	     .tuner = size_aware,
	     .tuner_skip_words = READS_ONLY(SIZE_AWARE_READS)},
	    {.sz = sizeof(list[0]),
	     .name = "table_tuner",
	     .tuner = table_tuner,
	     .tuner_skip_words = READS_ONLY(W(n_bytes))},
	    {.sz = sizeof(list[0]),
	     .name = "two_lookups",
	     .tuner = two_lookups,
	     .tuner_skip_words = READS_ONLY(W(n_bytes) | W(coll_type))},
	    {.sz = sizeof(list[0]), .name = "pick", .tuner = pick, .chunk = chunk_double},
	    {.sz = sizeof(list[0]), .name = "bad_range", .tuner = bad_range, .chunk = chunk_bad},
	    {.sz = sizeof(list[0]), .name = "bad_cell", .tuner = bad_cell},
	};
	for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++)
		ncclbpf_rt_register_native(&list[i]);
}
