/* Map memory is committed lazily: an array, ring buffer or hash table that is declared large
 * but barely used costs the pages it touches, not its declared size (engine/src/maps/mem.c).
 * Measured as the process's resident set around creation and a few touches; the budget a
 * bundle is charged (ebpf_map__def_memory) still counts the declared size. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rss.h"
#include "ebpf/epoch.h"
#include "ebpf/maps.h"

/* Far below any of the sizes created here, far above a few touched pages and the allocator's
 * own growth. */
#define RSS_SLACK (32ull << 20)

static struct ebpf_map *mk(const char *name, uint32_t type, uint32_t ks, uint32_t vs, uint32_t n)
{
	char err[128] = "";
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = name,
				 .type = type,
				 .key_size = ks,
				 .value_size = vs,
				 .max_entries = n};
	struct ebpf_map *m = ebpf_map__create(&d, err, sizeof(err));
	CHECKF(m != NULL, "%s: %s", name, err);
	if (m) {
		struct ebpf_map_stats st = {.sz = sizeof(st)};
		CHECK(ebpf_map__get_stats(m, &st) == 0);
		/* what the map says it holds is what a budget charges for its definition */
		if (type != EBPF_MAP_TYPE_HASH)
			CHECK_EQ_U64(st.memory_bytes, ebpf_map__def_memory(&d));
	}
	return m;
}

/* 512 MiB of values: creating costs no resident memory; touching two values costs two pages;
 * untouched values read as zero. */
static void test_array(void)
{
	uint64_t r0 = test_rss_bytes();
	struct ebpf_map *m = mk("big_array", EBPF_MAP_TYPE_ARRAY, 4, 4096, 1u << 17);
	if (!m)
		return;
	uint64_t r1 = test_rss_bytes();
	CHECKF(r1 < r0 + RSS_SLACK, "array: resident %llu -> %llu bytes", (unsigned long long)r0,
	       (unsigned long long)r1);
	char v[4096], got[4096];
	memset(v, 0xab, sizeof(v));
	uint32_t first = 0, last = (1u << 17) - 1, mid = 1u << 16;
	CHECK(ebpf_map__user_update(m, &first, v, EBPF_ANY) == 0);
	CHECK(ebpf_map__user_update(m, &last, v, EBPF_ANY) == 0);
	CHECK(ebpf_map__user_lookup(m, &last, got) == 0 && !memcmp(got, v, sizeof(v)));
	memset(v, 0, sizeof(v));
	CHECK(ebpf_map__user_lookup(m, &mid, got) == 0 && !memcmp(got, v, sizeof(v)));
	uint64_t r2 = test_rss_bytes();
	CHECKF(r2 < r0 + RSS_SLACK, "array touched: resident %llu -> %llu bytes",
	       (unsigned long long)r0, (unsigned long long)r2);
	ebpf_map__free(m);
}

/* A 256 MiB ring buffer (512 MiB with its overflow area): one record costs a page. */
static int count_records(void *ctx, const void *data, uint32_t size)
{
	(void)data;
	*(uint32_t *)ctx += size == 8;
	return 0;
}

static void test_ringbuf(void)
{
	uint64_t r0 = test_rss_bytes();
	struct ebpf_map *m = mk("big_ring", EBPF_MAP_TYPE_RINGBUF, 0, 0, 256u << 20);
	if (!m)
		return;
	uint64_t rec = 42;
	uint32_t n = 0;
	CHECK(ebpf_ringbuf__output(m, &rec, sizeof(rec), 0) == 0);
	CHECK(ebpf_ringbuf__consume(m, count_records, &n, 0) == 1 && n == 1);
	uint64_t r1 = test_rss_bytes();
	CHECKF(r1 < r0 + RSS_SLACK, "ring buffer: resident %llu -> %llu bytes",
	       (unsigned long long)r0, (unsigned long long)r1);
	ebpf_map__free(m);
}

/* A hash map of 4 M entries: 64 MiB of buckets, none touched but the one an update lands in.
 * Its budget charge covers every element it may grow to. */
static void test_hash(void)
{
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .type = EBPF_MAP_TYPE_LRU_HASH,
				 .key_size = 8,
				 .value_size = 1024,
				 .max_entries = 1u << 22};
	CHECK(ebpf_map__def_memory(&d) >= (uint64_t)d.max_entries * (d.key_size + d.value_size));
	uint64_t r0 = test_rss_bytes();
	struct ebpf_map *m = mk("big_hash", EBPF_MAP_TYPE_HASH, 8, 8, 1u << 22);
	if (!m)
		return;
	uint64_t k = 7, v = 9;
	CHECK(ebpf_map__user_update(m, &k, &v, EBPF_ANY) == 0);
	uint64_t r1 = test_rss_bytes();
	CHECKF(r1 < r0 + RSS_SLACK, "hash: resident %llu -> %llu bytes", (unsigned long long)r0,
	       (unsigned long long)r1);
	ebpf_map__free(m);
}

int main(void)
{
	test_array();
	test_ringbuf();
	test_hash();
	CHECK(ebpf_epoch_synchronize() == 0);
	return check_summary("maps_lazy");
}
