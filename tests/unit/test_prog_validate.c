/* ebpf_exec__new's structural validation: every opcode byte accepted exactly when RFC 9669
 * (v1-v4) defines it, and each rejection gives its one-line message naming the instruction. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "insn_macros.h"
#include "ebpf/exec.h"

static uint64_t h_zero(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return 0;
}
static const struct ebpf_helper_proto h0 = {.id = 0, .name = "h0", .fn = h_zero};
static const struct ebpf_helper_proto h5 = {.id = 5, .name = "h5", .fn = h_zero};
static struct ebpf_helper_table table;

static struct ebpf_exec *load(const struct ebpf_insn *p, uint32_t n, uint32_t n_maps, char *err,
			      size_t len)
{
	static struct ebpf_map *no_maps[4];
	struct ebpf_exec_opts o = {
	    .sz = sizeof(o), .helpers = &table, .maps = no_maps, .n_maps = n_maps};
	return ebpf_exec__new(p, n, &o, err, len);
}

/* Expects rejection with a message starting "insn <pc>: " and containing want. */
static void reject(const char *what, const struct ebpf_insn *p, uint32_t n, int pc,
		   const char *want)
{
	char err[256] = "", prefix[32];
	struct ebpf_exec *prog = load(p, n, 0, err, sizeof(err));

	CHECK(prog == NULL);
	ebpf_exec__free(prog);
	if (pc >= 0) {
		snprintf(prefix, sizeof(prefix), "insn %d: ", pc);
		if (strncmp(err, prefix, strlen(prefix)) != 0)
			fprintf(stderr, "%s: message '%s' does not start with '%s'\n", what, err,
				prefix);
		CHECK(strncmp(err, prefix, strlen(prefix)) == 0);
	}
	if (!strstr(err, want))
		fprintf(stderr, "%s: message '%s' lacks '%s'\n", what, err, want);
	CHECK(strstr(err, want) != NULL);
	CHECK(strchr(err, '\n') == NULL);
}

#define REJECT(what, pc, want, ...)                                                                \
	do {                                                                                       \
		struct ebpf_insn _p[] = {__VA_ARGS__};                                             \
		reject(what, _p, INSN_CNT(_p), pc, want);                                          \
	} while (0)

static void accept(const char *what, const struct ebpf_insn *p, uint32_t n)
{
	char err[256] = "";
	struct ebpf_exec *prog = load(p, n, 0, err, sizeof(err));

	if (!prog)
		fprintf(stderr, "%s: rejected: %s\n", what, err);
	CHECK(prog != NULL);
	if (prog) {
		CHECK_EQ_U64(ebpf_exec__insn_cnt(prog), n);
		CHECK(memcmp(ebpf_exec__insns(prog), p, n * sizeof(*p)) == 0);
	}
	ebpf_exec__free(prog);
}

/* The RFC's opcode list, written independently of exec.c. */
static int rfc_defines(uint8_t code)
{
	uint8_t cls = code & 7, op = code & 0xf0, x = code & 8, mode = code & 0xe0,
		size = code & 0x18;

	switch (cls) {
	case EBPF_ALU:
	case EBPF_ALU64:
		if (op == EBPF_NEG)
			return !x;
		if (op == EBPF_END)
			return cls == EBPF_ALU || !x;
		return op <= EBPF_ARSH;
	case EBPF_JMP:
		if (op == EBPF_JA || op == EBPF_CALL || op == EBPF_EXIT)
			return !x;
		return op <= EBPF_JSLE;
	case EBPF_JMP32:
		if (op == EBPF_JA)
			return !x;
		if (op == EBPF_CALL || op == EBPF_EXIT)
			return 0;
		return op <= EBPF_JSLE;
	case EBPF_LD:
		return code == 0x18;
	case EBPF_LDX:
		return mode == EBPF_MEM || (mode == EBPF_MEMSX && size != EBPF_DW);
	case EBPF_ST:
		return mode == EBPF_MEM;
	default: /* STX */
		return mode == EBPF_MEM ||
		       (mode == EBPF_ATOMIC && (size == EBPF_W || size == EBPF_DW));
	}
}

