/* The cost-table translation and the output discipline (docs/design.md §6.5), without a
 * plugin or a policy: every rule, then a randomized property check over many tables. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "tuner_table.h"

static struct ncclbpf_tuner_ctx ctx_for(int algo, int proto, int ch, uint32_t nodes)
{
	struct ncclbpf_tuner_ctx x;
	memset(&x, 0, sizeof(x));
	x.algorithm = algo;
	x.protocol = proto;
	x.n_channels = ch;
	x.n_nodes = nodes;
	return x;
}

static void test_fill(void)
{
	float t[7 * 3];
	for (int i = 0; i < 21; i++)
		t[i] = -1.0f;
	t[0] = 1.5f;	  /* 1500 ns */
	t[1] = 0.0f;	  /* valid zero */
	t[2] = NAN;	  /* never picked by NCCL */
	t[3] = 3.6e9f;	  /* NCCL's upper bound: invalid */
	t[4] = -0.5f;	  /* any negative: invalid */
	t[5] = 123.456f;  /* rounding */
	t[20] = INFINITY; /* invalid */
	struct ncclbpf_tuner_ctx x;
	memset(&x, 0xab, sizeof(x));
	tuner_fill_costs(&x, t, 7, 3);
	CHECK_EQ_U64(x.cost_ns[0][0], 1500);
	CHECK_EQ_U64(x.cost_ns[0][1], 0);
	CHECK_EQ_U64(x.cost_ns[0][2], NCCLBPF_COST_NA);
	CHECK_EQ_U64(x.cost_ns[1][0], NCCLBPF_COST_NA);
	CHECK_EQ_U64(x.cost_ns[1][1], NCCLBPF_COST_NA);
	CHECK_EQ_U64(x.cost_ns[1][2], (uint64_t)((double)123.456f * 1000.0 + 0.5));
	CHECK_EQ_U64(x.cost_ns[6][2], NCCLBPF_COST_NA);
	/* A 6x3 table (NCCL 2.22): the PAT row does not exist and reads as unavailable. */
	float t6[6 * 3];
	harness_table(t6, 6, 3, 4, 1 << 20);
	tuner_fill_costs(&x, t6, 6, 3);
	CHECK(x.cost_ns[1][2] != NCCLBPF_COST_NA);
	for (int p = 0; p < 3; p++)
		CHECK_EQ_U64(x.cost_ns[6][p], NCCLBPF_COST_NA);
	/* A 7x2 table: column 2 does not exist. */
	tuner_fill_costs(&x, t6, 7, 2);
	for (int a = 0; a < 7; a++)
		CHECK_EQ_U64(x.cost_ns[a][2], NCCLBPF_COST_NA);
	CHECK_EQ_U64(x.cost_ns[0][1], (uint64_t)((double)t6[1] * 1000.0 + 0.5));

	/* Only the cells a program reads: the others are not written at all. */
	memset(&x, 0xab, sizeof(x));
	tuner_fill_cells(&x, t, 7, 3, 1u << 0 | 1u << 5 | 1u << 20);
	CHECK_EQ_U64(x.cost_ns[0][0], 1500);
	CHECK_EQ_U64(x.cost_ns[1][2], (uint64_t)((double)123.456f * 1000.0 + 0.5));
	CHECK_EQ_U64(x.cost_ns[6][2], NCCLBPF_COST_NA);
	for (int i = 0; i < 21; i++)
		if (i != 0 && i != 5 && i != 20)
			CHECK_EQ_U64((&x.cost_ns[0][0])[i], 0xababababababababull);
	CHECK_EQ_U64(x.n_bytes, 0xababababababababull);
	/* ... in a smaller table too: cell (6, 0) does not exist in 6 x 3, (1, 1) is t6[4]. */
	memset(&x, 0xab, sizeof(x));
	tuner_fill_cells(&x, t6, 6, 3, 1u << 18 | 1u << 4);
	CHECK_EQ_U64(x.cost_ns[6][0], NCCLBPF_COST_NA);
	CHECK_EQ_U64(x.cost_ns[1][1], (uint64_t)((double)t6[4] * 1000.0 + 0.5));
	CHECK_EQ_U64(x.cost_ns[1][0], 0xababababababababull);
	/* An empty mask writes nothing. */
	memset(&x, 0xab, sizeof(x));
	tuner_fill_cells(&x, t, 7, 3, 0);
	for (int i = 0; i < 21; i++)
		CHECK_EQ_U64((&x.cost_ns[0][0])[i], 0xababababababababull);
}

