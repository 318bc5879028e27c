/* libFuzzer target over the object loader: every input is opened with ebpf_object__open_mem;
 * what opens is loaded (maps created and filled, programs verified and created) and closed.
 * Nothing is run. Crashes, leaks and sanitizer reports are bugs in the loader (or in map or
 * program creation), whatever the input.
 *
 * Build: cmake -DNCCLBPF_FUZZ=ON with CC=clang (see fuzz.cmake); run for hours with
 *   build/tests/fuzz_loader -dict=tests/fuzz/loader.dict CORPUS build/policies ... */
#include <stddef.h>
#include <stdint.h>

#include "ebpf/object.h"
#include "ncclbpf/nccl_platform.h"

/* Map memory an input may ask for before we skip loading it: a valid object may legitimately
 * declare a 4 GiB array, but creating it belongs to the maps' tests, not to 10 M fuzz runs. */
#define LOAD_MEMORY_LIMIT (64ull << 20)

static int cheap_maps(const struct ebpf_object *obj)
{
	uint64_t total = 0;
	for (uint32_t i = 0; i < ebpf_object__map_cnt(obj); i++) {
		const struct ebpf_map_def *d = ebpf_object_map__def(ebpf_object__map(obj, i));
		total += ((uint64_t)d->key_size + d->value_size + 64) * d->max_entries;
		if (total > LOAD_MEMORY_LIMIT)
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct ebpf_object *obj = ncclbpf_object_open_mem(data, size, NULL, err, sizeof(err));
	if (!obj)
		return 0;
	/* A small complexity budget keeps mutated loops from costing 1 M verifier steps each. */
	struct ebpf_object_load_opts lo = {.sz = sizeof(lo), .complexity_limit = 20000};
	if (cheap_maps(obj))
		ebpf_object__load(obj, &lo, err, sizeof(err));
	ebpf_object__close(obj);
	return 0;
}
