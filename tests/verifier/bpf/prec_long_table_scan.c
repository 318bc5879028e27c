/* A first-fit scan of a 256-row table in a global (tuned_table.c with more rows): every iteration
 * has side branches that meet where the next iteration starts, and each must be pruned against
 * its own iteration's state there. With at most 64 states kept per instruction, iterations past
 * the 64th lost that pruning and the analysis ran into the 1,000,000-instruction budget; with
 * them all kept, the scan of every stored state at each visit was quadratic in the trip count.
 * About 27 processed instructions per iteration. */
/* EXPECT-ACCEPT */
/* EXPECT-PROCESSED-MAX: 8000 */
#include "ncclbpf.h"

#define ROWS 256

struct row {
	__u64 max_bytes;
	__u32 coll_type;
	__u32 n_ranks;
	__s32 algorithm;
	__s32 protocol;
	__s32 n_channels;
	__u32 _pad;
};

struct {
	__u32 n_rows;
	struct row rows[ROWS];
} table = {.n_rows = 0};

SEC("tuner")
int long_table(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 bytes = ctx->n_bytes;
	__u32 coll = ctx->coll_type, ranks = ctx->n_ranks, n = table.n_rows;

	for (int i = 0; i < ROWS; i++) {
		if ((__u32)i >= n)
			break;
		const struct row *r = &table.rows[i];
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