static void test_all_opcodes(void)
{
	int c, n_ok = 0;

	for (c = 0; c < 256; c++) {
		uint8_t code = (uint8_t)c;
		int x = (code & 8) && (code & 7) != EBPF_LD && (code & 7) != EBPF_LDX &&
			(code & 7) != EBPF_ST && (code & 7) != EBPF_STX;
		struct ebpf_insn p[3] = {
		    INSN(code, 1, x ? 2 : 0, 0, 0),
		    EXIT(),
		    EXIT(),
		};
		char err[256] = "";
		struct ebpf_exec *prog;

		if ((code & 7) == EBPF_LDX || (code & 7) == EBPF_STX)
			p[0].src_reg = 2;
		if ((code & 0xf0) == EBPF_END &&
		    ((code & 7) == EBPF_ALU || (code & 7) == EBPF_ALU64))
			p[0].imm = 16, p[0].src_reg = 0; /* the X bit means big-endian here */
		if (code == (EBPF_JMP | EBPF_JA) || code == (EBPF_JMP32 | EBPF_JA) ||
		    code == (EBPF_JMP | EBPF_EXIT) || code == (EBPF_JMP | EBPF_CALL))
			p[0].dst_reg = 0;
		if (code == 0x18)
			p[1] = INSN(0, 0, 0, 0, 0);
		prog = load(p, 3, 0, err, sizeof(err));
		if (!!prog != rfc_defines(code))
			fprintf(stderr, "opcode 0x%02x: %s (%s)\n", code,
				prog ? "accepted but undefined" : "rejected but defined", err);
		CHECK(!!prog == rfc_defines(code));
		if (!prog && strstr(err, "insn 0: ") != err)
			fprintf(stderr, "opcode 0x%02x: message '%s' does not name insn 0\n", code,
				err);
		if (!prog)
			CHECK(strstr(err, "insn 0: ") == err);
		n_ok += !!prog;
		ebpf_exec__free(prog);
	}
	/* ALU 2*(13*2 - 1 + 2) - 1 (no bswap X) + JMP (1+11*2+2) + JMP32 (1+11*2) + LD 1 +
	 * LDX 7 + ST 4 + STX 6 */
	CHECK_EQ_U64(n_ok, 53 + 25 + 23 + 1 + 7 + 4 + 6);
}

