/* Programs with maps: EBPF_PSEUDO_MAP_FD / MAP_VALUE resolution in ebpf_exec__new (and its
 * errors), the engine's helpers called from the interpreter, and the bounds-checking mode on
 * map values (returned by lookup, or addressed directly) and ring buffer records. */
#include <stdint.h>

#include "interp_harness.h"
#include "ebpf/helpers.h"
#include "ebpf/maps.h"

static struct ebpf_map *mk(const char *name, uint32_t type, uint32_t ks, uint32_t vs, uint32_t n,
			   uint32_t flags)
{
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = name,
				 .type = type,
				 .key_size = ks,
				 .value_size = vs,
				 .max_entries = n,
				 .flags = flags};
	char err[128];
	struct ebpf_map *m = ebpf_map__create(&d, err, sizeof(err));
	if (!m)
		fprintf(stderr, "map %s: %s\n", name, err);
	CHECK(m != NULL);
	return m;
}

static struct ebpf_map *maps[4]; /* array(16 x u64[3]), hash, rdonly array, ringbuf */

static struct harness_env env(void)
{
	return (struct harness_env){.helpers = ebpf_helpers_default(), .maps = maps, .n_maps = 4};
}

#define TRAP(what, kind, ...)                                                                      \
	do {                                                                                       \
		struct ebpf_insn _p[] = {__VA_ARGS__};                                             \
		struct harness_env _e = env();                                                     \
		harness_expect_fault(what, _p, INSN_CNT(_p), 0, 0, &_e, 1, kind);                  \
	} while (0)
#define RUN(what, ...)                                                                             \
	({                                                                                         \
		struct ebpf_insn _p[] = {__VA_ARGS__};                                             \
		struct harness_env _e = env();                                                     \
		harness_run(what, _p, INSN_CNT(_p), 0, 0, &_e);                                    \
	})

/* r0 = lookup(map idx, key k) or 0 on NULL; leaves the pointer in r0. */
#define LOOKUP(idx, k)                                                                             \
	ST_MEM(EBPF_W, 10, -4, k), LD_MAP_FD(1, idx), MOV64_REG(2, 10),                            \
	    ALU64_IMM(EBPF_ADD, 2, -4), CALL_HELPER(EBPF_FUNC_map_lookup_elem)

