/* Memory instructions of RFC 9669: LDX (B/H/W/DW, zero-extending), LDXS (MEMSX, v4), ST and
 * STX of every size, LD_IMM64, and every atomic (add/or/and/xor with and without fetch, xchg,
 * cmpxchg; 32 and 64 bit), on caller memory and on the stack; atomics under contention from
 * several threads running the same program. */
#include <pthread.h>
#include <stdint.h>

#include "interp_harness.h"

static uint8_t buf[64];

static struct harness_env buf_env(void)
{
	static struct ebpf_region r;
	r = (struct ebpf_region){(uint64_t)(uintptr_t)buf, sizeof(buf),
				 EBPF_REGION_READ | EBPF_REGION_WRITE};
	return (struct harness_env){.regions = &r, .n_regions = 1};
}

static uint64_t run_buf(const char *what, const struct ebpf_insn *p, uint32_t n)
{
	struct harness_env env = buf_env();
	return harness_run(what, p, n, (uint64_t)(uintptr_t)buf, sizeof(buf), &env);
}

static void fill_pattern(void)
{
	/* bytes 0x80 0x81 ... : every load of the low byte sees the sign bit set;
	 * at offset 16 bytes 0x01..: sign bit clear */
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i < 16 ? 0x80 + i : i - 15);
}

