/* LRU_HASH: never refuses an insert, evicts the oldest element (by insertion/update) that
 * programs have not looked up since, gives looked-up elements a second chance, and counts
 * evictions. User-side lookups do not count as a use (as in Linux). */
#include <errno.h>
#include <string.h>

#include "ebpf/epoch.h"
#include "ebpf/maps.h"
#include "check.h"

static struct ebpf_map *mk(uint32_t n)
{
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = "lru",
				 .type = EBPF_MAP_TYPE_LRU_HASH,
				 .key_size = 4,
				 .value_size = 8,
				 .max_entries = n};
	return ebpf_map__create(&d, NULL, 0);
}

static int has(struct ebpf_map *m, uint32_t k)
{
	uint64_t v;
	return ebpf_map__user_lookup(m, &k, &v) == 0;
}

static long put(struct ebpf_map *m, uint32_t k, uint64_t flags)
{
	uint64_t v = k * 10ull;
	return ebpf_map__update_elem(m, &k, &v, flags);
}

int main(void)
{
	struct ebpf_map *m = mk(4);
	CHECK(m != NULL);
	if (!m)
		return check_summary("maps_lru");
	for (uint32_t k = 1; k <= 4; k++)
		CHECK(put(m, k, EBPF_NOEXIST) == 0);
	/* Full: inserting 5 evicts 1 (oldest). */
	CHECK(put(m, 5, EBPF_ANY) == 0);
	CHECK(!has(m, 1) && has(m, 2) && has(m, 5));
	/* User-side lookups of 2 do not protect it. */
	CHECK(put(m, 6, EBPF_ANY) == 0);
	CHECK(!has(m, 2) && has(m, 3));
	/* A program lookup of 3 gives it a second chance: 4 goes instead. */
	uint32_t k = 3;
	uint64_t *p = ebpf_map__lookup_elem(m, &k);
	CHECK(p && *p == 30);
	CHECK(put(m, 7, EBPF_ANY) == 0);
	CHECK(has(m, 3) && !has(m, 4) && has(m, 5) && has(m, 6) && has(m, 7));
	/* 3 was moved to the head: 5, 6 now go before it. */
	CHECK(put(m, 8, EBPF_ANY) == 0);
	CHECK(!has(m, 5) && has(m, 3));
	/* Updating an existing key makes it most recent. */
	CHECK(put(m, 6, EBPF_EXIST) == 0);
	CHECK(put(m, 9, EBPF_ANY) == 0);
	CHECK(!has(m, 3) && has(m, 6));
	CHECK(put(m, 10, EBPF_NOEXIST) == 0);
	CHECK(!has(m, 7) && has(m, 6) && has(m, 8) && has(m, 9) && has(m, 10));
	/* Flags still apply. */
	CHECK(put(m, 10, EBPF_NOEXIST) == -EEXIST);
	CHECK(put(m, 11, EBPF_EXIST) == -ENOENT);
	/* Delete frees a slot: the next insert evicts nothing. */
	k = 8;
	CHECK(ebpf_map__delete_elem(m, &k) == 0);
	CHECK(put(m, 12, EBPF_ANY) == 0);
	CHECK(has(m, 6) && has(m, 9) && has(m, 10) && has(m, 12));
	struct ebpf_map_stats st = {.sz = sizeof(st)};
	CHECK(ebpf_map__get_stats(m, &st) == 0);
	CHECK_EQ_U64(st.entries, 4);
	CHECK_EQ_U64(st.lru_evictions, 6);
	/* All referenced: one full second-chance pass, then the oldest goes. */
	for (k = 0; k < 20; k++) {
		uint32_t key;
		int i = 0;
		const void *prev = NULL;
		uint32_t cur;
		while (ebpf_map__get_next_key(m, prev, &key) == 0 && i++ < 8) {
			CHECK(ebpf_map__lookup_elem(m, &key) != NULL);
			cur = key;
			prev = &cur;
		}
		CHECK(put(m, 100 + k, EBPF_ANY) == 0);
	}
	CHECK(ebpf_map__get_stats(m, &st) == 0 && st.entries == 4);
	/* A bigger map under churn stays exactly full. */
	ebpf_map__free(m);
	m = mk(100);
	for (uint32_t i = 0; i < 10000; i++)
		CHECK(put(m, i, EBPF_ANY) == 0);
	CHECK(ebpf_map__get_stats(m, &st) == 0 && st.entries == 100);
	int present = 0;
	for (uint32_t i = 9900; i < 10000; i++)
		present += has(m, i);
	CHECK(present == 100);
	ebpf_map__free(m);
	CHECK(ebpf_epoch_synchronize() == 0);
	return check_summary("maps_lru");
}
