/* The tuner's statistics and its context, through the exported getCollInfo with the adapter
 * and runtime linked in: every outcome counted once (calls, no policy, malformed, default,
 * applied with its cell and channels, invalid, CollNet-skipped channels), derived counts
 * consistent with what was called, and a program sees exact values in every context word it
 * reads however little else the adapter fills (ncclbpf_rt_hook.ctx_words). */
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "check.h"
#include "harness.h"
#include "ncclbpf/runtime.h"
#include "tuner_table.h"

extern const ncclTuner_v5_t ncclTunerPlugin_v5;

#define W(f)	   (1ull << (offsetof(struct ncclbpf_tuner_ctx, f) / 8))
#define CELL(a, p) (W(cost_ns) << ((a)*NCCLBPF_NUM_PROTOS + (p)))

static struct ncclbpf_tuner_ctx seen;
static int32_t out_algo = -1, out_proto = -1, out_ch = 0;

/* Records what it reads, then sets the outputs the test chose. */
static uint64_t recorder(uint64_t c, uint64_t arg)
{
	struct ncclbpf_tuner_ctx *x = (struct ncclbpf_tuner_ctx *)(uintptr_t)c;
	if (arg) { /* declared reads: n_bytes, coll_type, seq and cost cell (1, 2) */
		seen.n_bytes = x->n_bytes;
		seen.coll_type = x->coll_type;
		seen.seq = x->seq;
		seen.cost_ns[1][2] = x->cost_ns[1][2];
	}
	seen.algorithm = x->algorithm; /* outputs start at their defaults */
	seen.protocol = x->protocol;
	seen.n_channels = x->n_channels;
	x->algorithm = out_algo;
	x->protocol = out_proto;
	x->n_channels = out_ch;
	return 0;
}

static void install(uint64_t reads_arg, uint64_t skip)
{
	struct ncclbpf_native_policy np = {.sz = sizeof(np),
					   .name = "recorder",
					   .tuner = recorder,
					   .arg = reads_arg,
					   .tuner_skip_words = skip};
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	CHECK(ncclbpf_rt_install_native(&np, &r) == 0);
}

static void call(void *ctx, float *table, int na, int np, int *ch)
{
	float t[21];
	harness_table(t, 7, 3, 4, 1 << 20);
	if (table)
		memcpy(table, t, sizeof(t));
	ncclTunerPlugin_v5.getCollInfo(ctx, 4, 1 << 20, 1, (float **)table, na, np, 0, ch);
}

static void calls(void *ctx, int n, int32_t a, int32_t p, int32_t c)
{
	out_algo = a;
	out_proto = p;
	out_ch = c;
	for (int i = 0; i < n; i++) {
		float t[21];
		int ch = 0;
		call(ctx, t, 7, 3, &ch);
	}
}