/* Only the words asked for are written (what a program may read), each exactly. */
static void test_fill_scalars(void)
{
	const struct tuner_call k = {.comm_id = 0x1122334455667788ull,
				     .n_bytes = 1 << 20,
				     .seq = 77,
				     .coll_type = 4,
				     .n_ranks = 8,
				     .n_nodes = 2,
				     .num_pipe_ops = -3,
				     .num_algo = 7,
				     .num_proto = 3,
				     .reg_buff = 5};
	struct ncclbpf_tuner_ctx x, poison;
	memset(&poison, 0xab, sizeof(poison));
	/* Each word alone: that word changes, every other byte of the context stays. */
	for (unsigned w = 0; w < sizeof(x) / 8; w++) {
		x = poison;
		tuner_fill_scalars(&x, 1ull << w, &k);
		for (unsigned b = 0; b < sizeof(x); b++)
			if (b / 8 != w && ((unsigned char *)&x)[b] != 0xab) {
				CHECK(!"a word not asked for was written");
				break;
			}
		int scalar = (TUNER_SCALAR_WORDS >> w) & 1;
		CHECK(!memcmp((char *)&x + 8 * w, (char *)&poison + 8 * w, 8) == !scalar);
	}
	x = poison;
	tuner_fill_scalars(&x, TUNER_SCALAR_WORDS, &k);
	CHECK_EQ_U64(x.comm_id, k.comm_id);
	CHECK_EQ_U64(x.n_bytes, k.n_bytes);
	CHECK_EQ_U64(x.seq, 77);
	CHECK(x.coll_type == 4 && x.n_ranks == 8 && x.n_nodes == 2);
	CHECK(x.num_pipe_ops == 0 && x.num_algo == 7 && x.num_proto == 3); /* negative: 0 */
	CHECK(x.reg_buff == 1 && x._pad0 == 0);
	CHECK_EQ_U64(x.cost_ns[0][0], 0xababababababababull);
	CHECK(x.algorithm == (int32_t)0xabababab);
}

static void test_winner(void)
{
	float t[] = {-1, 5, 3, 3, -1, 7};
	int a = -9, p = -9;
	CHECK(nccl_cost_winner(t, 2, 3, &a, &p) == 0);
	CHECK(a == 0 && p == 2); /* ties go to the first scanned */
	float e[] = {-1, -1, NAN, 4e9f};
	CHECK(nccl_cost_winner(e, 2, 2, &a, &p) == -1 && a == -1 &&
	      p == -1); /* as replay shows it */

	/* Along one algorithm or one protocol: the cheapest valid cell there, the first on a tie;
	 * nothing valid there: -1 (both -1), whatever the other rows hold. */
	float u[] = {4, 2, 2, 1, 9, -1, 2, 8, 0};
	CHECK(nccl_cost_winner_along(u, 3, 3, 0, -1, &a, &p) == 0 && a == 0 && p == 1);
	CHECK(nccl_cost_winner_along(u, 3, 3, 1, -1, &a, &p) == 0 && a == 1 && p == 0);
	CHECK(nccl_cost_winner_along(u, 3, 3, -1, 0, &a, &p) == 0 && a == 1 && p == 0);
	CHECK(nccl_cost_winner_along(u, 3, 3, -1, 1, &a, &p) == 0 && a == 0 && p == 1);
	CHECK(nccl_cost_winner_along(u, 3, 3, -1, 2, &a, &p) == 0 && a == 2 && p == 2);
	CHECK(nccl_cost_winner_along(u, 3, 3, 2, 0, &a, &p) == 0 && a == 2 && p == 0);
	CHECK(nccl_cost_winner_along(u, 3, 3, 1, 2, &a, &p) == -1 && a == -1 && p == -1);
	float v[] = {3, -1, 3, 3, NAN, 1};
	CHECK(nccl_cost_winner_along(v, 3, 2, -1, 0, &a, &p) == 0 && a == 0 && p == 0);
	CHECK(nccl_cost_winner_along(v, 3, 2, -1, 1, &a, &p) == 0 && a == 2 && p == 1);
	CHECK(nccl_cost_winner_along(v, 3, 2, 2, -1, &a, &p) == 0 && a == 2 && p == 1);
	CHECK(nccl_cost_winner_along(v, 3, 2, 0, 1, &a, &p) == -1 && a == -1 && p == -1);
}

