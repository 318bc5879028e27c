/* NCCL cost table <-> tuner context: the translation and the output discipline of
 * docs/design.md §6.5, as pure functions (unit-tested without NCCL or a policy). */
#ifndef NCCLBPF_TUNER_TABLE_H
#define NCCLBPF_TUNER_TABLE_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ncclbpf.h"
#include "ncclbpf/nccl_platform.h"
#include "nccl_tuner.h"

/* Largest table the adapter accepts (NCCL 2.23+: 7 x 3). Anything else is left alone. */
#define TUNER_MAX_ALGO	NCCLBPF_NUM_ALGOS
#define TUNER_MAX_PROTO NCCLBPF_NUM_PROTOS
#define TUNER_CELLS	(TUNER_MAX_ALGO * TUNER_MAX_PROTO)
#define TUNER_ALL_CELLS ((1u << TUNER_CELLS) - 1)

/* Which cells NCCL could pick and which it will: nccl_cost_cell_valid, nccl_cost_winner
 * (nccl_tuner.h). */

/* The 8-byte words of the context (bit i: bytes [8i, 8i + 8), as the verifier records what a
 * program may read): the scalar inputs, then one word per cost cell, reg_buff, the outputs. */
#define TUNER_WORD(f)	   (offsetof(struct ncclbpf_tuner_ctx, f) / 8)
#define TUNER_CELL_WORD0   TUNER_WORD(cost_ns)
#define TUNER_SCALAR_WORDS (((1ull << TUNER_CELL_WORD0) - 1) | 1ull << TUNER_WORD(reg_buff))
_Static_assert(TUNER_WORD(reg_buff) == TUNER_CELL_WORD0 + TUNER_CELLS,
	       "reg_buff follows the cost cells");
_Static_assert(TUNER_WORD(algorithm) == TUNER_WORD(reg_buff) + 1, "the outputs follow reg_buff");

/* What a getCollInfo call tells a program besides the cost table. */
struct tuner_call {
	uint64_t comm_id, n_bytes, seq;
	uint32_t coll_type, n_ranks, n_nodes;
	int num_pipe_ops, num_algo, num_proto, reg_buff;
};

/* Fills the scalar inputs of ctx in words from k, each word by itself, and nothing else: a
 * program loads one field, where a fill of the whole block would be merged into wide stores it
 * could not forward from. */
static inline void tuner_fill_scalars(struct ncclbpf_tuner_ctx *x, uint64_t words,
				      const struct tuner_call *k)
{
	if (words & 1ull << TUNER_WORD(comm_id))
		x->comm_id = k->comm_id;
	if (words & 1ull << TUNER_WORD(n_bytes))
		x->n_bytes = k->n_bytes;
	if (words & 1ull << TUNER_WORD(seq))
		x->seq = k->seq;
	if (words & 1ull << TUNER_WORD(coll_type)) {
		x->coll_type = k->coll_type;
		x->n_ranks = k->n_ranks;
	}
	if (words & 1ull << TUNER_WORD(n_nodes)) {
		x->n_nodes = k->n_nodes;
		x->num_pipe_ops = k->num_pipe_ops < 0 ? 0 : (uint32_t)k->num_pipe_ops;
	}
	if (words & 1ull << TUNER_WORD(num_algo)) {
		x->num_algo = (uint32_t)k->num_algo;
		x->num_proto = (uint32_t)k->num_proto;
	}
	if (words & 1ull << TUNER_WORD(reg_buff)) {
		x->reg_buff = k->reg_buff != 0;
		x->_pad0 = 0;
	}
}

/* One cell: µs float -> integer ns, unusable -> NCCLBPF_COST_NA, as a converted read of cost_ns
 * does it (ncclbpf_tuner_cells; its bounds are NCCL's, nccl_cost_cell_valid). In double: 3.6e9 µs
 * is 3.6e12 ns, far inside int64, so the signed conversion is exact. */
static inline uint64_t tuner_cell_ns(float v)
{
	return ebpf_ctx_from_f32_value(ncclbpf_tuner_cells(), v);
}

