/* Disassembler: a hand-checked table (every instruction family, incl. the v4 forms llvm 14 can't
 * print) and, when llvm-mc/llvm-objdump are installed, a differential run over every opcode with
 * several field patterns: our text must equal llvm-objdump's wherever llvm decodes the
 * instruction. The whole-object comparison lives in tests/cli (disasm_llvm.sh). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebpf/disasm.h"
#include "ebpf/exec.h"
#include "check.h"

#define I(c, d, s, o, i)                                                                           \
	{                                                                                          \
		.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)                \
	}

struct tcase {
	struct ebpf_insn insn[2];
	int n;
	const char *want; /* NULL: must be rejected */
};

static const struct tcase table[] = {
    /* ALU64 / ALU32, K and X */
    {{I(0x07, 1, 0, 0, 5)}, 1, "r1 += 5"},
    {{I(0x0f, 1, 2, 0, 0)}, 1, "r1 += r2"},
    {{I(0x04, 0, 0, 0, -1)}, 1, "w0 += -1"},
    {{I(0x0c, 0, 1, 0, 0)}, 1, "w0 += w1"},
    {{I(0x1f, 3, 4, 0, 0)}, 1, "r3 -= r4"},
    {{I(0x27, 3, 0, 0, 7)}, 1, "r3 *= 7"},
    {{I(0x37, 3, 0, 0, 7)}, 1, "r3 /= 7"},
    {{I(0x37, 3, 0, 1, -7)}, 1, "r3 s/= -7"},
    {{I(0x3f, 0, 1, 1, 0)}, 1, "r0 s/= r1"},
    {{I(0x3c, 0, 1, 1, 0)}, 1, "w0 s/= w1"},
    {{I(0x3f, 0, 1, 2, 0)}, 1, NULL},
    {{I(0x4f, 0, 1, 0, 0)}, 1, "r0 |= r1"},
    {{I(0x54, 0, 0, 0, 255)}, 1, "w0 &= 255"},
    {{I(0x67, 0, 0, 0, 63)}, 1, "r0 <<= 63"},
    {{I(0x7c, 0, 1, 0, 0)}, 1, "w0 >>= w1"},
    {{I(0x87, 2, 0, 0, 0)}, 1, "r2 = -r2"},
    {{I(0x84, 2, 0, 0, 0)}, 1, "w2 = -w2"},
    {{I(0x97, 0, 0, 0, 3)}, 1, "r0 %= 3"},
    {{I(0x9f, 0, 1, 0, 0)}, 1, "r0 %= r1"},
    {{I(0x9f, 0, 1, 1, 0)}, 1, "r0 s%= r1"},
    {{I(0x94, 0, 0, 1, -3)}, 1, "w0 s%= -3"},
    {{I(0xa7, 0, 0, 0, -1)}, 1, "r0 ^= -1"},
    {{I(0xb7, 1, 0, 0, -1)}, 1, "r1 = -1"},
    {{I(0xb4, 1, 0, 0, 42)}, 1, "w1 = 42"},
    {{I(0xbf, 1, 10, 0, 0)}, 1, "r1 = r10"},
    {{I(0xbc, 1, 2, 0, 0)}, 1, "w1 = w2"},
    {{I(0xbf, 0, 1, 8, 0)}, 1, "r0 = (s8)r1"},
    {{I(0xbf, 0, 1, 16, 0)}, 1, "r0 = (s16)r1"},
    {{I(0xbf, 0, 1, 32, 0)}, 1, "r0 = (s32)r1"},
    {{I(0xbc, 0, 1, 8, 0)}, 1, "w0 = (s8)w1"},
    {{I(0xbc, 0, 1, 16, 0)}, 1, "w0 = (s16)w1"},
    {{I(0xbc, 0, 1, 32, 0)}, 1, NULL},
    {{I(0xbf, 0, 1, 24, 0)}, 1, NULL},
    {{I(0xb7, 0, 0, 8, 1)}, 1, NULL},
    {{I(0xc7, 0, 0, 0, 1)}, 1, "r0 s>>= 1"},
    {{I(0xcc, 0, 1, 0, 0)}, 1, "w0 s>>= w1"},
    {{I(0xd4, 0, 0, 0, 16)}, 1, "r0 = le16 r0"},
    {{I(0xdc, 0, 0, 0, 16)}, 1, "r0 = be16 r0"},
    {{I(0xdc, 5, 0, 0, 64)}, 1, "r5 = be64 r5"},
    {{I(0xd7, 0, 0, 0, 32)}, 1, "r0 = bswap32 r0"},
    {{I(0xd7, 0, 0, 0, 24)}, 1, NULL},
    {{I(0xdf, 0, 0, 0, 32)}, 1, NULL},
    {{I(0xe7, 0, 0, 0, 0)}, 1, NULL},
    {{I(0xf4, 0, 0, 0, 0)}, 1, NULL},
    /* jumps */
    {{I(0x05, 0, 0, 3, 0)}, 1, "goto +3"},
    {{I(0x05, 0, 0, -1, 0)}, 1, "goto -1"},
    {{I(0x06, 0, 0, 0, 70000)}, 1, "gotol +70000"},
    {{I(0x06, 0, 0, 0, -2)}, 1, "gotol -2"},
    {{I(0x0d, 0, 0, 0, 0)}, 1, NULL},
    {{I(0x15, 1, 0, 3, 0)}, 1, "if r1 == 0 goto +3"},
    {{I(0x65, 1, 0, 3, 5)}, 1, "if r1 s> 5 goto +3"},
    {{I(0x6d, 1, 2, -3, 0)}, 1, "if r1 s> r2 goto -3"},
    {{I(0x45, 1, 0, 1, 4)}, 1, "if r1 & 4 goto +1"},
    {{I(0x4d, 1, 2, 1, 0)}, 1, "if r1 & r2 goto +1"},
    {{I(0x4e, 1, 2, 1, 0)}, 1, "if w1 & w2 goto +1"},
    {{I(0x56, 1, 0, 0, -1)}, 1, "if w1 != -1 goto +0"},
    {{I(0xae, 3, 4, 2, 0)}, 1, "if w3 < w4 goto +2"},
    {{I(0xd5, 3, 0, 2, -9)}, 1, "if r3 s<= -9 goto +2"},
    {{I(0xe5, 3, 0, 2, 0)}, 1, NULL},
    {{I(0x85, 0, 0, 0, 1)}, 1, "call 1"},
    {{I(0x85, 0, 1, 0, -3)}, 1, "call -3"},
    {{I(0x86, 0, 0, 0, 1)}, 1, NULL},
    {{I(0x8d, 0, 0, 0, 1)}, 1, NULL},
    {{I(0x95, 0, 0, 0, 0)}, 1, "exit"},
    {{I(0x96, 0, 0, 0, 0)}, 1, NULL},
    /* loads and stores */
    {{I(0x61, 0, 1, 4, 0)}, 1, "r0 = *(u32 *)(r1 + 4)"},
    {{I(0x79, 0, 10, -8, 0)}, 1, "r0 = *(u64 *)(r10 - 8)"},
    {{I(0x71, 0, 1, 0, 0)}, 1, "r0 = *(u8 *)(r1 + 0)"},
    {{I(0x69, 0, 1, -32768, 0)}, 1, "r0 = *(u16 *)(r1 - 32768)"},
    {{I(0x91, 0, 1, 1, 0)}, 1, "r0 = *(s8 *)(r1 + 1)"},
    {{I(0x89, 0, 1, 2, 0)}, 1, "r0 = *(s16 *)(r1 + 2)"},
    {{I(0x81, 0, 1, 4, 0)}, 1, "r0 = *(s32 *)(r1 + 4)"},
    {{I(0x99, 0, 1, 4, 0)}, 1, NULL},
    {{I(0x63, 10, 1, -4, 0)}, 1, "*(u32 *)(r10 - 4) = r1"},
    {{I(0x7b, 10, 1, -8, 0)}, 1, "*(u64 *)(r10 - 8) = r1"},
    {{I(0x72, 10, 0, -1, 5)}, 1, "*(u8 *)(r10 - 1) = 5"},
    {{I(0x7a, 10, 0, -8, -1)}, 1, "*(u64 *)(r10 - 8) = -1"},
    {{I(0x6a, 1, 0, 2, 7)}, 1, "*(u16 *)(r1 + 2) = 7"},
    {{I(0x82, 1, 0, 2, 7)}, 1, NULL},
    {{I(0x20, 0, 0, 0, 4)}, 1, "r0 = *(u32 *)skb[4]"},
    {{I(0x50, 0, 3, 0, 0)}, 1, "r0 = *(u8 *)skb[r3]"},
    {{I(0x38, 0, 0, 0, 4)}, 1, NULL},
    {{I(0x00, 0, 0, 0, 4)}, 1, NULL},
    /* 64-bit immediates */
    {{I(0x18, 1, 0, 0, 0x34567890), I(0, 0, 0, 0, 0x12)}, 2, "r1 = 78187493520 ll"},
    {{I(0x18, 1, 0, 0, -1), I(0, 0, 0, 0, -1)}, 2, "r1 = -1 ll"},
    {{I(0x18, 1, 0, 0, -5), I(0, 0, 0, 0, 0)}, 2, "r1 = 4294967291 ll"},
    {{I(0x18, 1, 1, 0, 3), I(0, 0, 0, 0, 0)}, 2, "r1 = map[3] ll"},
    {{I(0x18, 2, 2, 0, 3), I(0, 0, 0, 0, 16)}, 2, "r2 = map_value[3] + 16 ll"},
    {{I(0x18, 2, 4, 0, 5), I(0, 0, 0, 0, 0)}, 2, "r2 = func[+5] ll"},
    {{I(0x18, 1, 0, 0, 1)}, 1, NULL}, /* truncated */
    /* atomics */
    {{I(0xdb, 1, 2, 0, 0x00)}, 1, "lock *(u64 *)(r1 + 0) += r2"},
    {{I(0xc3, 1, 2, -8, 0x00)}, 1, "lock *(u32 *)(r1 - 8) += r2"},
    {{I(0xdb, 1, 2, 0, 0x40)}, 1, "lock *(u64 *)(r1 + 0) |= r2"},
    {{I(0xc3, 1, 2, 0, 0x50)}, 1, "lock *(u32 *)(r1 + 0) &= r2"},
    {{I(0xdb, 1, 2, 0, 0xa0)}, 1, "lock *(u64 *)(r1 + 0) ^= r2"},
    {{I(0xdb, 1, 0, 0, 0x01)}, 1, "r0 = atomic_fetch_add((u64 *)(r1 + 0), r0)"},
    {{I(0xc3, 1, 2, 4, 0x41)}, 1, "w2 = atomic_fetch_or((u32 *)(r1 + 4), w2)"},
    {{I(0xdb, 1, 2, 0, 0x51)}, 1, "r2 = atomic_fetch_and((u64 *)(r1 + 0), r2)"},
    {{I(0xc3, 1, 2, 0, 0xa1)}, 1, "w2 = atomic_fetch_xor((u32 *)(r1 + 0), w2)"},
    {{I(0xdb, 1, 2, 0, 0xe1)}, 1, "r2 = xchg_64(r1 + 0, r2)"},
    {{I(0xc3, 1, 2, 0, 0xe1)}, 1, "w2 = xchg32_32(r1 + 0, w2)"},
    {{I(0xdb, 1, 2, -16, 0xf1)}, 1, "r0 = cmpxchg_64(r1 - 16, r0, r2)"},
    {{I(0xc3, 1, 2, 0, 0xf1)}, 1, "w0 = cmpxchg32_32(r1 + 0, w0, w2)"},
    {{I(0xdb, 1, 2, 0, 0x10)}, 1, NULL},
    {{I(0xdb, 1, 2, 0, 0xe0)}, 1, NULL},
    {{I(0xd3, 1, 2, 0, 0x00)}, 1, NULL},
};