static void test_apply_rules(void)
{
	float t[21], orig[21];
	int ch;
	struct tuner_apply_info info;
	harness_table(orig, 7, 3, 4, 1 << 20);

	/* Defaults: nothing changes. */
	memcpy(t, orig, sizeof(t));
	ch = 0;
	struct ncclbpf_tuner_ctx x = ctx_for(-1, -1, 0, 1);
	CHECK(tuner_apply(&x, t, 7, 3, &ch, &info) == TUNER_APPLY_DEFAULT);
	CHECK(!memcmp(t, orig, sizeof(t)) && ch == 0);

	/* A full choice lowers exactly that cell to 0 and NCCL then picks it. */
	memcpy(t, orig, sizeof(t));
	x = ctx_for(NCCLBPF_ALGO_TREE, NCCLBPF_PROTO_LL, 0, 1);
	CHECK(tuner_apply(&x, t, 7, 3, &ch, &info) == TUNER_APPLY_CHANGED);
	int a, p;
	CHECK(nccl_cost_winner(t, 7, 3, &a, &p) == 0 && a == 0 && p == 0);
	CHECK(t[0] == 0.0f);
	for (int i = 1; i < 21; i++)
		CHECK(t[i] == orig[i]);

	/* An unavailable cell is never revived: the whole decision is rejected. */
	memcpy(t, orig, sizeof(t));
	ch = 0;
	x = ctx_for(NCCLBPF_ALGO_COLLNET_DIRECT, NCCLBPF_PROTO_SIMPLE, 4, 1);
	CHECK(tuner_apply(&x, t, 7, 3, &ch, &info) == TUNER_APPLY_INVALID);
	CHECK(!memcmp(t, orig, sizeof(t)) && ch == 0);
	x = ctx_for(NCCLBPF_ALGO_NVLS, NCCLBPF_PROTO_LL, 0, 1);
	CHECK(tuner_apply(&x, t, 7, 3, &ch, &info) == TUNER_APPLY_INVALID);
	CHECK(!memcmp(t, orig, sizeof(t)));

	/* Out-of-range outputs. */
	int bad[][3] = {{7, 2, 0},  {-2, 2, 0}, {1, 3, 0},	   {1, -5, 0},
			{1, 2, 65}, {1, 2, -1}, {INT32_MAX, 0, 0}, {1, 2, INT32_MIN}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(t, orig, sizeof(t));
		ch = 0;
		x = ctx_for(bad[i][0], bad[i][1], bad[i][2], 1);
		CHECK(tuner_apply(&x, t, 7, 3, &ch, &info) == TUNER_APPLY_INVALID);
		CHECK(!memcmp(t, orig, sizeof(t)) && ch == 0);
	}
	/* PAT does not exist in a 6-row table. */
	float t6[18], o6[18];
	harness_table(o6, 6, 3, 4, 1 << 20);
	memcpy(t6, o6, sizeof(t6));
	x = ctx_for(NCCLBPF_ALGO_PAT, NCCLBPF_PROTO_SIMPLE, 0, 1);
	CHECK(tuner_apply(&x, t6, 6, 3, &ch, &info) == TUNER_APPLY_INVALID);
	CHECK(!memcmp(t6, o6, sizeof(t6)));

	/* Algorithm only: the cheapest protocol of that algorithm. Protocol only: the cheapest
	 * algorithm with that protocol. */
	memcpy(t, orig, sizeof(t));
	x = ctx_for(NCCLBPF_ALGO_RING, -1, 0, 1);
	CHECK(tuner_apply(&x, t, 7, 3, &ch, &info) == TUNER_APPLY_CHANGED);
	int ea = -1, ep = -1;
	CHECK(nccl_cost_winner(orig + 3, 1, 3, &ea, &ep) == 0);
	CHECK(nccl_cost_winner(t, 7, 3, &a, &p) == 0 && a == 1 && p == ep);
	memcpy(t, orig, sizeof(t));
	x = ctx_for(-1, NCCLBPF_PROTO_LL, 0, 1);
	CHECK(tuner_apply(&x, t, 7, 3, &ch, &info) == TUNER_APPLY_CHANGED);
	CHECK(nccl_cost_winner(t, 7, 3, &a, &p) == 0 && p == 0);
	CHECK(orig[a * 3] <= orig[0] && orig[a * 3] <= orig[3]);

	/* Channels: applied for a non-CollNet winner, dropped for CollNet-like winners. */
	memcpy(t, orig, sizeof(t));
	ch = 0;
	x = ctx_for(-1, -1, 12, 1);
	CHECK(tuner_apply(&x, t, 7, 3, &ch, &info) == TUNER_APPLY_CHANGED);
	CHECK(ch == 12 && !memcmp(t, orig, sizeof(t)) && !info.channels_skipped);
	/* info names the cell NCCL picks and the channels set (the decision histogram). */
	CHECK(nccl_cost_winner(orig, 7, 3, &a, &p) == 0);
	CHECK(info.algo == a && info.proto == p && info.channels == 12);
	ch = 0;
	x = ctx_for(NCCLBPF_ALGO_NVLS, NCCLBPF_PROTO_SIMPLE, 64, 1); /* NVLS on one node: ok */
	CHECK(tuner_apply(&x, t, 7, 3, &ch, &info) == TUNER_APPLY_CHANGED && ch == 64);
	CHECK(info.algo == NCCLBPF_ALGO_NVLS && info.proto == NCCLBPF_PROTO_SIMPLE &&
	      info.channels == 64);
	memcpy(t, orig, sizeof(t));
	ch = 0;
	x = ctx_for(NCCLBPF_ALGO_NVLS, NCCLBPF_PROTO_SIMPLE, 8, 2); /* NVLS across nodes: CollNet */
	CHECK(tuner_apply(&x, t, 7, 3, &ch, &info) == TUNER_APPLY_CHANGED);
	CHECK(ch == 0 && info.channels_skipped);
	float cn[21];
	memcpy(cn, orig, sizeof(cn));
	cn[2 * 3 + 2] = 0.5f; /* CollNetDirect SIMPLE available and cheapest */
	ch = 0;
	x = ctx_for(-1, -1, 8, 2);
	CHECK(tuner_apply(&x, cn, 7, 3, &ch, &info) == TUNER_APPLY_DEFAULT);
	CHECK(ch == 0 && info.channels_skipped);
	/* NULL nChannels: channel request ignored, choice still applied. */
	memcpy(t, orig, sizeof(t));
	x = ctx_for(NCCLBPF_ALGO_RING, NCCLBPF_PROTO_SIMPLE, 8, 1);
	CHECK(tuner_apply(&x, t, 7, 3, NULL, &info) == TUNER_APPLY_CHANGED && t[5] == 0.0f);

	/* A cell NCCL already priced at 0.0 cannot steal the choice. */
	float z[] = {0.0f, 2.0f, 3.0f, 4.0f};
	x = ctx_for(1, 1, 0, 1);
	CHECK(tuner_apply(&x, z, 2, 2, &ch, &info) == TUNER_APPLY_CHANGED);
	CHECK(nccl_cost_winner(z, 2, 2, &a, &p) == 0 && a == 1 && p == 1);
	CHECK(z[0] == FLT_MIN);
	/* ... while a 0.0 after the choice cannot take the tie and stays as NCCL priced it. */
	float z2[] = {2.0f, 0.0f, 3.0f, 0.0f};
	x = ctx_for(0, 0, 0, 1);
	CHECK(tuner_apply(&x, z2, 2, 2, &ch, &info) == TUNER_APPLY_CHANGED);
	CHECK(nccl_cost_winner(z2, 2, 2, &a, &p) == 0 && a == 0 && p == 0);
	CHECK(z2[1] == 0.0f && z2[3] == 0.0f && info.algo == 0 && info.proto == 0);
	/* An empty table stays empty whatever the policy says. */
	float e[] = {-1, -1, -1, -1};
	x = ctx_for(0, 0, 0, 1);
	CHECK(tuner_apply(&x, e, 2, 2, &ch, &info) == TUNER_APPLY_INVALID);
	x = ctx_for(-1, -1, 4, 1);
	ch = 0;
	CHECK(tuner_apply(&x, e, 2, 2, &ch, &info) == TUNER_APPLY_DEFAULT && ch == 0);
	for (int i = 0; i < 4; i++)
		CHECK(e[i] == -1.0f);
}

