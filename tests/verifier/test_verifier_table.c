/* The verifier's rule table: every rejected program must fail with its expected message, every
 * accepted one must pass (and then run in the bounds-checking interpreter without a fault on
 * random contexts: a fault would be a verifier soundness bug). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include "ebpf/exec.h"
#include "ncclbpf/nccl_platform.h"
#include "vcases.h"

#include "cases_accept.h"
#include "cases_reject.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void quiet_log(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
}

static void run_checked(const struct vcase *c)
{
	struct ebpf_exec_opts po = {.sz = sizeof(po),
				    .name = c->name,
				    .helpers = ebpf_helpers_default(),
				    .maps = vmaps,
				    .n_maps = N_MAPS};
	const struct ebpf_prog_type *t = c->type ? ncclbpf_prog_type(c->type) : NULL;
	uint8_t ctx[256];
	char err[256];
	struct ebpf_exec *p = ebpf_exec__new(c->insns, vcase_len(c), &po, err, sizeof(err));

	if (!p) {
		fprintf(stderr, "%s: ebpf_exec__new: %s\n", c->name, err);
		CHECK(p != NULL);
		return;
	}
	for (int round = 0; round < 8; round++) {
		struct ebpf_region reg = {(uint64_t)(uintptr_t)ctx, t ? t->ctx_size : 0,
					  EBPF_REGION_READ | EBPF_REGION_WRITE};
		struct ebpf_fault f = {0};
		struct ebpf_run_opts ro = {.sz = sizeof(ro),
					   .checked = 1,
					   .regions = &reg,
					   .n_regions = t ? 1 : 0,
					   .fault = &f};
		uint64_t r0 = 0;
		int rc;

		for (size_t i = 0; i < sizeof(ctx); i++)
			ctx[i] = round ? (uint8_t)next_rand() : 0;
		rc = ebpf_interp__run(p, (uint64_t)(uintptr_t)ctx, 0, &ro, &r0);
		if (rc)
			fprintf(stderr, "%s: accepted but faulted in checked mode: %s\n", c->name,
				f.msg);
		CHECK(rc == 0);
	}
	ebpf_exec__free(p);
}

/* Writes every case as a fuzz_verifier input (type byte, map-flag byte, instructions). */
static int write_corpus(const char *dir)
{
	static const char *const types[] = {"tuner", "tuner_chunk", "profiler", "net"};
	const struct vcase *all[2] = {reject_cases, accept_cases};
	size_t cnt[2] = {sizeof(reject_cases) / sizeof(reject_cases[0]),
			 sizeof(accept_cases) / sizeof(accept_cases[0])};

	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < cnt[s]; i++) {
			const struct vcase *c = &all[s][i];
			char path[512];
			uint8_t hdr[2] = {4, (uint8_t)c->local_maps};
			FILE *f;

			for (uint8_t t = 0; t < 4; t++)
				if (c->type && !strcmp(c->type, types[t]))
					hdr[0] = t;
			if (c->vflags & EBPF_VERIFY_F_ALLOW_RANK_LOCAL)
				hdr[1] |= 0x80;
			snprintf(path, sizeof(path), "%s/%s%03zu", dir, s ? "accept" : "reject", i);
			f = fopen(path, "wb");
			if (!f)
				return 1;
			fwrite(hdr, 1, 2, f);
			fwrite(c->insns, sizeof(struct ebpf_insn), vcase_len(c), f);
			fclose(f);
		}
	}
	return 0;
}