/* Fills pad with a num_algo x num_proto table's cells at their 7 x 3 places, NaN (read as
 * NCCLBPF_COST_NA) in the others. */
void tuner_pad_cells(const float *table, int num_algo, int num_proto, float pad[TUNER_CELLS]);

/* NCCL's table as the 7 x 3 floats a tuner program reads its cells from (ncclbpf_rt_tuner_ctx.
 * cost_f32): the table itself when it has that shape (NCCL 2.23+), else pad filled from it, out
 * of line. The shape must already be checked. */
static inline const float *tuner_cells_f32(const float *table, int num_algo, int num_proto,
					   float pad[TUNER_CELLS])
{
	if (__builtin_expect(num_algo == TUNER_MAX_ALGO && num_proto == TUNER_MAX_PROTO, 1))
		return table;
	tuner_pad_cells(table, num_algo, num_proto, pad);
	return pad;
}

/* Fills ctx->cost_ns[a][p] for the cells in mask (bit a * NCCLBPF_NUM_PROTOS + p) from the
 * table: µs floats -> integer ns, unusable -> NCCLBPF_COST_NA, cells beyond num_algo x
 * num_proto -> NA. Cells outside mask are not written. The shape must already be checked. */
void tuner_fill_cells(struct ncclbpf_tuner_ctx *ctx, const float *table, int num_algo,
		      int num_proto, uint32_t mask);
/* Every cell. */
static inline void tuner_fill_costs(struct ncclbpf_tuner_ctx *ctx, const float *table, int num_algo,
				    int num_proto)
{
	tuner_fill_cells(ctx, table, num_algo, num_proto, TUNER_ALL_CELLS);
}

enum tuner_apply_result {
	TUNER_APPLY_DEFAULT = 0, /* nothing changed (every output at its default, or a channel
				    request that could not apply) */
	TUNER_APPLY_CHANGED,	 /* table and/or channels changed */
	TUNER_APPLY_INVALID,	 /* outputs rejected, nothing changed */
};

struct tuner_apply_info {
	int channels_skipped; /* a channel request was dropped because a CollNet algorithm won */
	/* CHANGED: the cell NCCL now picks, and the channel count set (0: left to NCCL). */
	int algo, proto, channels;
};

/* 1 when ctx's outputs are all at their defaults (nothing to apply). Each output is read by
 * itself: the program may have stored them one by one, and one 8-byte load over two 4-byte
 * stores cannot be forwarded from the store buffer (a stall of a dozen cycles, the largest
 * single cost of a decision before this was written so). Both defaults are -1, all ones. */
static inline int tuner_outputs_default(const struct ncclbpf_tuner_ctx *ctx)
{
	_Static_assert(NCCLBPF_ALGO_DEFAULT == -1 && NCCLBPF_PROTO_DEFAULT == -1, "all ones");
	const volatile int32_t *out = &ctx->algorithm;
	return (out[0] & out[1]) == -1 && ctx->n_channels == NCCLBPF_CHANNELS_DEFAULT;
}

/* Makes NCCL pick valid cell w of a table of n cells: lowered to 0.0; NCCL takes the first
 * minimum, so only a 0.0 before it could take the tie and is raised to the smallest positive
 * float (NaN compares unequal, -0.0 equal: both as NCCL sees them). NCCL's own tables hold no
 * 0.0, so the scan finds nothing on almost every call: for a choice among the first eight cells
 * of a table that has them, two SSE2 compares tell that none of the eight is 0.0 without a loop
 * whose length changes with the choice (the loop cost size_aware about 1.3 ns a call, the
 * compares about half that; telling only whether any of the eight is, rather than any before
 * the choice, another 0.2); the loop runs when one is. */