static void test_resolution(void)
{
	uint32_t key = 0;
	uint64_t val[3] = {11, 22, 33}, out[3];
	struct ebpf_insn p[] = {LD_MAP_FD(1, 2), LD_MAP_VALUE(0, 0, 8), EXIT()};
	struct harness_env e = env();
	struct ebpf_exec *prog = harness_load(p, INSN_CNT(p), &e, "resolve");
	const struct ebpf_insn *x;
	uint8_t *elem0;

	CHECK(ebpf_map__user_update(maps[0], &key, val, EBPF_ANY) == 0);
	elem0 = ebpf_map__lookup_elem(maps[0], &key);
	CHECK(prog != NULL);
	if (!prog)
		return;
	/* The executable copy holds plain 64-bit immediates. */
	x = ebpf_exec__insns(prog);
	CHECK_EQ_U64(x[0].src_reg, 0);
	CHECK_EQ_U64((uint32_t)x[0].imm | (uint64_t)(uint32_t)x[1].imm << 32,
		     (uint64_t)(uintptr_t)maps[2]);
	CHECK_EQ_U64(x[2].src_reg, 0);
	CHECK_EQ_U64((uint32_t)x[2].imm | (uint64_t)(uint32_t)x[3].imm << 32,
		     (uint64_t)(uintptr_t)(elem0 + 8));
	ebpf_exec__free(prog);

	/* direct value access reads and writes element 0 */
	CHECK_EQ_U64(RUN("value read", LD_MAP_VALUE(1, 0, 16), LDX_MEM(EBPF_DW, 0, 1, 0), EXIT()),
		     33);
	CHECK_EQ_U64(RUN("value write", LD_MAP_VALUE(1, 0, 0), ST_MEM(EBPF_DW, 1, 0, 5),
			 MOV64_IMM(0, 0), EXIT()),
		     0);
	CHECK(ebpf_map__user_lookup(maps[0], &key, out) == 0);
	CHECK_EQ_U64(out[0], 5);
	/* lookup through the helper */
	key = 3;
	val[0] = 1234;
	CHECK(ebpf_map__user_update(maps[0], &key, val, EBPF_ANY) == 0);
	CHECK_EQ_U64(RUN("lookup", LOOKUP(0, 3), JMP_IMM(EBPF_JEQ, 0, 0, 1),
			 LDX_MEM(EBPF_DW, 0, 0, 0), EXIT()),
		     1234);
	CHECK_EQ_U64(RUN("lookup miss", LOOKUP(1, 77), EXIT()), 0);
	/* update from the program, then atomically add to the value */
	CHECK_EQ_U64(RUN("update+atomic", ST_MEM(EBPF_W, 10, -4, 9), ST_MEM(EBPF_DW, 10, -16, 40),
			 LD_MAP_FD(1, 1), MOV64_REG(2, 10), ALU64_IMM(EBPF_ADD, 2, -4),
			 MOV64_REG(3, 10), ALU64_IMM(EBPF_ADD, 3, -16), MOV64_IMM(4, 0),
			 CALL_HELPER(EBPF_FUNC_map_update_elem), LOOKUP(1, 9),
			 JMP_IMM(EBPF_JEQ, 0, 0, 3), MOV64_IMM(1, 2),
			 ATOMIC_OP(EBPF_DW, EBPF_ATOMIC_ADD, 0, 1, 0), LDX_MEM(EBPF_DW, 0, 0, 0),
			 EXIT()),
		     42); /* every variant's run re-sets the value to 40 first */
}

static void test_errors(void)
{
	struct ebpf_insn off[] = {LD_MAP_VALUE(0, 0, 24), EXIT()};
	struct ebpf_insn hash[] = {LD_MAP_VALUE(0, 1, 0), EXIT()};
	struct ebpf_insn fd[] = {LD_MAP_FD(0, 0), EXIT()};
	struct ebpf_map *with_null[2] = {maps[0], NULL};
	char err[256];
	struct ebpf_exec_opts o = {.sz = sizeof(o), .maps = maps, .n_maps = 4};

	CHECK(ebpf_exec__new(off, 3, &o, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "insn 0: value offset 24 out of range (map 'arr' value size 24)") !=
	      NULL);
	CHECK(ebpf_exec__new(hash, 3, &o, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "insn 0: direct value access needs an array map that is not "
			  "per-communicator (map 'hash')") != NULL);
	o.maps = with_null;
	o.n_maps = 2;
	ebpf_exec__free(ebpf_exec__new(fd, 3, &o, err, sizeof(err)));
	fd[0].imm = 1;
	CHECK(ebpf_exec__new(fd, 3, &o, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "insn 0: map 1 is NULL") != NULL);
	o.maps = NULL; /* n_maps without a table: no maps */
	fd[0].imm = 0;
	CHECK(ebpf_exec__new(fd, 3, &o, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "map index 0 out of range (program has 0 maps)") != NULL);
}

