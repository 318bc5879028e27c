/* HASH, PERCPU_HASH and LRU_HASH semantics: flags, errors, full map, stable pointers across
 * replace (old value retired, not freed, while inside an epoch section), iteration. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/epoch.h"
#include "ebpf/maps.h"
#include "check.h"

static struct ebpf_map *mk(uint32_t type, uint32_t ks, uint32_t vs, uint32_t n)
{
	char err[128];
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = "h",
				 .type = type,
				 .key_size = ks,
				 .value_size = vs,
				 .max_entries = n};
	struct ebpf_map *m = ebpf_map__create(&d, err, sizeof(err));
	if (!m)
		fprintf(stderr, "create: %s\n", err);
	return m;
}

static void test_create_errors(void)
{
	CHECK(!mk(EBPF_MAP_TYPE_HASH, 0, 8, 4));
	CHECK(!mk(EBPF_MAP_TYPE_HASH, 4, 0, 4));
	CHECK(!mk(EBPF_MAP_TYPE_HASH, 4, 8, 0));
	errno = 0;
	CHECK(!mk(EBPF_MAP_TYPE_LRU_HASH, EBPF_MAP_MAX_KEY_SIZE + 1, 8, 4));
	CHECK(errno == E2BIG);
}

static void test_hash(void)
{
	struct ebpf_map *m = mk(EBPF_MAP_TYPE_HASH, 6, 8, 3); /* odd key size */
	if (!m) {
		CHECK(0);
		return;
	}
	unsigned char k[3][6] = {"abcde", "bcdef", "cdefg"}, k4[6] = "zzzzz";
	uint64_t v = 10, out;
	CHECK(ebpf_map__lookup_elem(m, k[0]) == NULL);
	CHECK(ebpf_map__update_elem(m, k[0], &v, EBPF_EXIST) == -ENOENT);
	CHECK(ebpf_map__update_elem(m, k[0], &v, 4) == -EINVAL);
	CHECK(ebpf_map__update_elem(m, k[0], &v, EBPF_NOEXIST) == 0);
	CHECK(ebpf_map__update_elem(m, k[0], &v, EBPF_NOEXIST) == -EEXIST);
	uint64_t *p = ebpf_map__lookup_elem(m, k[0]);
	CHECK(p && *p == 10 && ((uintptr_t)p & 7) == 0);
	v = 11;
	CHECK(ebpf_map__update_elem(m, k[1], &v, EBPF_ANY) == 0);
	v = 12;
	CHECK(ebpf_map__update_elem(m, k[2], &v, EBPF_ANY) == 0);
	v = 13;
	CHECK(ebpf_map__update_elem(m, k4, &v, EBPF_ANY) == -E2BIG);
	CHECK(ebpf_map__update_elem(m, k4, &v, EBPF_NOEXIST) == -E2BIG);
	/* Replacing an existing key works when full. */
	CHECK(ebpf_map__update_elem(m, k[1], &v, EBPF_EXIST) == 0);
	CHECK(ebpf_map__user_lookup(m, k[1], &out) == 0 && out == 13);
	CHECK(ebpf_map__user_lookup(m, k4, &out) == -ENOENT);
	/* Stable pointer: a reader inside a section keeps a valid (old) value across replace. */
	ebpf_epoch_enter();
	uint64_t *old = ebpf_map__lookup_elem(m, k[2]);
	v = 99;
	CHECK(ebpf_map__update_elem(m, k[2], &v, EBPF_ANY) == 0);
	CHECK(old && *old == 12); /* still readable: retired, not freed (ASan would object) */
	__atomic_fetch_add(old, 1, __ATOMIC_RELAXED);
	CHECK(ebpf_map__delete_elem(m, k[0]) == 0);
	CHECK(p && *p == 10);
	CHECK(ebpf_epoch_synchronize() == -EDEADLK);
	ebpf_epoch_exit();
	CHECK(ebpf_epoch_synchronize() == 0);
	CHECK(ebpf_map__delete_elem(m, k[0]) == -ENOENT);
	CHECK(ebpf_map__lookup_elem(m, k[0]) == NULL);
	/* Iteration visits each key once. */
	unsigned char cur[6], nxt[6];
	int seen = 0, steps = 0;
	const void *prev = NULL;
	while (ebpf_map__get_next_key(m, prev, nxt) == 0 && steps++ < 10) {
		if (!memcmp(nxt, k[1], 6))
			seen |= 1;
		else if (!memcmp(nxt, k[2], 6))
			seen |= 2;
		else
			seen |= 4;
		memcpy(cur, nxt, 6);
		prev = cur;
	}
	CHECK(seen == 3 && steps == 2);
	/* A key that is not present restarts from the first key (Linux). */
	CHECK(ebpf_map__get_next_key(m, k4, nxt) == 0);
	struct ebpf_map_stats st = {.sz = sizeof(st)};
	CHECK(ebpf_map__get_stats(m, &st) == 0 && st.entries == 2 && st.deletes == 1);
	ebpf_map__free(m);
}

