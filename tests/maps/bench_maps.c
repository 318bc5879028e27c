/* Map micro-benchmark: nanoseconds per operation, single thread, with a baseline measured in
 * the same run (the same key-generation loop reading a plain C array) so the numbers can be
 * read as ratios. Not a test: nothing is asserted about time.
 * Usage: bench_maps [ops] (default 5,000,000). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ebpf/epoch.h"
#include "ebpf/helpers.h"
#include "ebpf/maps.h"

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct ebpf_map *mk(uint32_t type, uint32_t n)
{
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = "b",
				 .type = type,
				 .key_size = 4,
				 .value_size = 8,
				 .max_entries = n};
	return ebpf_map__create(&d, NULL, 0);
}

static volatile uint64_t sink;

static int drop(void *ctx, const void *data, uint32_t size)
{
	sink += size;
	return 0;
}
#define NK 1024u

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 5000000;
	uint64_t plain[NK] = {0}, acc = 0, t;
	uint32_t k;
	struct ebpf_map *arr = mk(EBPF_MAP_TYPE_ARRAY, NK), *h = mk(EBPF_MAP_TYPE_HASH, NK),
			*lru = mk(EBPF_MAP_TYPE_LRU_HASH, NK),
			*pch = mk(EBPF_MAP_TYPE_PERCPU_HASH, NK),
			*pca = mk(EBPF_MAP_TYPE_PERCPU_ARRAY, NK);
	uint64_t v = 1;
	for (k = 0; k < NK; k++) {
		ebpf_map__update_elem(h, &k, &v, 0);
		ebpf_map__update_elem(lru, &k, &v, 0);
		ebpf_map__update_elem(pch, &k, &v, 0);
	}

#define BENCH(label, ...)                                                                          \
	do {                                                                                       \
		t = now();                                                                         \
		for (long i = 0; i < ops; i++) {                                                   \
			k = (uint32_t)(i * 2654435761u) % NK;                                      \
			__VA_ARGS__;                                                               \
		}                                                                                  \
		double ns = (double)(now() - t) / (double)ops;                                     \
		printf("%-34s %7.2f ns/op  (%.2fx baseline)\n", label, ns, ns / base);             \
	} while (0)

	double base = 1.0;
	t = now();
	for (long i = 0; i < ops; i++) {
		k = (uint32_t)(i * 2654435761u) % NK;
		acc += plain[k]++;
	}
	base = (double)(now() - t) / (double)ops;
	printf("%-34s %7.2f ns/op\n", "baseline: C array read+increment", base);

	BENCH("epoch enter+exit", {
		ebpf_epoch_enter();
		ebpf_epoch_exit();
	});
	ebpf_epoch_enter();
	BENCH("array lookup+increment", {
		uint64_t *p = ebpf_map__lookup_elem(arr, &k);
		acc += (*p)++;
	});
	BENCH("percpu_array lookup+increment", {
		uint64_t *p = ebpf_map__lookup_elem(pca, &k);
		acc += (*p)++;
	});
	BENCH("hash lookup+increment (1024 keys)", {
		uint64_t *p = ebpf_map__lookup_elem(h, &k);
		acc += (*p)++;
	});
	BENCH("lru_hash lookup+increment", {
		uint64_t *p = ebpf_map__lookup_elem(lru, &k);
		acc += (*p)++;
	});
	BENCH("percpu_hash lookup+increment", {
		uint64_t *p = ebpf_map__lookup_elem(pch, &k);
		acc += (*p)++;
	});
	BENCH("helper map_lookup_elem (hash)", {
		const struct ebpf_helper_proto *pr = ebpf_helpers_default()->by_id[1];
		uint64_t *p = (uint64_t *)(uintptr_t)pr->fn((uintptr_t)h, (uintptr_t)&k, 0, 0, 0);
		acc += (*p)++;
	});
	ebpf_epoch_exit();
	BENCH("array update", ebpf_map__update_elem(arr, &k, &v, 0));
	BENCH("hash update (replace, retire old)", ebpf_map__update_elem(h, &k, &v, 0));
	BENCH("percpu_hash update (in place)", ebpf_map__update_elem(pch, &k, &v, 0));
	BENCH("hash delete+insert", {
		ebpf_map__delete_elem(h, &k);
		ebpf_map__update_elem(h, &k, &v, 0);
	});
	uint32_t big = 0;
	BENCH("lru_hash insert with eviction", {
		big++;
		ebpf_map__update_elem(lru, &big, &v, 0);
	});
	struct ebpf_map_def rd = {
	    .sz = sizeof(rd), .name = "rb", .type = EBPF_MAP_TYPE_RINGBUF, .max_entries = 1u << 20};
	struct ebpf_map *rb = ebpf_map__create(&rd, NULL, 0);
	BENCH("ringbuf output 16 B (+consume/64)", {
		uint64_t rec[2] = {k, acc};
		if (ebpf_ringbuf__output(rb, rec, 16, 0) || (i & 63) == 63)
			ebpf_ringbuf__consume(rb, drop, NULL, 0);
	});
	BENCH("ktime_get_ns helper", acc += ebpf_helpers_default()->by_id[5]->fn(0, 0, 0, 0, 0));
	BENCH("get_prandom_u32 helper", acc += ebpf_helpers_default()->by_id[7]->fn(0, 0, 0, 0, 0));
	sink = acc;
	ebpf_epoch_synchronize();
	struct ebpf_epoch_stats es;
	ebpf_epoch_get_stats(&es);
	printf("epoch: %llu retired, %llu freed, epoch %llu\n", (unsigned long long)es.retired,
	       (unsigned long long)es.freed, (unsigned long long)es.epoch);
	ebpf_map__free(arr);
	ebpf_map__free(h);
	ebpf_map__free(lru);
	ebpf_map__free(pch);
	ebpf_map__free(pca);
	ebpf_map__free(rb);
	return 0;
}
