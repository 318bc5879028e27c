/* Cost table translation and output application (tuner_table.h). */
#include "tuner_table.h"

#include <float.h>

void tuner_fill_cells(struct ncclbpf_tuner_ctx *ctx, const float *table, int num_algo,
		      int num_proto, uint32_t mask)
{
	__u64 *out = &ctx->cost_ns[0][0];
	int full =
	    num_algo == TUNER_MAX_ALGO && num_proto == TUNER_MAX_PROTO; /* cell i: table[i] */
	for (mask &= TUNER_ALL_CELLS; full && mask; mask &= mask - 1) {
		int i = __builtin_ctz(mask);
		out[i] = tuner_cell_ns(table[i]);
	}
	for (; mask; mask &= mask - 1) {
		int i = __builtin_ctz(mask), a = i / NCCLBPF_NUM_PROTOS, p = i % NCCLBPF_NUM_PROTOS;
		out[i] = a < num_algo && p < num_proto ? tuner_cell_ns(table[a * num_proto + p])
						       : NCCLBPF_COST_NA;
	}
}

void tuner_pad_cells(const float *table, int num_algo, int num_proto, float pad[TUNER_CELLS])
{
	for (int a = 0; a < TUNER_MAX_ALGO; a++)
		for (int p = 0; p < TUNER_MAX_PROTO; p++)
			pad[a * TUNER_MAX_PROTO + p] = a < num_algo && p < num_proto
							   ? table[a * num_proto + p]
							   : __builtin_nanf("");
}

static int collnet_like(int algo, uint32_t n_nodes)
{
	return algo == NCCLBPF_ALGO_COLLNET_DIRECT || algo == NCCLBPF_ALGO_COLLNET_CHAIN ||
	       (algo == NCCLBPF_ALGO_NVLS && n_nodes > 1);
}

enum tuner_apply_result tuner_apply(const struct ncclbpf_tuner_ctx *ctx, float *table, int num_algo,
				    int num_proto, int *n_channels, struct tuner_apply_info *info)
{
	int32_t algo = ctx->algorithm, proto = ctx->protocol, ch = ctx->n_channels;
	info->channels_skipped = 0;
	info->algo = info->proto = -1;
	info->channels = 0;
	/* Validate everything before touching anything. */
	if (algo < NCCLBPF_ALGO_DEFAULT || algo >= num_algo || proto < NCCLBPF_PROTO_DEFAULT ||
	    proto >= num_proto || ch < 0 || ch > 64)
		return TUNER_APPLY_INVALID;
	int choose = algo != NCCLBPF_ALGO_DEFAULT || proto != NCCLBPF_PROTO_DEFAULT;
	if (choose) {
		int ca = algo, cp = proto;
		if (algo < 0 || proto < 0) {
			if (nccl_cost_winner_along(table, num_algo, num_proto, algo, proto, &ca,
						   &cp))
				return TUNER_APPLY_INVALID; /* nothing NCCL can run along it */
		} else if (!nccl_cost_cell_valid(table[algo * num_proto + proto])) {
			return TUNER_APPLY_INVALID; /* asked for something NCCL cannot run */
		}
		tuner_force_cell(table, num_algo * num_proto, ca * num_proto + cp);
		info->algo = ca;
		info->proto = cp;
	}
	if (ch == NCCLBPF_CHANNELS_DEFAULT || !n_channels)
		return choose ? TUNER_APPLY_CHANGED : TUNER_APPLY_DEFAULT;
	if (!choose && nccl_cost_winner(table, num_algo, num_proto, &info->algo, &info->proto))
		return TUNER_APPLY_DEFAULT; /* empty table: nothing will run anyway */
	if (collnet_like(info->algo, ctx->n_nodes)) {
		info->channels_skipped = 1;
		return choose ? TUNER_APPLY_CHANGED : TUNER_APPLY_DEFAULT;
	}
	*n_channels = ch;
	info->channels = ch;
	return TUNER_APPLY_CHANGED;
}

uint64_t tuner_proto_grain(int proto)
{
	switch (proto) {
	case NCCLBPF_PROTO_LL:
		return 16;
	case NCCLBPF_PROTO_LL128:
		return 1920;
	case NCCLBPF_PROTO_SIMPLE:
		return 512;
	default:
		return 0;
	}
}