/* Many keys: chains, growth to max_entries, delete all, reuse. */
static void test_hash_many(void)
{
	const uint32_t n = 5000;
	struct ebpf_map *m = mk(EBPF_MAP_TYPE_HASH, 4, 4, n);
	if (!m) {
		CHECK(0);
		return;
	}
	int bad = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = i * 7919u, v = i;
		bad += ebpf_map__update_elem(m, &k, &v, EBPF_NOEXIST) != 0;
	}
	uint32_t k = 1, v = 1;
	CHECK(ebpf_map__update_elem(m, &k, &v, EBPF_ANY) == -E2BIG);
	for (uint32_t i = 0; i < n; i++) {
		k = i * 7919u;
		uint32_t *p = ebpf_map__lookup_elem(m, &k);
		bad += !p || *p != i;
	}
	uint32_t cnt = 0, nk, ck;
	const void *prev = NULL;
	while (ebpf_map__get_next_key(m, prev, &nk) == 0 && cnt <= n) {
		cnt++;
		ck = nk;
		prev = &ck;
	}
	CHECK_EQ_U64(cnt, n);
	for (uint32_t i = 0; i < n; i += 2) {
		k = i * 7919u;
		bad += ebpf_map__delete_elem(m, &k) != 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		k = i * 7919u;
		bad += (ebpf_map__lookup_elem(m, &k) != NULL) != (i & 1);
	}
	CHECK(bad == 0);
	ebpf_map__free(m);
}

static void test_percpu_hash(void)
{
	struct ebpf_map *m = mk(EBPF_MAP_TYPE_PERCPU_HASH, 4, 8, 2);
	if (!m) {
		CHECK(0);
		return;
	}
	uint32_t n = ebpf_map__num_cpus(m);
	CHECK(ebpf_map__user_value_size(m) == (size_t)n * 8);
	uint64_t *all = calloc(n, 8), *out = calloc(n, 8);
	for (uint32_t c = 0; c < n; c++)
		all[c] = 100 + c;
	uint32_t k = 7;
	CHECK(ebpf_map__user_update(m, &k, all, EBPF_NOEXIST) == 0);
	CHECK(ebpf_map__user_update(m, &k, all, EBPF_NOEXIST) == -EEXIST);
	CHECK(ebpf_map__user_lookup(m, &k, out) == 0 && memcmp(all, out, n * 8) == 0);
	cpu_set_t set;
	CPU_ZERO(&set);
	int cpu = sched_getcpu();
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) == 0 && (uint32_t)cpu < n) {
		uint64_t *p = ebpf_map__lookup_elem(m, &k);
		CHECK(p && *p == 100u + (uint32_t)cpu);
		uint64_t nv = 5;
		/* Program-side update of an existing element: in place, this CPU only. */
		CHECK(ebpf_map__update_elem(m, &k, &nv, EBPF_EXIST) == 0);
		CHECK(p && *p == 5);
		/* Program-side insert: this CPU's slot set, the others zero. */
		uint32_t k2 = 8;
		CHECK(ebpf_map__update_elem(m, &k2, &nv, EBPF_ANY) == 0);
		CHECK(ebpf_map__user_lookup(m, &k2, out) == 0);
		for (uint32_t c = 0; c < n; c++)
			CHECK(out[c] == (c == (uint32_t)cpu ? 5u : 0u));
		uint32_t k3 = 9;
		CHECK(ebpf_map__update_elem(m, &k3, &nv, EBPF_ANY) == -E2BIG);
	}
	CHECK(ebpf_map__delete_elem(m, &k) == 0);
	CHECK(ebpf_map__user_lookup(m, &k, out) == -ENOENT);
	free(all);
	free(out);
	ebpf_map__free(m);
}

/* Keys of several words (compared word by word inline up to 32 bytes, by memcmp beyond): keys
 * that differ only in their last word, or only in one byte of a middle word, are distinct. */
static void test_word_keys(void)
{
	static const uint32_t sizes[] = {8, 12, 16, 24, 32, 40};
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t ks = sizes[s];
		struct ebpf_map *m = mk(EBPF_MAP_TYPE_HASH, ks, 8, 64);
		if (!m) {
			CHECK(0);
			continue;
		}
		unsigned char k[40];
		int bad = 0;
		/* Key i: all bytes 0x5a except byte (i % ks), which is i. */
		for (uint64_t i = 0; i < 32; i++) {
			memset(k, 0x5a, sizeof(k));
			k[(ks - 1 - i) % ks] = (unsigned char)i;
			bad += ebpf_map__update_elem(m, k, &i, EBPF_NOEXIST) != 0;
		}
		for (uint64_t i = 0; i < 32; i++) {
			memset(k, 0x5a, sizeof(k));
			k[(ks - 1 - i) % ks] = (unsigned char)i;
			uint64_t *v = ebpf_map__lookup_elem(m, k);
			bad += !v || *v != i;
		}
		memset(k, 0x5a, sizeof(k));
		k[ks - 1] = 0x7f; /* differs from every key above in the last byte only */
		bad += ebpf_map__lookup_elem(m, k) != NULL;
		CHECK(bad == 0);
		if (bad)
			fprintf(stderr, "key size %u: %d wrong\n", ks, bad);
		ebpf_map__free(m);
	}
}

int main(void)
{
	test_create_errors();
	test_hash();
	test_hash_many();
	test_word_keys();
	test_percpu_hash();
	CHECK(ebpf_epoch_synchronize() == 0);
	return check_summary("maps_hash");
}