/* Property: for any table and any output, no unavailable cell changes, a table with a valid
 * cell keeps one, a valid choice becomes NCCL's pick, channels stay within 0..64. */
static int is_negative_zero(float v)
{
	return v == 0.0f && signbit(v);
}

static float float_of_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* The apply shortcut's one-compare validity test against NCCL's rule: the same answer for every
 * float but -0.0, which it leaves to the rule (valid there). */
static void test_cell_surely_valid(void)
{
	float limit = 3.6e9f;
	uint32_t limit_bits;
	memcpy(&limit_bits, &limit, sizeof(limit_bits));
	CHECK_EQ_U64(limit_bits, TUNER_COST_LIMIT_BITS);
	const float special[] = {0.0f,	  -0.0f,    1.0f,
				 -1.0f,	  FLT_MIN,  -FLT_MIN,
				 3.6e9f,  -3.6e9f,  nextafterf(3.6e9f, 0),
				 4e9f,	  INFINITY, -INFINITY,
				 NAN,	  -NAN,	    FLT_MAX,
				 -FLT_MAX};
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		float v = special[i];
		CHECK_EQ_U64(tuner_cell_surely_valid(&v),
			     nccl_cost_cell_valid(v) && !is_negative_zero(v));
	}
	unsigned seed = 777;
	int mismatches = 0;
	for (int i = 0; i < 1000000; i++) {
		float v = float_of_bits((uint32_t)rand_r(&seed) << 1 ^ (uint32_t)rand_r(&seed));
		if (tuner_cell_surely_valid(&v) !=
		    (nccl_cost_cell_valid(v) && !is_negative_zero(v)))
			mismatches++;
	}
	CHECK_EQ_U64(mismatches, 0);
}

