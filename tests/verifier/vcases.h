/* Shared fixture of the verifier tests: a fixed set of maps and a compact case format.
 * Map table used by every case (LD_MAP_FD indices):
 *   0 hash      key 4, value 16, 64 entries
 *   1 array     key 4, value 64, 4 entries
 *   2 ringbuf   4096 bytes
 *   3 rodata    array key 4, value 16, 1 entry, read-only for programs: u64 {3, 100}
 *   4 telemetry array key 4, value 8, 1 entry
 * Cases flag maps rank-local (local_maps) or per-communicator (comm_maps) by bit. */
#ifndef NCCLBPF_TEST_VCASES_H
#define NCCLBPF_TEST_VCASES_H

#include <stdio.h>
#include <string.h>

#include "insn_macros.h"
#include "ebpf/helpers.h"
#include "ebpf/maps.h"
#include "ebpf/progtype.h"
#include "ebpf/verifier.h"
#include "ncclbpf/nccl_platform.h"

#define N_MAPS	   5
#define MAP_HASH   0
#define MAP_ARRAY  1
#define MAP_RB	   2
#define MAP_RODATA 3
#define MAP_TELEM  4

static struct ebpf_map *vmaps[N_MAPS];

static inline int vmaps_create(void)
{
	static const struct ebpf_map_def defs[N_MAPS] = {
	    {sizeof(struct ebpf_map_def), "hash", EBPF_MAP_TYPE_HASH, 4, 16, 64, 0},
	    {sizeof(struct ebpf_map_def), "array", EBPF_MAP_TYPE_ARRAY, 4, 64, 4, 0},
	    {sizeof(struct ebpf_map_def), "rb", EBPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0},
	    {sizeof(struct ebpf_map_def), "rodata", EBPF_MAP_TYPE_ARRAY, 4, 16, 1,
	     EBPF_MAP_F_RDONLY_PROG},
	    {sizeof(struct ebpf_map_def), "telemetry", EBPF_MAP_TYPE_ARRAY, 4, 8, 1, 0},
	};
	char err[256];
	uint32_t k = 0;
	uint64_t ro[2] = {3, 100};

	for (int i = 0; i < N_MAPS; i++) {
		vmaps[i] = ebpf_map__create(&defs[i], err, sizeof(err));
		if (!vmaps[i]) {
			fprintf(stderr, "map %d: %s\n", i, err);
			return -1;
		}
	}
	return (int)ebpf_map__update_elem(vmaps[MAP_RODATA], &k, ro, 0);
}

static inline void vmaps_free(void)
{
	for (int i = 0; i < N_MAPS; i++)
		ebpf_map__free(vmaps[i]);
}

/* 6 insns: r0 = bpf_map_lookup_elem(map m, &(u32)0 at fp-4) */
#define LOOKUP(m)                                                                                  \
	ST_MEM(EBPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(EBPF_ADD, 2, -4), LD_MAP_FD(1, m),  \
	    CALL_HELPER(1)
/* 3 insns: if (!r) return 0; */
#define NULL_EXIT(r) JMP_IMM(EBPF_JNE, r, 0, 2), MOV64_IMM(0, 0), EXIT()
#define RET0	     MOV64_IMM(0, 0), EXIT()

/* Tuner context offsets (include/ncclbpf.h). */
#define T_COMM	  0
#define T_BYTES	  8
#define T_SEQ	  16
#define T_COLL	  24
#define T_RANKS	  28
#define T_NODES	  32
#define T_COST	  48
#define T_REGBUFF 216
#define T_ALGO	  224
#define T_PROTO	  228
#define T_CHAN	  232

#define VC_MAX_INSNS 128

struct vcase {
	const char *name;
	const char *type;    /* program type name, NULL = raw (no ctx fields, all helpers) */
	const char *expect;  /* NULL: accepted; else a substring of the rejection */
	uint32_t vflags;     /* EBPF_VERIFY_F_* */
	uint32_t local_maps; /* bit per map flagged EBPF_VERIFY_MAP_RANK_LOCAL */
	uint32_t comm_maps;  /* bit per map flagged EBPF_VERIFY_MAP_PER_COMM */
	uint64_t limit;	     /* complexity limit, 0 = default */
	int64_t worst;	     /* > 0: expected worst-case instruction count */
	const char *reads;   /* accepted, non-NULL: the ctx fields it may read ("a,b"; "" none) */
	struct ebpf_insn insns[VC_MAX_INSNS];
};

static inline uint32_t vcase_len(const struct vcase *c)
{
	uint32_t n = VC_MAX_INSNS;

	while (n && !c->insns[n - 1].code && !c->insns[n - 1].imm && !c->insns[n - 1].dst_reg &&
	       !c->insns[n - 1].src_reg && !c->insns[n - 1].off)
		n--;
	/* the loop may eat the zero second half of a trailing LD_IMM64; programs never end so */
	return n;
}

/* Verifies one case; returns the verifier's rc and fills err/stats. */
static inline int vcase_verify(const struct vcase *c, char *err, size_t err_len,
			       struct ebpf_verify_stats *st, uint8_t *map_flags, char *log,
			       size_t log_len)
{
	struct ebpf_verify_opts o = {
	    .sz = sizeof(o),
	    .type = c->type ? ncclbpf_prog_type(c->type) : NULL,
	    .maps = vmaps,
	    .n_maps = N_MAPS,
	    .map_flags = map_flags,
	    .helpers = ebpf_helpers_default(),
	    .flags = c->vflags | (log ? EBPF_VERIFY_F_LOG : 0),
	    .complexity_limit = c->limit,
	    .log_buf = log,
	    .log_size = log_len,
	};

	for (int i = 0; i < N_MAPS; i++)
		map_flags[i] = ((c->local_maps >> i) & 1 ? EBPF_VERIFY_MAP_RANK_LOCAL : 0) |
			       ((c->comm_maps >> i) & 1 ? EBPF_VERIFY_MAP_PER_COMM : 0);
	return ebpf_verify(c->insns, vcase_len(c), &o, st, err, err_len);
}

#endif
