/* JIT loads, stores and atomics: every size, zero- and sign-extending loads, immediate and
 * register stores, every base register (r7 and r10 map to r13 and rbp, which x86 cannot address
 * without a displacement; rsp-like bases need a SIB byte), 0/8-bit/32-bit displacements, and
 * every atomic operation with every base/source register pair, including r0 (which cmpxchg and
 * the fetch loops borrow). Expected memory and registers come from a reference model below. */
#include "jit_util.h"

#define FOLD_K 0x9e3779b1
#define BUF    1024
#define MID    512 /* r1 points here, so negative offsets stay inside */

static uint8_t buf[BUF] __attribute__((aligned(16)));
static uint8_t expect_buf[BUF] __attribute__((aligned(16)));

static void fill(uint8_t *b, uint32_t seed)
{
	for (int i = 0; i < BUF; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (uint8_t)(seed >> 16);
	}
}

static uint64_t fold(const uint64_t *r)
{
	uint64_t a = r[0];

	for (int i = 1; i < 10; i++)
		a = a * (uint64_t)(int64_t)(int32_t)FOLD_K + r[i];
	return a;
}

/* Prologue: rb = r1 (the buffer), every other register r0-r9 = init[r]. */
static uint32_t setup(struct ebpf_insn *p, int b, const uint64_t *init)
{
	uint32_t n = 0;

	if (b != 1)
		p[n++] = MOV64_REG(b, 1);
	for (int r = 0; r < 10; r++) {
		if (r == b)
			continue;
		struct ebpf_insn l[2] = {LD_IMM64(r, init[r])};

		p[n++] = l[0];
		p[n++] = l[1];
	}
	return n;
}

static uint32_t finish(struct ebpf_insn *p, uint32_t n)
{
	for (int r = 1; r < 10; r++) {
		p[n++] = ALU64_IMM(EBPF_MUL, 0, FOLD_K);
		p[n++] = ALU64_REG(EBPF_ADD, 0, r);
	}
	p[n++] = EXIT();
	return n;
}

static const int16_t offs[] = {0, 8, -8, 100, -128, 127, 128, -129, 300, -500};
static const uint8_t sizes[] = {EBPF_B, EBPF_H, EBPF_W, EBPF_DW};
static const int size_len[] = {1, 2, 4, 8};

static uint64_t load_ref(const uint8_t *m, int len, int sx)
{
	uint64_t v = 0;

	memcpy(&v, m, len);
	if (sx) {
		int sh = 64 - 8 * len;

		v = (uint64_t)((int64_t)(v << sh) >> sh);
	}
	return v;
}

static void test_loads(void)
{
	uint64_t init[10], regs[10];
	struct ebpf_insn p[64];

	for (int r = 0; r < 10; r++)
		init[r] = 0x1111111111111111ull * (r + 1);
	fill(buf, 7);
	for (int si = 0; si < 4; si++)
		for (int sx = 0; sx < 2; sx++) {
			if (sx && si == 3)
				continue;
			for (int b = 0; b < 10; b++)
				for (int d = 0; d < 10; d++)
					for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]);
					     o++) {
						uint32_t n = setup(p, b, init);

						p[n++] = INSN(EBPF_LDX | sizes[si] |
								  (sx ? EBPF_MEMSX : EBPF_MEM),
							      d, b, offs[o], 0);
						n = finish(p, n);
						memcpy(regs, init, sizeof(regs));
						regs[b] = (uint64_t)(uintptr_t)(buf + MID);
						regs[d] =
						    load_ref(buf + MID + offs[o], size_len[si], sx);
						CHECK_EQ_U64(
						    jit_eval(p, n, (uintptr_t)(buf + MID), 0),
						    fold(regs));
					}
		}
}

static void test_stores(void)
{
	uint64_t init[10], regs[10];
	struct ebpf_insn p[64];

	for (int r = 0; r < 10; r++)
		init[r] = 0x8070605040302010ull ^ (0x0101010101010101ull * (uint64_t)r);
	for (int si = 0; si < 4; si++)
		for (int b = 0; b < 10; b++)
			for (int s = 0; s <= 10; s++) /* s == 10: store of an immediate */
				for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
					uint32_t n = setup(p, b, init);
					int32_t imm = (int32_t)(0x89abcdefu ^ (uint32_t)o);
					uint64_t v;

					if (s == 10)
						p[n++] = ST_MEM(sizes[si], b, offs[o], imm);
					else
						p[n++] = STX_MEM(sizes[si], b, s, offs[o]);
					n = finish(p, n);
					memcpy(regs, init, sizeof(regs));
					regs[b] = (uint64_t)(uintptr_t)(buf + MID);
					v = s == 10 ? (uint64_t)(int64_t)imm : regs[s];
					fill(buf, 3);
					fill(expect_buf, 3);
					memcpy(expect_buf + MID + offs[o], &v, size_len[si]);
					CHECK_EQ_U64(jit_eval_opts(p, n, NULL, JIT_UTIL_NO_COMPARE,
								   (uintptr_t)(buf + MID), 0),
						     fold(regs));
					CHECK(memcmp(buf, expect_buf, BUF) == 0);
				}
}