int main(void)
{
	setenv("NCCLBPF_WATCH", "0", 1);
	setenv("NCCLBPF_INSPECT", "0", 1);
	unsetenv("NCCLBPF_POLICY");
	void *ctx = NULL;
	ncclTunerPlugin_v5.init(&ctx, 42, 8, 2, harness_logger, NULL, NULL);
	struct ncclbpf_comm *c = ctx;
	CHECK(c != NULL);
	uint64_t st[NCCLBPF_STAT_MAX], ch0 = 0;

	/* No policy: counted as calls without a policy; malformed calls as such. */
	calls(ctx, 5, -1, -1, 0);
	int ch = 0;
	call(ctx, NULL, 7, 3, &ch);
	float t[21];
	call(ctx, t, 8, 3, &ch);
	ncclbpf_comm__stats(c, st, &ch0);
	CHECK_EQ_U64(st[NCCLBPF_STAT_CALLS], 7);
	CHECK_EQ_U64(st[NCCLBPF_STAT_NO_POLICY], 5);
	CHECK_EQ_U64(st[NCCLBPF_STAT_BAD_CALL], 2);
	CHECK_EQ_U64(st[NCCLBPF_STAT_RUNS], 0);

	/* A program that reads four words sees them exact; outputs start at their defaults. */
	install(1, ~(W(n_bytes) | W(coll_type) | W(seq) | CELL(1, 2)));
	memset(&seen, 0xab, sizeof(seen));
	calls(ctx, 4, -1, -1, 0);
	float ref[21];
	harness_table(ref, 7, 3, 4, 1 << 20);
	CHECK_EQ_U64(seen.n_bytes, 1 << 20);
	CHECK_EQ_U64(seen.coll_type, 4);
	CHECK_EQ_U64(seen.seq, 10); /* the 11th call of the communicator */
	CHECK_EQ_U64(seen.cost_ns[1][2], (uint64_t)((double)ref[5] * 1000.0 + 0.5));
	CHECK(seen.algorithm == -1 && seen.protocol == -1 && seen.n_channels == 0);
	/* ... and one that reads nothing still starts from the defaults. */
	install(0, ~0ull);
	memset(&seen, 0xab, sizeof(seen));
	calls(ctx, 1, -1, -1, 0);
	CHECK(seen.algorithm == -1 && seen.protocol == -1 && seen.n_channels == 0);
	ncclbpf_comm__stats(c, st, &ch0);
	CHECK_EQ_U64(st[NCCLBPF_STAT_DEFAULT], 5);
	CHECK_EQ_U64(st[NCCLBPF_STAT_RUNS], 5);

	/* Applied decisions: their cell and the channels set; left to NCCL: derived. */
	calls(ctx, 3, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE, 8);
	calls(ctx, 2, NCCLBPF_ALGO_TREE, NCCLBPF_PROTO_LL, 0);
	calls(ctx, 1, NCCLBPF_ALGO_RING, -1, 0); /* the cheapest RING protocol */
	/* Invalid: out of range, and an unavailable cell. */
	calls(ctx, 1, 9, 0, 0);
	calls(ctx, 1, NCCLBPF_ALGO_COLLNET_DIRECT, NCCLBPF_PROTO_SIMPLE, 0);
	/* NVLS on two nodes is CollNet-like: its channel request is dropped, the choice stays. */
	calls(ctx, 2, NCCLBPF_ALGO_NVLS, NCCLBPF_PROTO_SIMPLE, 4);
	ncclbpf_comm__stats(c, st, &ch0);
	CHECK_EQ_U64(st[NCCLBPF_STAT_APPLIED], 8);
	CHECK_EQ_U64(st[NCCLBPF_STAT_INVALID], 2);
	CHECK_EQ_U64(st[NCCLBPF_STAT_CH_SKIPPED], 2);
	CHECK_EQ_U64(st[NCCLBPF_STAT_RUNS], 15);
	CHECK_EQ_U64(st[NCCLBPF_STAT_CALLS], 22);
	CHECK_EQ_U64(st[NCCLBPF_STAT_NO_POLICY], 5);
	CHECK_EQ_U64(c->applied_cell[NCCLBPF_ALGO_RING][NCCLBPF_PROTO_SIMPLE], 3);
	CHECK_EQ_U64(c->applied_cell[NCCLBPF_ALGO_TREE][NCCLBPF_PROTO_LL], 2);
	CHECK_EQ_U64(c->applied_cell[NCCLBPF_ALGO_NVLS][NCCLBPF_PROTO_SIMPLE], 2);
	int ea = -1, ep = -1; /* the RING row's cheapest protocol */
	CHECK(nccl_cost_winner(ref + 3 * NCCLBPF_ALGO_RING, 1, 3, &ea, &ep) == 0);
	CHECK_EQ_U64(c->applied_cell[NCCLBPF_ALGO_RING][ep], ep == NCCLBPF_PROTO_SIMPLE ? 4 : 1);
	CHECK_EQ_U64(c->applied_channels[8], 3);
	CHECK_EQ_U64(ch0, 5); /* 2 TREE/LL + 1 RING + 2 NVLS whose channels were dropped */

	/* Unloaded mid-run: back to no policy. */
	ncclbpf_rt_unload();
	calls(ctx, 2, NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE, 8);
	ncclbpf_comm__stats(c, st, &ch0);
	CHECK_EQ_U64(st[NCCLBPF_STAT_NO_POLICY], 7);
	CHECK_EQ_U64(st[NCCLBPF_STAT_CALLS], 24);

	/* No table work, by construction: without a policy, and with one that reads no cost cell
	 * and leaves every output at its default, the table is never read or written (it lies in
	 * a page that faults on any access). */
	float *sealed = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(sealed != MAP_FAILED);
	ch = 5;
	ncclTunerPlugin_v5.getCollInfo(ctx, 4, 1 << 20, 1, (float **)sealed, 7, 3, 0, &ch);
	install(0, ~0ull);
	out_algo = out_proto = -1;
	out_ch = 0;
	ncclTunerPlugin_v5.getCollInfo(ctx, 4, 1 << 20, 1, (float **)sealed, 7, 3, 0, &ch);
	ncclbpf_rt_unload();
	munmap(sealed, 4096);
	CHECK(ch == 5);
	ncclbpf_comm__stats(c, st, &ch0);
	CHECK_EQ_U64(st[NCCLBPF_STAT_NO_POLICY], 8);
	CHECK_EQ_U64(st[NCCLBPF_STAT_DEFAULT], 6);
	CHECK_EQ_U64(st[NCCLBPF_STAT_CALLS], 26);

	/* Totals keep the communicator's counts after it is gone. */
	ncclTunerPlugin_v5.finalize(ctx);
	struct ncclbpf_rt_stats rs;
	ncclbpf_rt_get_stats(&rs);
	CHECK_EQ_U64(rs.comm[NCCLBPF_STAT_CALLS], 26);
	CHECK_EQ_U64(rs.comm[NCCLBPF_STAT_APPLIED], 8);
	CHECK_EQ_U64(rs.comm[NCCLBPF_STAT_NO_POLICY], 8);
	return check_summary("test_tuner_stats");
}
