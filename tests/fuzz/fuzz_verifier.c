/* libFuzzer target over the static verifier, and a soundness oracle at the same time.
 *
 * Input: byte 0 picks the program type (tuner, tuner/chunk, profiler, net, or none), byte 1 the
 * rank-local map flags, the rest is instructions (8 bytes each) over a fixed table of maps
 * (hash, array, ring buffer, read-only data, telemetry; as in tests/verifier/vcases.h).
 * Every input is verified (complexity limit 20,000 to keep runs short). Crashes, leaks and
 * sanitizer reports are verifier bugs. A program the verifier accepts is then run in the
 * bounds-checking interpreter with its context filled from the input and the instruction limit
 * set to the verifier's worst-case bound: a fault aborts, since it means the verifier accepted
 * an unsafe program or under-estimated its cost.
 *
 * Build: cmake -DNCCLBPF_FUZZ=ON with CC=clang; run for hours with
 *   build/tests/fuzz_verifier -max_len=4096 CORPUS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/helpers.h"
#include "ebpf/maps.h"
#include "ebpf/exec.h"
#include "ebpf/progtype.h"
#include "ebpf/verifier.h"
#include "ncclbpf/nccl_platform.h"

#define N_MAPS 5
static struct ebpf_map *maps[N_MAPS];

static void quiet(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
}

static void init_maps(void)
{
	static const struct ebpf_map_def defs[N_MAPS] = {
	    {sizeof(struct ebpf_map_def), "hash", EBPF_MAP_TYPE_HASH, 4, 16, 64, 0},
	    {sizeof(struct ebpf_map_def), "array", EBPF_MAP_TYPE_ARRAY, 4, 64, 4, 0},
	    {sizeof(struct ebpf_map_def), "rb", EBPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0},
	    {sizeof(struct ebpf_map_def), "rodata", EBPF_MAP_TYPE_ARRAY, 4, 16, 1,
	     EBPF_MAP_F_RDONLY_PROG},
	    {sizeof(struct ebpf_map_def), "telemetry", EBPF_MAP_TYPE_ARRAY, 4, 8, 1, 0},
	};
	char err[128];
	uint32_t k = 0;
	uint64_t ro[2] = {3, 100};

	ebpf_helpers_set_logger(quiet, NULL);
	for (int i = 0; i < N_MAPS; i++) {
		maps[i] = ebpf_map__create(&defs[i], err, sizeof(err));
		if (!maps[i])
			abort();
	}
	ebpf_map__update_elem(maps[3], &k, ro, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const types[] = {"tuner", "tuner_chunk", "profiler", "net"};
	static int ready;
	const struct ebpf_prog_type *type;
	struct ebpf_insn insns[512];
	uint8_t flags[N_MAPS];
	struct ebpf_verify_stats st;
	char err[512];
	uint32_t n;

	if (!ready) {
		init_maps();
		ready = 1;
	}
	if (size < 2 + sizeof(struct ebpf_insn))
		return 0;
	type = data[0] % 5 < 4 ? ncclbpf_prog_type(types[data[0] % 5]) : NULL;
	for (int i = 0; i < N_MAPS; i++)
		flags[i] = (data[1] >> i) & 1 ? EBPF_VERIFY_MAP_RANK_LOCAL : 0;
	n = (uint32_t)((size - 2) / sizeof(struct ebpf_insn));
	if (n > sizeof(insns) / sizeof(insns[0]))
		n = sizeof(insns) / sizeof(insns[0]);
	memcpy(insns, data + 2, n * sizeof(struct ebpf_insn));

	struct ebpf_verify_opts vo = {.sz = sizeof(vo),
				      .type = type,
				      .maps = maps,
				      .n_maps = N_MAPS,
				      .map_flags = flags,
				      .helpers = ebpf_helpers_default(),
				      .flags =
					  (data[1] & 0x80) ? EBPF_VERIFY_F_ALLOW_RANK_LOCAL : 0,
				      .complexity_limit = 20000};
	if (ebpf_verify(insns, n, &vo, &st, err, sizeof(err)))
		return 0;

	struct ebpf_exec_opts po = {
	    .sz = sizeof(po), .helpers = ebpf_helpers_default(), .maps = maps, .n_maps = N_MAPS};
	struct ebpf_exec *p = ebpf_exec__new(insns, n, &po, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "verified program refused by ebpf_exec__new: %s\n", err);
		abort();
	}
	uint8_t ctx[256];
	for (size_t i = 0; i < sizeof(ctx); i++)
		ctx[i] = data[(i * 7) % size];
	struct ebpf_region reg = {(uint64_t)(uintptr_t)ctx, type ? type->ctx_size : 0,
				  EBPF_REGION_READ | EBPF_REGION_WRITE};
	struct ebpf_fault f = {0};
	struct ebpf_run_opts ro = {.sz = sizeof(ro),
				   .checked = 1,
				   .regions = &reg,
				   .n_regions = type ? 1 : 0,
				   .insn_limit = st.worst_case_insns,
				   .fault = &f};
	uint64_t r0;
	if (ebpf_interp__run(p, (uint64_t)(uintptr_t)ctx, 0, &ro, &r0)) {
		fprintf(stderr, "UNSOUND: accepted program faulted: %s (worst-case bound %llu)\n",
			f.msg, (unsigned long long)st.worst_case_insns);
		abort();
	}
	ebpf_exec__free(p);
	return 0;
}
