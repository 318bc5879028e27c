/* Cost table translation and output application (tuner_table.h). */
#include "tuner_table.h"

#include <float.h>

void tuner_fill_costs(struct ncclbpf_tuner_ctx *ctx, const float *table, int num_algo,
		      int num_proto)
{
	for (int a = 0; a < NCCLBPF_NUM_ALGOS; a++)
		for (int p = 0; p < NCCLBPF_NUM_PROTOS; p++) {
			uint64_t ns = NCCLBPF_COST_NA;
			if (a < num_algo && p < num_proto) {
				float v = table[a * num_proto + p];
				/* µs -> ns in double: 3.6e9 µs is 3.6e12 ns, far inside u64. */
				if (tuner_cell_valid(v))
					ns = (uint64_t)((double)v * 1000.0 + 0.5);
			}
			ctx->cost_ns[a][p] = ns;
		}
}

int tuner_table_winner(const float *table, int num_algo, int num_proto, int *algo, int *proto)
{
	float best = 0;
	int found = 0;
	for (int a = 0; a < num_algo; a++)
		for (int p = 0; p < num_proto; p++) {
			float v = table[a * num_proto + p];
			if (tuner_cell_valid(v) && (!found || v < best)) {
				best = v;
				*algo = a;
				*proto = p;
				found = 1;
			}
		}
	return found ? 0 : -1;
}

/* Cheapest valid cell along one dimension: fixed algorithm (proto free) or fixed protocol. */
static int cheapest(const float *t, int na, int np, int algo, int proto, int *oa, int *op)
{
	int found = 0;
	float best = 0;
	for (int a = 0; a < na; a++) {
		if (algo >= 0 && a != algo)
			continue;
		for (int p = 0; p < np; p++) {
			if (proto >= 0 && p != proto)
				continue;
			float v = t[a * np + p];
			if (tuner_cell_valid(v) && (!found || v < best)) {
				best = v;
				*oa = a;
				*op = p;
				found = 1;
			}
		}
	}
	return found ? 0 : -1;
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
	/* Validate everything before touching anything. */
	if (algo < NCCLBPF_ALGO_DEFAULT || algo >= num_algo)
		return TUNER_APPLY_INVALID;
	if (proto < NCCLBPF_PROTO_DEFAULT || proto >= num_proto)
		return TUNER_APPLY_INVALID;
	if (ch < 0 || ch > 64)
		return TUNER_APPLY_INVALID;
	int ca = -1, cp = -1;
	int choose = algo != NCCLBPF_ALGO_DEFAULT || proto != NCCLBPF_PROTO_DEFAULT;
	if (choose && cheapest(table, num_algo, num_proto, algo, proto, &ca, &cp))
		return TUNER_APPLY_INVALID; /* asked for something NCCL cannot run */
	if (!choose && ch == NCCLBPF_CHANNELS_DEFAULT)
		return TUNER_APPLY_DEFAULT;

	if (choose) {
		for (int i = 0; i < num_algo * num_proto; i++)
			if (table[i] == 0.0f && tuner_cell_valid(table[i]))
				table[i] = FLT_MIN;
		table[ca * num_proto + cp] = 0.0f;
	}
	if (ch != NCCLBPF_CHANNELS_DEFAULT && n_channels) {
		int wa, wp;
		if (!choose && tuner_table_winner(table, num_algo, num_proto, &wa, &wp))
			return TUNER_APPLY_DEFAULT; /* empty table: nothing will run anyway */
		if (choose)
			wa = ca;
		if (collnet_like(wa, ctx->n_nodes))
			info->channels_skipped = 1;
		else
			*n_channels = ch;
	}
	return (choose || !info->channels_skipped) ? TUNER_APPLY_CHANGED : TUNER_APPLY_DEFAULT;
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
