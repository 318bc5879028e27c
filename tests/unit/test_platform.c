/* The engine is generic: a host describes its own program type (context layout, fields, one
 * helper of its own) in a platform, and the engine verifies and runs programs of that type with
 * nothing of NCCL's. Also the platform lookups the loader uses (by section, prefix sections, the
 * section list of its messages). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "insn_macros.h"
#include "ebpf/jit.h"
#include "ebpf/exec.h"
#include "ebpf/progtype.h"
#include "ebpf/verifier.h"

/* The toy host's context: two inputs and an output. */
struct toy_ctx {
	uint64_t in;
	uint32_t scale;
	uint32_t pad;
	uint64_t out;
};

#define TOY_MUL 200 /* the toy host's helper id: no engine helper has it */

static uint64_t toy_mul(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return a * b;
}

static const struct ebpf_helper_proto toy_mul_proto = {
    .id = TOY_MUL,
    .name = "toy_mul",
    .fn = toy_mul,
    .ret = EBPF_RET_INTEGER,
    .args = {EBPF_ARG_ANYTHING, EBPF_ARG_ANYTHING},
};

static const struct ebpf_ctx_field toy_fields[] = {
    {"in", offsetof(struct toy_ctx, in), 8, EBPF_CTX_READ},
    {"scale", offsetof(struct toy_ctx, scale), 4, EBPF_CTX_READ},
    {"out", offsetof(struct toy_ctx, out), 8, EBPF_CTX_READ | EBPF_CTX_WRITE},
};

static const struct ebpf_prog_type toy_types[] = {
    {
	.name = "toy",
	.section = "toy",
	.ctx_size = sizeof(struct toy_ctx),
	.fields = toy_fields,
	.n_fields = 3,
	.helper_allow = {[TOY_MUL / 64] = 1ull << (TOY_MUL % 64)},
	.ret_min = 0,
	.ret_max = 1,
	.insn_budget = 64,
    },
    /* the same context without the helper, and a prefix section */
    {
	.name = "toy_plain",
	.section = "toy/plain/",
	.ctx_size = sizeof(struct toy_ctx),
	.fields = toy_fields,
	.n_fields = 3,
	.ret_min = 0,
	.ret_max = 1,
	.insn_budget = 64,
    },
};

static struct ebpf_helper_table toy_helpers;
static const struct ebpf_platform toy = {
    .name = "toy", .types = toy_types, .n_types = 2, .helpers = &toy_helpers};

/* out = in * scale through the host's helper */
static const struct ebpf_insn scale_prog[] = {
    MOV64_REG(6, 1),
    LDX_MEM(EBPF_DW, 1, 6, offsetof(struct toy_ctx, in)),
    LDX_MEM(EBPF_W, 2, 6, offsetof(struct toy_ctx, scale)),
    CALL_HELPER(TOY_MUL),
    STX_MEM(EBPF_DW, 6, 0, offsetof(struct toy_ctx, out)),
    MOV64_IMM(0, 1),
    EXIT(),
};

static int verify(const struct ebpf_insn *p, uint32_t n, const struct ebpf_prog_type *t,
		  struct ebpf_verify_stats *st, char *err, size_t len)
{
	struct ebpf_verify_opts o = {.sz = sizeof(o), .type = t, .helpers = toy.helpers};
	return ebpf_verify(p, n, &o, st, err, len);
}

static void test_verify_and_run(void)
{
	const struct ebpf_prog_type *t = ebpf_platform_type_by_section(&toy, "toy");
	struct ebpf_verify_stats st;
	char err[512] = "";
	int rc;

	CHECK(t == &toy_types[0]);
	rc = verify(scale_prog, INSN_CNT(scale_prog), t, &st, err, sizeof(err));
	CHECKF(rc == 0, "%s", err);
	/* what it reads, in the toy's own field numbering */
	CHECK_EQ_U64(st.ctx_read,
		     ebpf_prog_type_field_bit(t, "in") | ebpf_prog_type_field_bit(t, "scale"));

	struct ebpf_exec_opts po = {.sz = sizeof(po), .helpers = toy.helpers};
	struct ebpf_exec *prog =
	    ebpf_exec__new(scale_prog, INSN_CNT(scale_prog), &po, err, sizeof(err));
	CHECKF(prog != NULL, "%s", err);
	if (!prog)
		return;
	int engines = 1;
	if (ebpf_jit_available()) {
		CHECK(ebpf_exec__jit(prog, NULL, err, sizeof(err)) == 0);
		engines = 2;
	}
	for (int e = 0; e < engines; e++) {
		struct toy_ctx c = {.in = 7, .scale = 6};
		uint64_t r0 = 0;
		CHECK(ebpf_exec__run(prog, e ? EBPF_ENGINE_JIT : EBPF_ENGINE_INTERP,
				     (uint64_t)(uintptr_t)&c, 0, NULL, &r0) == 0);
		CHECK_EQ_U64(r0, 1);
		CHECK_EQ_U64(c.out, 42);
	}
	ebpf_exec__free(prog);
}

static void reject(const char *what, const struct ebpf_insn *p, uint32_t n,
		   const struct ebpf_prog_type *t, const char *want)
{
	char err[512] = "";
	int rc = verify(p, n, t, NULL, err, sizeof(err));

	CHECKF(rc < 0 && strstr(err, want), "%s: rc %d, '%s' lacks '%s'", what, rc, err, want);
}

static void test_rules_are_the_toys(void)
{
	static const struct ebpf_insn write_in[] = {
	    ST_MEM(EBPF_DW, 1, offsetof(struct toy_ctx, in), 1), MOV64_IMM(0, 0), EXIT()};
	static const struct ebpf_insn read_past[] = {LDX_MEM(EBPF_DW, 0, 1, sizeof(struct toy_ctx)),
						     MOV64_IMM(0, 0), EXIT()};
	static const struct ebpf_insn ret_2[] = {MOV64_IMM(0, 2), EXIT()};

	/* the helper is the toy type's, not toy_plain's */
	reject("helper outside the allow-list", scale_prog, INSN_CNT(scale_prog), &toy_types[1],
	       "toy_mul");
	reject("write to an input", write_in, INSN_CNT(write_in), &toy_types[0],
	       "read-only context field `in`");
	reject("read past the context", read_past, INSN_CNT(read_past), &toy_types[0],
	       "past the end of the context");
	reject("return value outside the type's range", ret_2, INSN_CNT(ret_2), &toy_types[0],
	       "should have been in [0, 1]");
}

static void test_lookups(void)
{
	char buf[128];

	CHECK(ebpf_platform_type_by_name(&toy, "toy_plain") == &toy_types[1]);
	CHECK(ebpf_platform_type_by_section(&toy, "toy/plain/x") == &toy_types[1]);
	CHECK(ebpf_platform_type_by_section(&toy, "toy/plain/") == NULL); /* prefix needs a name */
	CHECK(ebpf_platform_type_by_section(&toy, "tuner") == NULL);	  /* NCCL's: not here */
	CHECK(ebpf_platform_type_by_section(NULL, "toy") == NULL);
	ebpf_platform_sections(&toy, buf, sizeof(buf));
	CHECKF(strcmp(buf, "toy, toy/plain/<name>") == 0, "%s", buf);
	ebpf_platform_sections(NULL, buf, sizeof(buf));
	CHECKF(strcmp(buf, "none") == 0, "%s", buf);
}

int main(void)
{
	toy_helpers.by_id[TOY_MUL] = &toy_mul_proto;
	test_verify_and_run();
	test_rules_are_the_toys();
	test_lookups();
	return check_summary("platform");
}