static inline void tuner_force_cell(float *table, int n, int w)
{
#ifdef __SSE2__
	if (__builtin_expect(n >= 8 && w <= 8, 1)) {
		const __m128 zero = _mm_setzero_ps();
		__m128 zeros = _mm_or_ps(_mm_cmpeq_ps(_mm_loadu_ps(table), zero),
					 _mm_cmpeq_ps(_mm_loadu_ps(table + 4), zero));
		if (__builtin_expect(!_mm_movemask_ps(zeros), 1)) {
			table[w] = 0.0f;
			return;
		}
	}
#else
	(void)n;
#endif
	for (int i = 0; i < w; i++)
		if (table[i] == 0.0f)
			table[i] = FLT_MIN;
	table[w] = 0.0f;
}

/* The bits of 3.6e9f, NCCL's bound (nccl_cost_cell_valid). A cost whose bits, read as an
 * unsigned integer, are below them is a cell NCCL could run: non-negative floats order as
 * their bits, and negative ones and NaN have larger bits. The one valid cell this misses is
 * -0.0 (bits 0x80000000), which a caller must leave to nccl_cost_cell_valid. */
#define TUNER_COST_LIMIT_BITS 0x4f5693a4u

/* 1 when cell v is valid by TUNER_COST_LIMIT_BITS (one integer compare instead of two float
 * ones); 0 when it is not, or is -0.0. */
static inline int tuner_cell_surely_valid(const float *v)
{
	uint32_t bits;
	memcpy(&bits, v, sizeof(bits));
	/* loaded into a register, then compared: GCC otherwise compares the indexed cell with the
	 * immediate in memory, an instruction Intel cores split in two (H100 host, with the
	 * announce word of epoch.h: -0.2..-0.4 ns on the deciding policies) */
	__asm__("" : "+r"(bits));
	return bits < TUNER_COST_LIMIT_BITS;
}

/* The common decision, tuner_apply's result for it without the call: a valid cell named by both
 * outputs and the channel count left to NCCL (ctx->n_channels at its default; taken as such
 * without a look when channels_unfilled, for a program that cannot touch it). Returns 1 when it
 * applied that (NCCL now picks (ctx->algorithm, ctx->protocol), *nChannels untouched), 0 when it
 * changed nothing and tuner_apply must judge the outputs (also for a chosen cell of -0.0:
 * tuner_cell_surely_valid). */
static inline int tuner_apply_cell(const struct ncclbpf_tuner_ctx *ctx, float *table, int num_algo,
				   int num_proto, const int channels_unfilled)
{
	uint32_t a = (uint32_t)ctx->algorithm, p = (uint32_t)ctx->protocol;
	if (a >= (uint32_t)num_algo || p >= (uint32_t)num_proto ||
	    (!channels_unfilled && ctx->n_channels != NCCLBPF_CHANNELS_DEFAULT))
		return 0;
	uint32_t w = a * (uint32_t)num_proto + p;
	if (!tuner_cell_surely_valid(&table[w]))
		return 0;
	tuner_force_cell(table, num_algo * num_proto, (int)w);
	return 1;
}

/* Applies ctx's outputs to NCCL's table and channel count:
 * - algorithm/protocol (either may be DEFAULT): the chosen valid cell is lowered to 0.0 (for a
 *   DEFAULT dimension, the cheapest valid cell along it); valid cells at 0.0 before it (NCCL
 *   takes the first minimum) are raised to the smallest positive float so the tie cannot go
 *   elsewhere. Unavailable cells are never written, no valid cell is ever removed, so the
 *   table can never become empty.
 * - n_channels: 1..64 replaces *nChannels unless the winner is CollNet-like (CollNetDirect,
 *   CollNetChain, or NVLS on more than one node), where NCCL would use it unchecked.
 * Any out-of-range output, or a choice with no valid cell, rejects the whole decision. */
enum tuner_apply_result tuner_apply(const struct ncclbpf_tuner_ctx *ctx, float *table, int num_algo,
				    int num_proto, int *n_channels, struct tuner_apply_info *info);

/* Protocol grain of NCCL's chunk sizes (LL 16 B, LL128 1920 B, SIMPLE 512 B); 0 if unknown. */
uint64_t tuner_proto_grain(int proto);

#endif
