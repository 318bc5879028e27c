/* Tuned table: the template that `ncclbpf tune` fills from a benchmark sweep. The whole table is
 * one global (the object's .data map), so the tool can rewrite it in a compiled object without
 * clang, and an operator can retune a running job by updating that map through a rank-consistent
 * reload.
 *
 * A row applies to one collective and one communicator size (n_ranks 0: any size) up to
 * max_bytes; rows of one (collective, n_ranks) are sorted by max_bytes and the first row that
 * fits wins. Sizes no row covers leave the decision to NCCL, and so does a row whose outputs are
 * the DEFAULT values (the sweep found NCCL's own choice as good as any forced one there).
 *
 * The layout is shared with tools/ncclbpf/tune_table.h (TUNED_TABLE_* constants); the tool
 * checks the magic, row size and row count before writing. */
#include "ncclbpf.h"

#define TUNED_TABLE_MAGIC 0x31656c6261546e54ULL /* "TnTable1" little-endian */
#define TUNED_TABLE_ROWS  64

struct tuned_row {
	__u64 max_bytes;
	__u32 coll_type; /* NCCLBPF_COLL_* */
	__u32 n_ranks;	 /* 0: any communicator size */
	__s32 algorithm;
	__s32 protocol;
	__s32 n_channels;
	__u32 _pad;
};

struct tuned_table {
	__u64 magic;
	__u32 n_rows;	/* rows in use, from the start */
	__u32 row_size; /* sizeof(struct tuned_row), checked by the tool */
	struct tuned_row rows[TUNED_TABLE_ROWS];
};

/* Empty (n_rows 0): the template decides nothing until the tool fills it. */
struct tuned_table tuned = {
    .magic = TUNED_TABLE_MAGIC,
    .n_rows = 0,
    .row_size = sizeof(struct tuned_row),
};

SEC("tuner")
int tuned_table(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 bytes = ctx->n_bytes;
	__u32 coll = ctx->coll_type;
	__u32 ranks = ctx->n_ranks;
	__u32 n = tuned.n_rows;

	for (int i = 0; i < TUNED_TABLE_ROWS; i++) {
		if ((__u32)i >= n)
			break;
		const struct tuned_row *r = &tuned.rows[i];
		if (r->coll_type != coll || (r->n_ranks != 0 && r->n_ranks != ranks) ||
		    bytes > r->max_bytes)
			continue;
		ctx->algorithm = r->algorithm;
		ctx->protocol = r->protocol;
		ctx->n_channels = r->n_channels;
		return 0;
	}
	return 0;
}