static void test_checked(void)
{
	/* value from lookup: 24 bytes */
	CHECK_EQ_U64(RUN("value last byte", LOOKUP(0, 3), JMP_IMM(EBPF_JEQ, 0, 0, 1),
			 LDX_MEM(EBPF_B, 0, 0, 23), EXIT()),
		     0);
	TRAP("value past end", EBPF_FAULT_OUT_OF_BOUNDS, LOOKUP(0, 3), JMP_IMM(EBPF_JEQ, 0, 0, 1),
	     LDX_MEM(EBPF_DW, 0, 0, 17), EXIT());
	TRAP("value before start", EBPF_FAULT_OUT_OF_BOUNDS, LOOKUP(0, 3),
	     JMP_IMM(EBPF_JEQ, 0, 0, 1), LDX_MEM(EBPF_B, 0, 0, -1), EXIT());
	/* read-only map: reads fine, writes trap (lookup pointer and direct value) */
	CHECK_EQ_U64(RUN("rodata read", LOOKUP(2, 0), JMP_IMM(EBPF_JEQ, 0, 0, 1),
			 LDX_MEM(EBPF_DW, 0, 0, 0), EXIT()),
		     0);
	TRAP("rodata write", EBPF_FAULT_OUT_OF_BOUNDS, LOOKUP(2, 0), JMP_IMM(EBPF_JEQ, 0, 0, 1),
	     ST_MEM(EBPF_DW, 0, 0, 1), EXIT());
	TRAP("rodata direct write", EBPF_FAULT_OUT_OF_BOUNDS, LD_MAP_VALUE(1, 2, 0),
	     ST_MEM(EBPF_B, 1, 0, 1), MOV64_IMM(0, 0), EXIT());
	CHECK_EQ_U64(
	    RUN("rodata direct read", LD_MAP_VALUE(1, 2, 4), LDX_MEM(EBPF_W, 0, 1, 0), EXIT()), 0);
	/* implicit region: direct value pointer stays inside the value */
	TRAP("direct past end", EBPF_FAULT_OUT_OF_BOUNDS, LD_MAP_VALUE(1, 0, 16),
	     LDX_MEM(EBPF_DW, 0, 1, 8), EXIT());
	/* helper arguments: the key must be initialised stack */
	TRAP("uninit key", EBPF_FAULT_UNINIT_STACK, LD_MAP_FD(1, 0), MOV64_REG(2, 10),
	     ALU64_IMM(EBPF_ADD, 2, -4), CALL_HELPER(EBPF_FUNC_map_lookup_elem), EXIT());
	TRAP("not a map", EBPF_FAULT_BAD_HELPER, ST_MEM(EBPF_W, 10, -4, 0), MOV64_REG(1, 10),
	     MOV64_REG(2, 10), ALU64_IMM(EBPF_ADD, 2, -4), CALL_HELPER(EBPF_FUNC_map_lookup_elem),
	     EXIT());
	/* ring buffer record: 16 bytes usable, then submitted */
	CHECK_EQ_U64(RUN("ringbuf ok", LD_MAP_FD(1, 3), MOV64_IMM(2, 16), MOV64_IMM(3, 0),
			 CALL_HELPER(EBPF_FUNC_ringbuf_reserve), JMP_IMM(EBPF_JEQ, 0, 0, 4),
			 ST_MEM(EBPF_DW, 0, 8, 7), MOV64_REG(1, 0), MOV64_IMM(2, 0),
			 CALL_HELPER(EBPF_FUNC_ringbuf_submit), MOV64_IMM(0, 1), EXIT()),
		     1);
	TRAP("ringbuf past record", EBPF_FAULT_OUT_OF_BOUNDS, LD_MAP_FD(1, 3), MOV64_IMM(2, 16),
	     MOV64_IMM(3, 0), CALL_HELPER(EBPF_FUNC_ringbuf_reserve), JMP_IMM(EBPF_JEQ, 0, 0, 1),
	     ST_MEM(EBPF_DW, 0, 16, 7), MOV64_IMM(0, 1), EXIT());
}

int main(void)
{
	maps[0] = mk("arr", EBPF_MAP_TYPE_ARRAY, 4, 24, 16, 0);
	maps[1] = mk("hash", EBPF_MAP_TYPE_HASH, 4, 8, 16, 0);
	maps[2] = mk("ro", EBPF_MAP_TYPE_ARRAY, 4, 8, 1, EBPF_MAP_F_RDONLY_PROG);
	maps[3] = mk("rb", EBPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
	if (!maps[0] || !maps[1] || !maps[2] || !maps[3])
		return check_summary("interp_maps");
	test_resolution();
	test_errors();
	test_checked();
	for (int i = 0; i < 4; i++)
		ebpf_map__free(maps[i]);
	return check_summary("interp_maps");
}