static void test_table(void)
{
	char buf[128];

	for (size_t k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
		const struct tcase *t = &table[k];
		int r = ebpf_disasm_insn(t->insn, (size_t)t->n, 0, buf, sizeof(buf));

		if (t->want) {
			CHECK(r == t->n);
			if (strcmp(buf, t->want)) {
				fprintf(stderr, "case %zu: got '%s' want '%s'\n", k, buf, t->want);
				CHECK(!"text");
			}
		} else {
			CHECK(r == 0);
			CHECK(!strncmp(buf, "invalid insn", 12));
		}
	}
}

static uint64_t ret_map_lookup(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return a + b + c + d + e;
}

static void test_edges(void)
{
	struct ebpf_insn p[2] = {I(0x85, 0, 0, 0, 1), I(0x95, 0, 0, 0, 0)};
	char buf[64], tiny[6];
	static const struct ebpf_helper_proto lookup = {
	    .id = 1, .name = "bpf_map_lookup_elem", .fn = ret_map_lookup};
	static struct ebpf_helper_table helpers;
	struct ebpf_disasm_opts opts = {.sz = sizeof(opts), .helpers = &helpers};

	helpers.by_id[1] = &lookup;
	CHECK(ebpf_disasm_insn_opts(p, 2, 0, buf, sizeof(buf), &opts) == 1);
	CHECK(!strcmp(buf, "call bpf_map_lookup_elem#1"));
	p[0].imm = 2;
	CHECK(ebpf_disasm_insn_opts(p, 2, 0, buf, sizeof(buf), &opts) == 1);
	CHECK(!strcmp(buf, "call 2"));
	/* truncation keeps a terminated prefix; NULL/0 buffers are allowed */
	CHECK(ebpf_disasm_insn(p, 2, 0, tiny, sizeof(tiny)) == 1);
	CHECK(!strcmp(tiny, "call "));
	CHECK(ebpf_disasm_insn(p, 2, 1, NULL, 0) == 1);
	CHECK(ebpf_disasm_insn(p, 2, 2, buf, sizeof(buf)) == 0);
	CHECK(ebpf_disasm_insn(NULL, 0, 0, buf, sizeof(buf)) == 0);
}