static void test_loads(void)
{
#define LOAD(sz, mode, off)                                                                        \
	({                                                                                         \
		struct ebpf_insn p[] = {INSN(EBPF_LDX | (sz) | (mode), 0, 1, off, 0), EXIT()};     \
		run_buf(#sz " " #mode, p, INSN_CNT(p));                                            \
	})
	fill_pattern();
	CHECK_EQ_U64(LOAD(EBPF_B, EBPF_MEM, 0), 0x80);
	CHECK_EQ_U64(LOAD(EBPF_H, EBPF_MEM, 0), 0x8180);
	CHECK_EQ_U64(LOAD(EBPF_W, EBPF_MEM, 0), 0x83828180);
	CHECK_EQ_U64(LOAD(EBPF_DW, EBPF_MEM, 0), 0x8786858483828180ull);
	CHECK_EQ_U64(LOAD(EBPF_DW, EBPF_MEM, 3), 0x8a89888786858483ull); /* unaligned */
	CHECK_EQ_U64(LOAD(EBPF_B, EBPF_MEMSX, 0), 0xffffffffffffff80ull);
	CHECK_EQ_U64(LOAD(EBPF_H, EBPF_MEMSX, 0), 0xffffffffffff8180ull);
	CHECK_EQ_U64(LOAD(EBPF_W, EBPF_MEMSX, 0), 0xffffffff83828180ull);
	CHECK_EQ_U64(LOAD(EBPF_B, EBPF_MEMSX, 16), 0x01);
	CHECK_EQ_U64(LOAD(EBPF_H, EBPF_MEMSX, 16), 0x0201);
	CHECK_EQ_U64(LOAD(EBPF_W, EBPF_MEMSX, 16), 0x04030201);
	/* negative offset from a pointer into the buffer */
	{
		struct ebpf_insn p[] = {ALU64_IMM(EBPF_ADD, 1, 20), LDX_MEM(EBPF_B, 0, 1, -20),
					EXIT()};
		CHECK_EQ_U64(run_buf("neg off", p, INSN_CNT(p)), 0x80);
	}
#undef LOAD
}

static void test_stores(void)
{
	/* ST (immediate): truncated to the size; DW sign-extends the 32-bit immediate */
	struct ebpf_insn st[] = {
	    ST_MEM(EBPF_DW, 1, 0, 0),
	    ST_MEM(EBPF_B, 1, 0, 0x1ff),
	    ST_MEM(EBPF_H, 1, 2, -2),
	    ST_MEM(EBPF_W, 1, 8, -3),
	    ST_MEM(EBPF_DW, 1, 16, -4),
	    LDX_MEM(EBPF_DW, 0, 1, 0),
	    EXIT(),
	};
	CHECK_EQ_U64(run_buf("st", st, INSN_CNT(st)), 0x00000000fffe00ffull);
	CHECK_EQ_U64(*(uint32_t *)&buf[8], 0xfffffffdu);
	CHECK_EQ_U64(*(uint64_t *)&buf[16], (uint64_t)-4);
	{
		struct ebpf_insn p[] = {
		    LD_IMM64(2, 0x1122334455667788ull), ST_MEM(EBPF_DW, 1, 0, 0),
		    STX_MEM(EBPF_B, 1, 2, 0),		STX_MEM(EBPF_H, 1, 2, 2),
		    STX_MEM(EBPF_W, 1, 2, 4),		STX_MEM(EBPF_DW, 1, 2, 9), /* unaligned */
		    LDX_MEM(EBPF_DW, 0, 1, 0),		EXIT(),
		};
		CHECK_EQ_U64(run_buf("stx", p, INSN_CNT(p)), 0x5566778877880088ull);
		CHECK_EQ_U64(buf[9], 0x88);
		CHECK_EQ_U64(buf[16], 0x11);
	}
	/* stack: all sizes, both ends of the 512-byte frame */
	{
		struct ebpf_insn p[] = {
		    ST_MEM(EBPF_DW, 10, -512, 7),  ST_MEM(EBPF_B, 10, -1, 1),
		    ST_MEM(EBPF_H, 10, -4, 2),	   ST_MEM(EBPF_W, 10, -8, 3),
		    LDX_MEM(EBPF_DW, 0, 10, -512), LDX_MEM(EBPF_B, 1, 10, -1),
		    ALU64_REG(EBPF_ADD, 0, 1),	   LDX_MEM(EBPF_H, 1, 10, -4),
		    ALU64_REG(EBPF_ADD, 0, 1),	   LDX_MEM(EBPF_W, 1, 10, -8),
		    ALU64_REG(EBPF_ADD, 0, 1),	   EXIT(),
		};
		CHECK_EQ_U64(harness_run("stack", p, INSN_CNT(p), 0, 0, NULL), 13);
	}
}

static void test_lddw(void)
{
	struct ebpf_insn a[] = {LD_IMM64(0, 0x123456789abcdef0ull), EXIT()};
	struct ebpf_insn b[] = {LD_IMM64(0, 0xffffffffull), EXIT()}; /* low imm -1 not extended */
	struct ebpf_insn c[] = {LD_IMM64(0, 0xffffffff00000000ull), EXIT()};
	struct ebpf_insn d[] = {LD_IMM64(5, 1), LD_IMM64(0, 2), ALU64_REG(EBPF_ADD, 0, 5), EXIT()};

	CHECK_EQ_U64(harness_run("lddw", a, INSN_CNT(a), 0, 0, NULL), 0x123456789abcdef0ull);
	CHECK_EQ_U64(harness_run("lddw lo", b, INSN_CNT(b), 0, 0, NULL), 0xffffffffull);
	CHECK_EQ_U64(harness_run("lddw hi", c, INSN_CNT(c), 0, 0, NULL), 0xffffffff00000000ull);
	CHECK_EQ_U64(harness_run("lddw twice", d, INSN_CNT(d), 0, 0, NULL), 3);
}

/* mem = init; r2 = operand; atomic op; returns mem in r0 and the fetched value in buf[56]. */
static void atomic_case(uint8_t size, int32_t op, uint64_t init, uint64_t operand,
			uint64_t want_mem, uint64_t want_src, uint64_t r0_in, uint64_t want_r0)
{
	struct ebpf_insn p[] = {
	    LD_IMM64(3, init),		STX_MEM(EBPF_DW, 1, 3, 0),    LD_IMM64(2, operand),
	    LD_IMM64(0, r0_in),		ATOMIC_OP(size, op, 1, 2, 0), STX_MEM(EBPF_DW, 1, 2, 56),
	    STX_MEM(EBPF_DW, 1, 0, 48), LDX_MEM(EBPF_DW, 0, 1, 0),    EXIT(),
	};
	char name[64];
	uint64_t mem;

	snprintf(name, sizeof(name), "atomic %s op 0x%x", size == EBPF_W ? "w" : "dw",
		 (unsigned)op);
	mem = run_buf(name, p, INSN_CNT(p));
	if (mem != want_mem || *(uint64_t *)&buf[56] != want_src)
		fprintf(stderr, "%s: mem 0x%llx src 0x%llx\n", name, (unsigned long long)mem,
			(unsigned long long)*(uint64_t *)&buf[56]);
	CHECK_EQ_U64(mem, want_mem);
	CHECK_EQ_U64(*(uint64_t *)&buf[56], want_src);
	CHECK_EQ_U64(*(uint64_t *)&buf[48], want_r0);
}

static void test_atomics(void)
{
	const uint64_t hi = 0xaaaaaaaa00000000ull; /* upper half a 32-bit atomic must not touch */
	const uint64_t r0 = 0x5555;
	const int32_t F = EBPF_FETCH;

	/* 64-bit, no fetch: src unchanged */
	atomic_case(EBPF_DW, EBPF_ATOMIC_ADD, 40, 2, 42, 2, r0, r0);
	atomic_case(EBPF_DW, EBPF_ATOMIC_OR, 0xf0, 0x0f, 0xff, 0x0f, r0, r0);
	atomic_case(EBPF_DW, EBPF_ATOMIC_AND, 0xf0f0, 0xff00, 0xf000, 0xff00, r0, r0);
	atomic_case(EBPF_DW, EBPF_ATOMIC_XOR, 0xff, 0x0f, 0xf0, 0x0f, r0, r0);
	/* 64-bit, fetch: src receives the old value */
	atomic_case(EBPF_DW, EBPF_ATOMIC_ADD | F, 40, 2, 42, 40, r0, r0);
	atomic_case(EBPF_DW, EBPF_ATOMIC_OR | F, 0xf0, 0x0f, 0xff, 0xf0, r0, r0);
	atomic_case(EBPF_DW, EBPF_ATOMIC_AND | F, 0xf0f0, 0xff00, 0xf000, 0xf0f0, r0, r0);
	atomic_case(EBPF_DW, EBPF_ATOMIC_XOR | F, 0xff, 0x0f, 0xf0, 0xff, r0, r0);
	atomic_case(EBPF_DW, EBPF_XCHG, 1ull << 40, 7, 7, 1ull << 40, r0, r0);
	/* cmpxchg: r0 == mem -> store; r0 receives the old value either way */
	atomic_case(EBPF_DW, EBPF_CMPXCHG, 1ull << 40, 9, 9, 9, 1ull << 40, 1ull << 40);
	atomic_case(EBPF_DW, EBPF_CMPXCHG, 1ull << 40, 9, 1ull << 40, 9, 5, 1ull << 40);
	/* 32-bit: only the low word changes; fetched values are zero-extended */
	atomic_case(EBPF_W, EBPF_ATOMIC_ADD, hi | 0xffffffff, 2, hi | 1, 2, r0, r0);
	atomic_case(EBPF_W, EBPF_ATOMIC_OR, hi | 0xf0, 0x0f, hi | 0xff, 0x0f, r0, r0);
	atomic_case(EBPF_W, EBPF_ATOMIC_AND, hi | 0xf0f0, 0xff00, hi | 0xf000, 0xff00, r0, r0);
	atomic_case(EBPF_W, EBPF_ATOMIC_XOR, hi | 0xff, 0x0f, hi | 0xf0, 0x0f, r0, r0);
	atomic_case(EBPF_W, EBPF_ATOMIC_ADD | F, hi | 0x80000000, 1ull << 32 | 2, hi | 0x80000002,
		    0x80000000, r0, r0);
	atomic_case(EBPF_W, EBPF_ATOMIC_OR | F, hi | 0xf0, 0x0f, hi | 0xff, 0xf0, r0, r0);
	atomic_case(EBPF_W, EBPF_ATOMIC_AND | F, hi | 0xf0f0, 0xff00, hi | 0xf000, 0xf0f0, r0, r0);
	atomic_case(EBPF_W, EBPF_ATOMIC_XOR | F, hi | 0xff, 0x0f, hi | 0xf0, 0xff, r0, r0);
	atomic_case(EBPF_W, EBPF_XCHG, hi | 0xfffffffe, 0x1234567800000007ull, hi | 7, 0xfffffffe,
		    r0, r0);
	/* 32-bit cmpxchg compares the low half of r0 only and zero-extends into r0 */
	atomic_case(EBPF_W, EBPF_CMPXCHG, hi | 0x80000001, 9, hi | 9, 9, 0x1180000001ull,
		    0x80000001);
	atomic_case(EBPF_W, EBPF_CMPXCHG, hi | 0x80000001, 9, hi | 0x80000001, 9, 0x1180000002ull,
		    0x80000001);
	/* on the stack */
	{
		struct ebpf_insn p[] = {
		    ST_MEM(EBPF_DW, 10, -8, 100),
		    MOV64_IMM(1, 5),
		    ATOMIC_OP(EBPF_DW, EBPF_ATOMIC_ADD | EBPF_FETCH, 10, 1, -8),
		    LDX_MEM(EBPF_DW, 0, 10, -8),
		    ALU64_IMM(EBPF_MUL, 0, 1000),
		    ALU64_REG(EBPF_ADD, 0, 1),
		    EXIT(),
		};
		CHECK_EQ_U64(harness_run("stack atomic", p, INSN_CNT(p), 0, 0, NULL), 105100);
	}
}

/* Several threads run the same program on shared memory: no lost updates. */
enum { THREADS = 4, ITERS = 20000 };
static uint64_t shared_ctr[2];
static struct ebpf_exec *ctr_prog;

/* Odd threads use the bounds-checking variant: it is reentrant too. */
static void *ctr_thread(void *arg)
{
	struct ebpf_region r = {(uint64_t)(uintptr_t)shared_ctr, sizeof(shared_ctr),
				EBPF_REGION_READ | EBPF_REGION_WRITE};
	struct ebpf_run_opts o = {.sz = sizeof(o),
				  .checked = (int)(uintptr_t)arg & 1,
				  .regions = &r,
				  .n_regions = 1,
				  .flags = EBPF_RUN_F_UNINIT_REGS};
	uint64_t r0;
	int i;

	for (i = 0; i < ITERS; i++)
		if (ebpf_interp__run(ctr_prog, (uint64_t)(uintptr_t)shared_ctr, 0,
				     i % 3 ? &o : NULL, &r0))
			return (void *)1;
	return NULL;
}

static void test_contention(void)
{
	struct ebpf_insn p[] = {
	    MOV64_IMM(2, 1),
	    ATOMIC_OP(EBPF_DW, EBPF_ATOMIC_ADD, 1, 2, 0),
	    /* 32-bit counter via a cmpxchg retry loop */
	    LDX_MEM(EBPF_W, 0, 1, 8),
	    MOV64_REG(3, 0),
	    ALU32_IMM(EBPF_ADD, 3, 3),
	    MOV64_REG(4, 0),
	    ATOMIC_OP(EBPF_W, EBPF_CMPXCHG, 1, 3, 8),
	    JMP_REG(EBPF_JNE, 0, 4, -6),
	    EXIT(),
	};
	pthread_t t[THREADS];
	void *res;
	char err[128];
	int i;

	ctr_prog = ebpf_exec__new(p, INSN_CNT(p), NULL, err, sizeof(err));
	CHECK(ctr_prog != NULL);
	if (!ctr_prog)
		return;
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, ctr_thread, (void *)(uintptr_t)i);
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], &res);
		CHECK(res == NULL);
	}
	CHECK_EQ_U64(shared_ctr[0], THREADS * ITERS);
	CHECK_EQ_U64((uint32_t)shared_ctr[1], 3u * THREADS * ITERS);
	ebpf_exec__free(ctr_prog);
}

int main(void)
{
	test_loads();
	test_stores();
	test_lddw();
	test_atomics();
	test_contention();
	return check_summary("interp_mem");
}