static void test_stack(void)
{
	/* Spill every register to the stack at several depths and read it back, via r10 and via a
	 * copy of r10 in every register. */
	for (int si = 0; si < 4; si++)
		for (int r = 0; r < 10; r++) {
			int16_t off = (int16_t)(-512 + 8 * r);
			struct ebpf_insn p[] = {
			    LD_IMM64(r, 0xfedcba9876543210ull),
			    STX_MEM(sizes[si], 10, r, off),
			    MOV64_IMM(0, 0),
			    LDX_MEM(sizes[si], 0, 10, off),
			    EXIT(),
			};
			uint64_t want = load_ref(
			    (const uint8_t *)&(uint64_t){0xfedcba9876543210ull}, size_len[si], 0);

			CHECK_EQ_U64(jit_eval(p, INSN_CNT(p), 0, 0), want);
			{
				struct ebpf_insn q[] = {
				    MOV64_REG(r, 10),
				    ALU64_IMM(EBPF_ADD, r, -64),
				    ST_MEM(EBPF_DW, r, 8, 0x1234),
				    LDX_MEM(EBPF_DW, 0, 10, -56),
				    EXIT(),
				};

				CHECK_EQ_U64(jit_eval(q, INSN_CNT(q), 0, 0), 0x1234);
			}
		}
}

/* --- Atomics --------------------------------------------------------------------------------- */

static const int32_t atomic_ops[] = {
    EBPF_ATOMIC_ADD,
    EBPF_ATOMIC_OR,
    EBPF_ATOMIC_AND,
    EBPF_ATOMIC_XOR,
    EBPF_ATOMIC_ADD | EBPF_FETCH,
    EBPF_ATOMIC_OR | EBPF_FETCH,
    EBPF_ATOMIC_AND | EBPF_FETCH,
    EBPF_ATOMIC_XOR | EBPF_FETCH,
    EBPF_XCHG,
    EBPF_CMPXCHG,
};

static void atomic_ref(int32_t op, int w64, uint8_t *mem, uint64_t *regs, int s)
{
	uint64_t old = load_ref(mem, w64 ? 8 : 4, 0), val = regs[s], nv = old;
	uint64_t mask = w64 ? ~0ull : 0xffffffffull;

	switch (op & ~EBPF_FETCH) {
	case EBPF_ATOMIC_ADD:
		nv = old + val;
		break;
	case EBPF_ATOMIC_OR:
		nv = old | val;
		break;
	case EBPF_ATOMIC_AND:
		nv = old & val;
		break;
	case EBPF_ATOMIC_XOR:
		nv = old ^ val;
		break;
	}
	if (op == EBPF_XCHG)
		nv = val;
	if (op == EBPF_CMPXCHG) {
		nv = (regs[0] & mask) == old ? val : old;
		regs[0] = old;
	} else if (op & EBPF_FETCH) {
		regs[s] = old;
	}
	memcpy(mem, &nv, w64 ? 8 : 4);
}

static void test_atomics(void)
{
	uint64_t init[10], regs[10];
	struct ebpf_insn p[64];

	for (size_t k = 0; k < sizeof(atomic_ops) / sizeof(atomic_ops[0]); k++)
		for (int w64 = 0; w64 < 2; w64++)
			for (int b = 0; b < 10; b++)
				for (int s = 0; s < 10; s++)
					for (int match = 0; match < 2; match++) {
						int16_t off = (int16_t)(8 * (b - 5) * (s + 1));
						uint32_t n;

						if (s == b)
							continue;
						for (int r = 0; r < 10; r++)
							init[r] = 0x0f0f0f0f0f0f0f0full * (r + 1) ^
								  0xa5a5000000005a5aull;
						fill(buf, 11 + (uint32_t)k);
						if (match) /* cmpxchg: make r0 equal to memory */
							memcpy(&init[0], buf + MID + off, 8);
						n = setup(p, b, init);
						p[n++] = ATOMIC_OP(w64 ? EBPF_DW : EBPF_W,
								   atomic_ops[k], b, s, off);
						n = finish(p, n);
						memcpy(regs, init, sizeof(regs));
						regs[b] = (uint64_t)(uintptr_t)(buf + MID);
						memcpy(expect_buf, buf, BUF);
						atomic_ref(atomic_ops[k], w64,
							   expect_buf + MID + off, regs, s);
						CHECK_EQ_U64(
						    jit_eval_opts(p, n, NULL, JIT_UTIL_NO_COMPARE,
								  (uintptr_t)(buf + MID), 0),
						    fold(regs));
						CHECK(memcmp(buf, expect_buf, BUF) == 0);
					}
}

int main(void)
{
	test_loads();
	test_stores();
	test_stack();
	test_atomics();
	return check_summary("test_jit_mem");
}