static void test_messages(void)
{
	char err[128];

	CHECK(ebpf_exec__new(NULL, 0, NULL, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "empty program") != NULL);

	/* unknown opcodes and undefined variants */
	REJECT("alu op 0xe0", 0, "unknown opcode 0xe7", INSN(0xe7, 1, 0, 0, 0), EXIT());
	REJECT("bswap reg", 0, "unknown opcode 0xdf", INSN(0xdf, 1, 0, 0, 16), EXIT());
	REJECT("neg reg", 0, "unknown opcode 0x8f", INSN(0x8f, 1, 2, 0, 0), EXIT());
	REJECT("neg imm", 0, "neg uses reserved field imm=1", INSN(0x87, 1, 0, 0, 1), EXIT());
	REJECT("jmp32 call", 0, "unknown opcode 0x86", INSN(0x86, 0, 0, 0, 0), EXIT());
	REJECT("jmp32 exit", 0, "unknown opcode 0x96", INSN(0x96, 0, 0, 0, 0), EXIT());
	REJECT("jmp op 0xe0", 0, "unknown opcode 0xe5", INSN(0xe5, 1, 0, 0, 0), EXIT());
	REJECT("ja reg", 0, "unknown opcode 0x0d", INSN(0x0d, 0, 0, 0, 0), EXIT());
	REJECT("ldxsx dw", 0, "unknown opcode 0x99", INSN(0x99, 1, 2, 0, 0), EXIT());
	REJECT("atomic byte", 0, "unknown opcode 0xd3", INSN(0xd3, 1, 2, 0, 0), EXIT());
	REJECT("st atomic", 0, "unknown opcode 0xc2", INSN(0xc2, 1, 0, 0, 0), EXIT());
	REJECT("ld w imm", 0, "unknown opcode 0x00", INSN(0x00, 1, 0, 0, 0), EXIT());
	REJECT("ld abs", 0, "LD_ABS/LD_IND", INSN(0x20, 0, 0, 0, 0), EXIT());
	REJECT("ld ind", 0, "LD_ABS/LD_IND", INSN(0x40, 0, 1, 0, 0), EXIT());
	/* bad off for signed div/mod and movsx, bad imm for byte swaps and atomics */
	REJECT("sdiv off 2", 0, "div: invalid offset 2", INSN(0x3f, 1, 2, 2, 0), EXIT());
	REJECT("smod off -1", 0, "mod32: invalid offset -1", INSN(0x94, 1, 0, -1, 3), EXIT());
	REJECT("movsx 7", 0, "invalid sign-extension width 7", INSN(0xbf, 1, 2, 7, 0), EXIT());
	REJECT("movsx32 32", 0, "mov32: invalid sign-extension width 32", INSN(0xbc, 1, 2, 32, 0),
	       EXIT());
	REJECT("mov imm off", 0, "mov uses reserved field off=8", INSN(0xb7, 1, 0, 8, 0), EXIT());
	REJECT("end 8", 0, "invalid byte swap width 8", ENDIAN_BE(1, 8), EXIT());
	REJECT("bswap 0", 0, "invalid byte swap width 0", BSWAP(1, 0), EXIT());
	REJECT("atomic 0x02", 0, "unknown atomic operation 0x2", ATOMIC_OP(EBPF_DW, 0x02, 1, 2, 0),
	       EXIT());
	REJECT("xchg no fetch", 0, "unknown atomic operation 0xe0",
	       ATOMIC_OP(EBPF_W, 0xe0, 1, 2, 0), EXIT());
	REJECT("cmpxchg no fetch", 0, "unknown atomic operation 0xf0",
	       ATOMIC_OP(EBPF_DW, 0xf0, 1, 2, 0), EXIT());
	/* reserved fields */
	REJECT("alu x imm", 0, "reserved field imm=1", INSN(0x0f, 1, 2, 0, 1), EXIT());
	REJECT("alu k src", 0, "reserved field src_reg=2", INSN(0x07, 1, 2, 0, 1), EXIT());
	REJECT("alu off", 0, "reserved field off=3", INSN(0x07, 1, 0, 3, 1), EXIT());
	REJECT("end src", 0, "le uses reserved field src_reg=1", INSN(0xd4, 1, 1, 0, 16), EXIT());
	REJECT("ldx imm", 0, "ldxdw uses reserved field imm=4", INSN(0x79, 1, 2, 0, 4), EXIT());
	REJECT("st src", 0, "reserved field src_reg=1", INSN(0x7a, 1, 1, 0, 4), EXIT());
	REJECT("stx imm", 0, "stxdw uses reserved field imm=5", INSN(0x7b, 1, 2, 0, 5), EXIT());
	REJECT("ja imm", 0, "ja uses reserved field imm=1", INSN(0x05, 0, 0, 0, 1), EXIT());
	REJECT("ja dst", 0, "ja uses reserved field dst_reg=1", INSN(0x05, 1, 0, 0, 0), EXIT());
	REJECT("gotol off", 0, "gotol uses reserved field off=1", INSN(0x06, 0, 0, 1, 0), EXIT());
	REJECT("jmp k src", 0, "reserved field src_reg=3", INSN(0x15, 1, 3, 0, 0), EXIT());
	REJECT("jmp x imm", 0, "reserved field imm=6", INSN(0x1d, 1, 3, 0, 6), EXIT());
	REJECT("exit imm", 1, "exit uses reserved field imm=1", MOV64_IMM(0, 0),
	       INSN(0x95, 0, 0, 0, 1));
	REJECT("call off", 0, "call uses reserved field off=1", INSN(0x85, 0, 0, 1, 0), EXIT());
	REJECT("call src 3", 0, "call: unknown src_reg 3", INSN(0x85, 0, 3, 0, 0), EXIT());
	REJECT("lddw off", 0, "reserved field off=1", INSN(0x18, 1, 0, 1, 0), INSN(0, 0, 0, 0, 0),
	       EXIT());
	REJECT("lddw tail code", 0, "lddw: second half uses reserved fields",
	       INSN(0x18, 1, 0, 0, 0), INSN(0x18, 0, 0, 0, 0), EXIT());
	REJECT("lddw tail dst", 0, "lddw: second half uses reserved fields", INSN(0x18, 1, 0, 0, 0),
	       INSN(0, 1, 0, 0, 0), EXIT());
	REJECT("lddw src 3", 0, "lddw: unknown src_reg 3", LD_IMM64_RAW(1, 3, 0), EXIT());
	REJECT("lddw func", 0, "function pointers", LD_IMM64_RAW(1, EBPF_PSEUDO_FUNC, 0), EXIT());
	/* registers */
	REJECT("dst r11", 1, "invalid register r11", MOV64_IMM(0, 0), MOV64_IMM(11, 0), EXIT());
	REJECT("src r12", 0, "invalid register r12", MOV64_REG(0, 12), EXIT());
	REJECT("ldx src r15", 0, "invalid register r15", LDX_MEM(EBPF_DW, 0, 15, 0), EXIT());
	REJECT("mov r10", 0, "frame pointer r10 is read only", MOV64_IMM(10, 0), EXIT());
	REJECT("add32 r10", 0, "frame pointer r10 is read only", ALU32_IMM(EBPF_ADD, 10, 1),
	       EXIT());
	REJECT("ldx r10", 0, "frame pointer r10 is read only", LDX_MEM(EBPF_DW, 10, 1, 0), EXIT());
	REJECT("lddw r10", 0, "frame pointer r10 is read only", LD_IMM64(10, 5), EXIT());
	REJECT("fetch r10", 0, "atomic64: frame pointer r10 is read only",
	       ATOMIC_OP(EBPF_DW, EBPF_ATOMIC_ADD | EBPF_FETCH, 1, 10, 0), EXIT());
	/* jump targets */
	REJECT("ja fwd", 0, "jump out of range (target 6, program has 2 insns)", JA(5), EXIT());
	REJECT("ja back", 1, "jump out of range (target -1", MOV64_IMM(0, 0), JA(-3), EXIT());
	REJECT("jeq", 0, "jump out of range", JMP_IMM(EBPF_JEQ, 1, 0, 2), EXIT());
	REJECT("gotol", 0, "jump out of range (target 100001", JA32(100000), EXIT());
	REJECT("jmp into lddw", 0, "jump into the middle of a 64-bit immediate load (target 2)",
	       JMP_IMM(EBPF_JEQ, 1, 0, 1), LD_IMM64(0, 1), EXIT());
	REJECT("ja into lddw", 3, "into the middle of a 64-bit immediate load", LD_IMM64(0, 1),
	       MOV64_IMM(1, 0), JA(-3), EXIT());
	REJECT("truncated lddw", 1, "truncated 64-bit immediate load", MOV64_IMM(0, 0),
	       INSN(0x18, 0, 0, 0, 0));
	/* calls */
	REJECT("unknown helper", 0, "call to unknown helper 7", CALL_HELPER(7), EXIT());
	REJECT("helper 256", 0, "call to unknown helper 256", CALL_HELPER(256), EXIT());
	REJECT("helper -1", 0, "call to unknown helper -1", CALL_HELPER(-1), EXIT());
	REJECT("local call fwd", 0, "call out of range (target 10", CALL_LOCAL(9), EXIT());
	REJECT("local call back", 1, "call out of range (target -1", MOV64_IMM(0, 0),
	       CALL_LOCAL(-3), EXIT());
	REJECT("local call into lddw", 0, "call into the middle", CALL_LOCAL(1), LD_IMM64(0, 1),
	       EXIT());
	REJECT("kfunc", 0, "kfunc calls are not supported", INSN(0x85, 0, EBPF_PSEUDO_KFUNC, 0, 1),
	       EXIT());
	/* maps: index beyond the program's table */
	REJECT("map fd idx", 0, "map index 0 out of range (program has 0 maps)", LD_MAP_FD(1, 0),
	       EXIT());
	REJECT("map value idx", 0, "map index 3 out of range", LD_MAP_VALUE(1, 3, 0), EXIT());
	REJECT("map fd tail imm", 0, "map reference uses reserved field imm=4 in its second half",
	       LD_IMM64_RAW(1, 1, 4ull << 32), EXIT());
	/* the end */
	REJECT("fall off", 1, "last instruction must be exit or ja", MOV64_IMM(0, 0),
	       MOV64_IMM(0, 1));
	REJECT("fall off jeq", 1, "last instruction must be exit or ja", MOV64_IMM(0, 0),
	       JMP_IMM(EBPF_JEQ, 0, 0, -2));
	REJECT("fall off call", 1, "last instruction must be exit or ja", MOV64_IMM(0, 0),
	       CALL_HELPER(0));
	REJECT("fall off lddw", 2, "last instruction must be exit or ja", MOV64_IMM(0, 0),
	       LD_IMM64(0, 0));
}