/* Forcing a cell among the first eight of a 7 x 3 table (the SSE2 test, then the loop when any
 * of the eight is 0.0): a 0.0 before the choice is raised, one after it is left alone. */
static void test_force_cell(void)
{
	float t[21];
	for (int i = 0; i < 21; i++)
		t[i] = 10.0f + (float)i;
	t[6] = 0.0f; /* after the choice */
	tuner_force_cell(t, 21, 2);
	CHECK(t[2] == 0.0f && t[6] == 0.0f && t[0] == 10.0f && t[1] == 11.0f);
	int a, p;
	CHECK(nccl_cost_winner(t, 7, 3, &a, &p) == 0 && a == 0 && p == 2);
	for (int i = 0; i < 21; i++)
		t[i] = 10.0f + (float)i;
	t[1] = -0.0f; /* before the choice: NCCL would take it on the tie */
	tuner_force_cell(t, 21, 4);
	CHECK(t[1] == FLT_MIN && t[4] == 0.0f);
	CHECK(nccl_cost_winner(t, 7, 3, &a, &p) == 0 && a == 1 && p == 1);
	for (int i = 0; i < 21; i++)
		t[i] = 10.0f + (float)i;
	t[8] = 0.0f; /* the choice itself is already 0.0 */
	tuner_force_cell(t, 21, 8);
	CHECK(t[8] == 0.0f && t[7] == 17.0f);
	CHECK(nccl_cost_winner(t, 7, 3, &a, &p) == 0 && a == 2 && p == 2);
}

