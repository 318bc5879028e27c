/* Table-driven tuner: a size -> (algorithm, protocol, channels) table in global data. The table
 * is the object's .data map ("table_tuner.data" contents come from the object), so an operator
 * can retune a running job by updating that map (through a rank-consistent reload) without
 * recompiling. Rows are sorted by max_bytes; the first row that fits wins; sizes beyond the last
 * row leave the decision to NCCL. A row value of -1 / 0 keeps NCCL's choice for that output. */
#include "ncclbpf.h"

#define ROWS 6

struct row {
	__u64 max_bytes;
	__s32 algorithm;
	__s32 protocol;
	__s32 n_channels;
	__u32 _pad;
};

struct row table[ROWS] = {
    {4096, NCCLBPF_ALGO_TREE, NCCLBPF_PROTO_LL, 2},
    {65536, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_LL, 4},
    {1 << 20, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_LL128, 8},
    {16 << 20, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE, 16},
    {256 << 20, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE, NCCLBPF_CHANNELS_DEFAULT},
    {0, 0, 0, 0}, /* spare row (max_bytes 0 never matches a non-empty message) */
};

/* Index of the first row whose max_bytes covers bytes, or ROWS. A real subprogram (not
 * inlined): the loader links it from .text into the program. */
static __attribute__((noinline)) int find_row(__u64 bytes)
{
	for (int i = 0; i < ROWS; i++)
		if (bytes <= table[i].max_bytes)
			return i;
	return ROWS;
}

SEC("tuner")
int table_tuner(struct ncclbpf_tuner_ctx *ctx)
{
	int i = find_row(ctx->n_bytes);

	if (i < 0 || i >= ROWS)
		return 0;
	ctx->algorithm = table[i].algorithm;
	ctx->protocol = table[i].protocol;
	ctx->n_channels = table[i].n_channels;
	return 0;
}