static void test_accepts(void)
{
	struct ebpf_insn a[] = {MOV64_IMM(0, 0), EXIT()};
	struct ebpf_insn b[] = {MOV64_IMM(0, 0), JA(-2)};		 /* ends in ja */
	struct ebpf_insn c[] = {MOV64_IMM(0, 0), JA32(-2)};		 /* ends in gotol */
	struct ebpf_insn d[] = {CALL_HELPER(5), CALL_HELPER(0), EXIT()}; /* known helpers */
	struct ebpf_insn e[] = {CALL_LOCAL(1), EXIT(), MOV64_IMM(0, 1), EXIT()};
	struct ebpf_insn f[] = {JA(2), LD_IMM64(0, 1), EXIT()}; /* jump to lddw start ok */
	struct ebpf_insn g[] = {LD_IMM64_RAW(1, 0, 0xffffffff12345678ull), EXIT()};
	struct ebpf_insn h[] = {SALU64_REG(EBPF_DIV, 1, 2),
				SALU32_IMM(EBPF_MOD, 1, 3),
				MOVSX64_REG(1, 2, 32),
				MOVSX32_REG(1, 2, 16),
				BSWAP(3, 64),
				ENDIAN_LE(3, 32),
				EXIT()};
	struct ebpf_insn i[] = {STX_MEM(EBPF_DW, 10, 1, -8),
				ATOMIC_OP(EBPF_W, EBPF_CMPXCHG, 10, 1, -8),
				ATOMIC_OP(EBPF_DW, EBPF_XCHG, 1, 2, 0), EXIT()};
	char err[128];
	struct ebpf_exec *p;

	accept("exit", a, INSN_CNT(a));
	accept("ja last", b, INSN_CNT(b));
	accept("gotol last", c, INSN_CNT(c));
	accept("helpers", d, INSN_CNT(d));
	accept("local call", e, INSN_CNT(e));
	accept("jump to lddw", f, INSN_CNT(f));
	accept("lddw", g, INSN_CNT(g));
	accept("v4 alu", h, INSN_CNT(h));
	accept("atomics", i, INSN_CNT(i));

	/* name, and options smaller than today's struct (older callers) */
	p = ebpf_exec__new(
	    a, 2, &(struct ebpf_exec_opts){.sz = sizeof(size_t) + sizeof(char *), .name = "short"},
	    err, sizeof(err));
	CHECK(p != NULL);
	if (p)
		CHECK(strcmp(ebpf_exec__name(p), "short") == 0);
	ebpf_exec__free(p);
	/* without helpers every helper call is unknown */
	p = ebpf_exec__new(d, 3, NULL, err, sizeof(err));
	CHECK(p == NULL);
	CHECK(strstr(err, "insn 0: call to unknown helper 5") != NULL);
	/* err may be NULL */
	CHECK(ebpf_exec__new(d, 3, NULL, NULL, 0) == NULL);
}

int main(void)
{
	table.by_id[0] = &h0;
	table.by_id[5] = &h5;
	test_all_opcodes();
	test_messages();
	test_accepts();
	return check_summary("prog_validate");
}