static void test_apply_random(void)
{
	unsigned seed = 12345;
	int violations = 0, shortcuts = 0;
	for (int it = 0; it < 200000; it++) {
		float t[21], o[21];
		int na = 1 + rand_r(&seed) % 7, np = 1 + rand_r(&seed) % 3;
		for (int i = 0; i < na * np; i++) {
			int k = rand_r(&seed) % 9;
			o[i] = k == 0	? -1.0f
			       : k == 1 ? 0.0f
			       : k == 8 ? -0.0f
			       : k == 2 ? NAN
			       : k == 3 ? 4e9f
					: (float)(rand_r(&seed) % 1000) / 7.0f;
		}
		memcpy(t, o, sizeof(float) * (size_t)(na * np));
		struct ncclbpf_tuner_ctx x =
		    ctx_for(rand_r(&seed) % 10 - 2, rand_r(&seed) % 6 - 2,
			    /* half the calls leave channels to NCCL */
			    it & 1 ? 0 : rand_r(&seed) % 70 - 2, 1 + rand_r(&seed) % 3);
		int ch = 0;
		struct tuner_apply_info info;
		enum tuner_apply_result res = tuner_apply(&x, t, na, np, &ch, &info);
		int had_valid = 0, has_valid = 0;
		for (int i = 0; i < na * np; i++) {
			had_valid |= nccl_cost_cell_valid(o[i]);
			has_valid |= nccl_cost_cell_valid(t[i]);
			if (!nccl_cost_cell_valid(o[i]) &&
			    memcmp(&t[i], &o[i], sizeof(float))) /* NaN-safe */
				violations++;
			if (nccl_cost_cell_valid(o[i]) && !nccl_cost_cell_valid(t[i]))
				violations++;
		}
		if (had_valid != has_valid || ch < 0 || ch > 64)
			violations++;
		if (res == TUNER_APPLY_INVALID &&
		    (memcmp(t, o, sizeof(float) * (size_t)(na * np)) || ch != 0))
			violations++;
		if (res == TUNER_APPLY_CHANGED && (x.algorithm >= 0 && x.protocol >= 0)) {
			int a, p;
			if (nccl_cost_winner(t, na, np, &a, &p) || a != x.algorithm ||
			    p != x.protocol)
				violations++;
		}
		/* What the statistics count: the cell NCCL picks now, the channels set. */
		if (res == TUNER_APPLY_CHANGED) {
			int a, p;
			if (nccl_cost_winner(t, na, np, &a, &p) || a != info.algo ||
			    p != info.proto || info.channels != ch)
				violations++;
		}
		/* The adapter's shortcut: tuner_apply's very result where it applies, nothing
		 * touched where it leaves the outputs to tuner_apply. */
		float f[21];
		memcpy(f, o, sizeof(float) * (size_t)(na * np));
		if (tuner_apply_cell(&x, f, na, np, 0)) {
			shortcuts++;
			if (res != TUNER_APPLY_CHANGED ||
			    memcmp(f, t, sizeof(float) * (size_t)(na * np)) ||
			    info.algo != x.algorithm || info.proto != x.protocol || ch != 0)
				violations++;
		} else if (memcmp(f, o, sizeof(float) * (size_t)(na * np)) ||
			   (res == TUNER_APPLY_CHANGED && x.algorithm >= 0 && x.protocol >= 0 &&
			    x.n_channels == NCCLBPF_CHANNELS_DEFAULT &&
			    /* the one valid cell it leaves to tuner_apply */
			    !is_negative_zero(o[x.algorithm * np + x.protocol]))) {
			violations++;
		}
	}
	CHECK_EQ_U64(violations, 0);
	CHECK(shortcuts > 1000); /* the shortcut was taken often */
}

int main(void)
{
	test_fill();
	test_fill_scalars();
	test_winner();
	test_apply_rules();
	test_cell_surely_valid();
	test_force_cell();
	test_apply_random();
	return check_summary("test_tuner_table");
}