/* stats.ctx_read holds exactly the fields listed in c->reads. */
static void check_reads(const struct vcase *c, const struct ebpf_verify_stats *st)
{
	const struct ebpf_prog_type *t = ncclbpf_prog_type(c->type);
	char names[256];
	uint64_t want = 0;

	snprintf(names, sizeof(names), "%s", c->reads);
	for (char *save, *f = strtok_r(names, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		uint64_t bit = ebpf_prog_type_field_bit(t, f);
		CHECK(bit != 0); /* the case names a real field */
		want |= bit;
	}
	if (st->ctx_read != want)
		fprintf(stderr, "'%s': ctx_read 0x%llx, expected 0x%llx (%s)\n", c->name,
			(unsigned long long)st->ctx_read, (unsigned long long)want, c->reads);
	CHECK_EQ_U64(st->ctx_read, want);
}

/* Fields from index 63 on share bit 63; a rejected program's mask is not used. */
static void check_reads_wide_type(void)
{
	static struct ebpf_ctx_field fields[70];
	static char names[70][8];
	struct ebpf_prog_type t = {.name = "wide",
				   .ctx_size = 70 * 8,
				   .fields = fields,
				   .n_fields = 70,
				   .ret_min = 0,
				   .ret_max = 0,
				   .insn_budget = 4096};
	struct ebpf_verify_stats st;
	char err[256];

	for (int i = 0; i < 70; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		fields[i] = (struct ebpf_ctx_field){names[i], (uint16_t)(i * 8), 8, EBPF_CTX_READ};
	}
	const struct ebpf_insn reads[] = {LDX_MEM(EBPF_DW, 2, 1, 62 * 8),
					  LDX_MEM(EBPF_DW, 2, 1, 64 * 8),
					  LDX_MEM(EBPF_W, 2, 1, 69 * 8 + 4), RET0};
	struct ebpf_verify_opts o = {
	    .sz = sizeof(o), .type = &t, .helpers = ebpf_helpers_default()};
	CHECK(ebpf_verify(reads, INSN_CNT(reads), &o, &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(st.ctx_read, (1ull << 62) | (1ull << 63));
	CHECK_EQ_U64(st.ctx_words, (1ull << 62) | (1ull << 63)); /* words 64 and 69: bit 63 */
	CHECK_EQ_U64(ebpf_prog_type_field_bit(&t, "f0"), 1);
	CHECK_EQ_U64(ebpf_prog_type_field_bit(&t, "f66"), 1ull << 63);
	CHECK_EQ_U64(ebpf_prog_type_field_bit(&t, "nope"), 0);
	const struct ebpf_insn none[] = {RET0};
	CHECK(ebpf_verify(none, INSN_CNT(none), &o, &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(st.ctx_read, 0);
}

/* stats.ctx_words: one bit per 8-byte word a read may touch, exact per cost cell (constant
 * offsets), narrow and straddling reads, a moved ctx pointer, words from 63 on in bit 63. */
static void check_words(void)
{
	const struct ebpf_prog_type *t = ncclbpf_prog_type("tuner");
	struct ebpf_verify_opts o = {.sz = sizeof(o), .type = t, .helpers = ebpf_helpers_default()};
	struct ebpf_verify_stats st;
	char err[256];
	/* cost_ns[1][2] (word 6 + 5), a byte of n_bytes (word 1), coll_type + n_ranks in one
	 * 8-byte load (word 3), cost_ns[6][0] through a moved pointer (word 6 + 18); writes of the
	 * outputs are not reads. */
	const struct ebpf_insn cells[] = {
	    LDX_MEM(EBPF_DW, 2, 1, T_COST + 5 * 8),  LDX_MEM(EBPF_B, 2, 1, T_BYTES + 7),
	    LDX_MEM(EBPF_DW, 2, 1, T_COLL),	     MOV64_REG(3, 1),
	    ALU64_IMM(EBPF_ADD, 3, T_COST + 18 * 8), LDX_MEM(EBPF_W, 2, 3, 4),
	    ST_MEM(EBPF_DW, 1, T_ALGO, 1),	     RET0};
	CHECK(ebpf_verify(cells, INSN_CNT(cells), &o, &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(st.ctx_words, (1ull << 11) | (1ull << 1) | (1ull << 3) | (1ull << 24));
	const struct ebpf_insn none[] = {ST_MEM(EBPF_W, 1, T_ALGO, 1), RET0};
	CHECK(ebpf_verify(none, INSN_CNT(none), &o, &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(st.ctx_words, 0);
	/* A read of every cell sets exactly the 21 cell words. */
	struct ebpf_insn all[23] = {[21] = MOV64_IMM(0, 0), [22] = EXIT()};
	for (int i = 0; i < 21; i++)
		all[i] = LDX_MEM(EBPF_DW, 2, 1, T_COST + 8 * i);
	CHECK(ebpf_verify(all, 23, &o, &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(st.ctx_words, ((1ull << 21) - 1) << 6);
}

/* stats.ctx_written: one bit per 8-byte word a store may write (immediate and register stores,
 * through a moved pointer, one store over two fields); reads write nothing; a program that
 * stores nothing has none, whatever it reads. */
static void check_written(void)
{
	const struct ebpf_prog_type *t = ncclbpf_prog_type("tuner");
	struct ebpf_verify_opts o = {.sz = sizeof(o), .type = t, .helpers = ebpf_helpers_default()};
	struct ebpf_verify_stats st;
	char err[256];
	const uint64_t algo_word = 1ull << (T_ALGO / 8), chan_word = 1ull << (T_CHAN / 8);
	const struct ebpf_insn reads[] = {LDX_MEM(EBPF_W, 2, 1, T_ALGO),
					  LDX_MEM(EBPF_W, 2, 1, T_CHAN),
					  LDX_MEM(EBPF_DW, 2, 1, T_BYTES), RET0};
	CHECK(ebpf_verify(reads, INSN_CNT(reads), &o, &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(st.ctx_written, 0);
	CHECK_EQ_U64(st.ctx_words, algo_word | chan_word | (1ull << (T_BYTES / 8)));
	const struct ebpf_insn proto[] = {MOV64_IMM(2, 1), STX_MEM(EBPF_W, 1, 2, T_PROTO), RET0};
	CHECK(ebpf_verify(proto, INSN_CNT(proto), &o, &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(st.ctx_written, algo_word);
	CHECK_EQ_U64(st.ctx_words, 0);
	const struct ebpf_insn chan[] = {MOV64_REG(3, 1), ALU64_IMM(EBPF_ADD, 3, T_CHAN),
					 ST_MEM(EBPF_W, 3, 0, 4), RET0};
	CHECK(ebpf_verify(chan, INSN_CNT(chan), &o, &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(st.ctx_written, chan_word);
	/* One 8-byte store over algorithm and protocol, and the channels on one branch only. */
	const struct ebpf_insn both[] = {
	    ST_MEM(EBPF_DW, 1, T_ALGO, 0), LDX_MEM(EBPF_DW, 2, 1, T_BYTES),
	    JMP_IMM(EBPF_JGT, 2, 4096, 1), ST_MEM(EBPF_W, 1, T_CHAN, 8), RET0};
	CHECK(ebpf_verify(both, INSN_CNT(both), &o, &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(st.ctx_written, algo_word | chan_word);
	const struct ebpf_insn none[] = {RET0};
	CHECK(ebpf_verify(none, INSN_CNT(none), &o, &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(st.ctx_written, 0);
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--write-corpus"))
		return write_corpus(argv[2]);

	uint8_t flags[N_MAPS];
	char err[512];
	int verbose = argc > 1 && !strcmp(argv[1], "-v");
	size_t nr = sizeof(reject_cases) / sizeof(reject_cases[0]);
	size_t na = sizeof(accept_cases) / sizeof(accept_cases[0]);

	ebpf_helpers_set_logger(quiet_log, NULL);
	if (vmaps_create()) {
		fprintf(stderr, "cannot create maps\n");
		return 1;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct vcase *c = &reject_cases[i];
		struct ebpf_verify_stats st;
		int rc = vcase_verify(c, err, sizeof(err), &st, flags, NULL, 0);
		bool ok = rc < 0 && strstr(err, c->expect);

		if (!ok || verbose)
			fprintf(stderr, "%s reject '%s': rc=%d msg=\"%s\" (want \"%s\")\n",
				ok ? "ok  " : "FAIL", c->name, rc, err, c->expect);
		CHECK(ok);
		/* a rejection always says where */
		CHECK(strstr(err, "insn ") != NULL);
	}
	for (size_t i = 0; i < na; i++) {
		const struct vcase *c = &accept_cases[i];
		struct ebpf_verify_stats st;
		int rc = vcase_verify(c, err, sizeof(err), &st, flags, NULL, 0);

		if (rc || verbose)
			fprintf(stderr,
				"%s accept '%s': rc=%d msg=\"%s\" processed=%llu worst=%llu\n",
				rc ? "FAIL" : "ok  ", c->name, rc, err,
				(unsigned long long)st.processed,
				(unsigned long long)st.worst_case_insns);
		CHECK(rc == 0);
		if (!rc && c->worst > 0) {
			if ((int64_t)st.worst_case_insns != c->worst)
				fprintf(stderr, "'%s': worst case %llu, expected %lld\n", c->name,
					(unsigned long long)st.worst_case_insns,
					(long long)c->worst);
			CHECK_EQ_U64(st.worst_case_insns, c->worst);
		}
		if (!rc && c->reads)
			check_reads(c, &st);
		if (!rc)
			run_checked(c);
	}
	check_reads_wide_type();
	check_words();
	check_written();
	printf("%zu rejected cases, %zu accepted cases\n", nr, na);
	vmaps_free();
	return check_summary("test_verifier_table");
}