/* --- differential against llvm-objdump ---------------------------------------------------- */

#define MAXN 8192

static int have_tool(const char *t)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", t);
	return system(cmd) == 0;
}

/* Reads "  N:\t<text>" lines of llvm-objdump into out[N] (without a " <sym+off>" suffix). */
static int run_objdump(const char *obj, const char *mattr, char (*out)[96], size_t n)
{
	char cmd[512], line[512];
	FILE *f;
	int got = 0;

	snprintf(cmd, sizeof(cmd), "llvm-objdump -d --no-show-raw-insn %s %s", mattr, obj);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon, *end, *text;
		unsigned long idx = strtoul(line, &end, 10);

		if (end == line || *end != ':' || idx >= n)
			continue;
		colon = end;
		text = colon + 1;
		while (*text == '\t' || *text == ' ')
			text++;
		text[strcspn(text, "\n")] = '\0';
		/* jump targets carry a symbolic " <.text+0x40>" suffix */
		end = strrchr(text, '<');
		if (end && end > text && end[-1] == ' ' && text[strlen(text) - 1] == '>')
			end[-1] = '\0';
		snprintf(out[idx], sizeof(out[idx]), "%s", text);
		got++;
	}
	return pclose(f) == 0 ? got : -1;
}

static void test_llvm(void)
{
	static struct ebpf_insn prog[MAXN];
	static char ours[MAXN][96], dflt[MAXN][96], alu32[MAXN][96];
	static const int regs[][2] = {{1, 2}, {0, 9}, {10, 5}};
	static const int16_t offs[] = {0, 3, -8, 32767, -32768};
	static const int32_t imms[] = {5, -7, 0, 2147483647, -2147483647 - 1};
	static const int32_t special[] = {16,	32,   64,   0x00, 0x01, 0x40, 0x41,
					  0x50, 0x51, 0xa0, 0xa1, 0xe1, 0xf1};
	char dir[] = "/tmp/ncclbpf_disasm_XXXXXX", path[128], cmd[512];
	size_t n = 0, compared = 0, mism = 0;
	FILE *f;

	if (!have_tool("llvm-mc") || !have_tool("llvm-objdump")) {
		CHECK_SKIP_PART("llvm-objdump", "llvm-mc/llvm-objdump not installed, differential "
						"part not run");
		return;
	}
	for (int code = 0; code < 256; code++) {
		for (size_t v = 0; v < 5; v++) {
			for (size_t s = 0; s < 1 + sizeof(special) / sizeof(special[0]); s++) {
				struct ebpf_insn in = {.code = (uint8_t)code};
				int cls = EBPF_CLASS(code);

				in.dst_reg = regs[v % 3][0];
				in.src_reg = regs[v % 3][1];
				in.off = offs[v];
				in.imm = s ? special[s - 1] : imms[v];
				if (cls == EBPF_ALU || cls == EBPF_ALU64) {
					in.off = 0; /* off selects sdiv/movsx: table above */
					if (EBPF_SRC(code) == EBPF_K)
						in.src_reg = 0;
				}
				if (code == 0x18)
					in.src_reg = 0; /* pseudo forms: llvm prints ld_pseudo */
				if (s && !(cls == EBPF_STX || EBPF_OP(code) == EBPF_END))
					continue;
				if (n + 2 > MAXN)
					break;
				prog[n] = in;
				if (code == 0x18) {
					prog[n + 1] = (struct ebpf_insn){.imm = imms[(v + 1) % 5]};
					n += 2;
				} else {
					n++;
				}
			}
		}
	}
	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/t.s", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, ".text\n");
	for (size_t k = 0; k < n; k++) {
		const uint8_t *b = (const uint8_t *)&prog[k];

		fprintf(f, ".byte %u,%u,%u,%u,%u,%u,%u,%u\n", b[0], b[1], b[2], b[3], b[4], b[5],
			b[6], b[7]);
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "llvm-mc -triple bpfel -filetype=obj -o %s/t.o %s", dir, path);
	CHECK(system(cmd) == 0);
	snprintf(path, sizeof(path), "%s/t.o", dir);
	CHECK(run_objdump(path, "", dflt, n) > 0);
	CHECK(run_objdump(path, "--mattr=+alu32", alu32, n) > 0);
	for (size_t k = 0; k < n;) {
		int r = ebpf_disasm_insn(prog, n, k, ours[k], sizeof(ours[k]));
		const char *ref = dflt[k];
		int fetch32 = prog[k].code == 0xc3 && (prog[k].imm & EBPF_FETCH);

		if (fetch32)
			ref = alu32[k]; /* the only spelling llvm has for them */
		if (r && ref[0] && strcmp(ref, "<unknown>")) {
			compared++;
			if (strcmp(ref, ours[k])) {
				mism++;
				if (mism < 20)
					fprintf(stderr,
						"insn %zu (code 0x%02x): ours '%s' llvm '%s'\n", k,
						prog[k].code, ours[k], ref);
			}
		}
		k += r ? (size_t)r : 1;
	}
	printf("llvm differential: %zu instructions, %zu compared, %zu mismatches\n", n, compared,
	       mism);
	CHECK(mism == 0);
	CHECK(compared > 500); /* the comparison really happened */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	test_table();
	test_edges();
	test_llvm();
	return check_summary("disasm");
}
