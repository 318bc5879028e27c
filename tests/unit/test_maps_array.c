#define _GNU_SOURCE
/* ARRAY and PERCPU_ARRAY semantics: creation checks, lookup never NULL below max_entries,
 * update flags, delete -EINVAL, get_next_key, per-CPU user copies, alignment, stats. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/epoch.h"
#include "ebpf/maps.h"
#include "check.h"

static struct ebpf_map *mk(uint32_t type, uint32_t ks, uint32_t vs, uint32_t n, char *err)
{
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = "a",
				 .type = type,
				 .key_size = ks,
				 .value_size = vs,
				 .max_entries = n};
	return ebpf_map__create(&d, err, 128);
}

static void test_create_errors(void)
{
	char err[128];
	errno = 0;
	CHECK(!mk(EBPF_MAP_TYPE_ARRAY, 8, 8, 4, err));
	CHECK(errno == EINVAL);
	CHECK(strstr(err, "key_size must be 4") != NULL);
	CHECK(!mk(EBPF_MAP_TYPE_ARRAY, 4, 0, 4, err));
	CHECK(!mk(EBPF_MAP_TYPE_ARRAY, 4, 8, 0, err));
	/* the value size limit is every type's */
	static const uint32_t types[] = {EBPF_MAP_TYPE_ARRAY, EBPF_MAP_TYPE_PERCPU_ARRAY,
					 EBPF_MAP_TYPE_HASH, EBPF_MAP_TYPE_PERCPU_HASH,
					 EBPF_MAP_TYPE_LRU_HASH};
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		errno = 0;
		CHECK(!mk(types[t], 4, EBPF_MAP_MAX_VALUE_SIZE + 1, 1, err));
		CHECK(errno == E2BIG && strstr(err, "value_size") != NULL);
	}
	errno = 0;
	CHECK(!mk(EBPF_MAP_TYPE_ARRAY, 4, EBPF_MAP_MAX_VALUE_SIZE, 1u << 20, err));
	CHECK(errno == E2BIG);
	CHECK(!mk(77, 4, 8, 4, err));
	CHECK(strstr(err, "unsupported map type 77") != NULL);
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = "f",
				 .type = EBPF_MAP_TYPE_ARRAY,
				 .key_size = 4,
				 .value_size = 4,
				 .max_entries = 1,
				 .flags = 0x1};
	CHECK(!ebpf_map__create(&d, err, sizeof(err)));
	d.flags = EBPF_MAP_F_RDONLY_PROG;
	struct ebpf_map *m = ebpf_map__create(&d, err, sizeof(err));
	CHECK(m && ebpf_map__flags(m) == EBPF_MAP_F_RDONLY_PROG);
	ebpf_map__free(m);
	d.sz = 8; /* too small to hold the fields */
	CHECK(!ebpf_map__create(&d, err, sizeof(err)));
}

static void test_array(void)
{
	char err[128];
	struct ebpf_map *m = mk(EBPF_MAP_TYPE_ARRAY, 4, 12, 5, err);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(strcmp(ebpf_map__name(m), "a") == 0);
	CHECK(ebpf_map__type(m) == EBPF_MAP_TYPE_ARRAY);
	CHECK(ebpf_map__key_size(m) == 4 && ebpf_map__value_size(m) == 12);
	CHECK(ebpf_map__max_entries(m) == 5 && ebpf_map__num_cpus(m) == 1);
	CHECK(ebpf_map__user_value_size(m) == 12);
	for (uint32_t i = 0; i < 5; i++) {
		unsigned char *v = ebpf_map__lookup_elem(m, &i);
		CHECK(v != NULL);
		CHECK(((uintptr_t)v & 7) == 0);
		static const unsigned char zero[12];
		CHECK(v && memcmp(v, zero, 12) == 0);
	}
	uint32_t k = 5;
	CHECK(ebpf_map__lookup_elem(m, &k) == NULL);
	k = UINT32_MAX;
	CHECK(ebpf_map__lookup_elem(m, &k) == NULL);
	unsigned char val[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, out[12];
	k = 2;
	CHECK(ebpf_map__update_elem(m, &k, val, EBPF_NOEXIST) == -EEXIST);
	CHECK(ebpf_map__update_elem(m, &k, val, 3) == -EINVAL);
	CHECK(ebpf_map__update_elem(m, &k, val, EBPF_EXIST) == 0);
	CHECK(ebpf_map__user_lookup(m, &k, out) == 0 && memcmp(out, val, 12) == 0);
	unsigned char *p = ebpf_map__lookup_elem(m, &k);
	CHECK(p && memcmp(p, val, 12) == 0);
	val[0] = 99;
	CHECK(ebpf_map__update_elem(m, &k, val, EBPF_ANY) == 0);
	CHECK(p && p[0] == 99); /* in place: the pointer stays valid and current */
	k = 5;
	CHECK(ebpf_map__update_elem(m, &k, val, EBPF_ANY) == -E2BIG);
	CHECK(ebpf_map__user_lookup(m, &k, out) == -ENOENT);
	k = 1;
	CHECK(ebpf_map__delete_elem(m, &k) == -EINVAL);
	CHECK(ebpf_map__user_delete(m, &k) == -EINVAL);
	/* Atomic increments on the value work (8-byte aligned words). */
	uint64_t *w = ebpf_map__lookup_elem(m, &k);
	__atomic_fetch_add(w, 5, __ATOMIC_RELAXED);
	CHECK(*w == 5);
	/* get_next_key: NULL or out-of-range key gives 0, last gives -ENOENT. */
	uint32_t nk = 77;
	CHECK(ebpf_map__get_next_key(m, NULL, &nk) == 0 && nk == 0);
	k = 100;
	CHECK(ebpf_map__get_next_key(m, &k, &nk) == 0 && nk == 0);
	k = 3;
	CHECK(ebpf_map__get_next_key(m, &k, &nk) == 0 && nk == 4);
	k = 4;
	CHECK(ebpf_map__get_next_key(m, &k, &nk) == -ENOENT);
	struct ebpf_map_stats st = {.sz = sizeof(st)};
	CHECK(ebpf_map__get_stats(m, &st) == 0);
	CHECK(st.entries == 5 && st.updates == 2 && st.update_fails == 3);
	ebpf_map__free(m);
}

static void test_percpu_array(void)
{
	char err[128];
	struct ebpf_map *m = mk(EBPF_MAP_TYPE_PERCPU_ARRAY, 4, 4, 3, err);
	CHECK(m != NULL);
	if (!m)
		return;
	uint32_t n = ebpf_map__num_cpus(m);
	CHECK(n >= 1);
	CHECK(ebpf_map__user_value_size(m) == (size_t)n * 8);
	unsigned char *all = malloc((size_t)n * 8), *out = malloc((size_t)n * 8);
	for (uint32_t c = 0; c < n; c++) {
		uint64_t v = 0x1111111100000000ull | (c + 1); /* upper half is padding */
		memcpy(all + c * 8, &v, 8);
	}
	uint32_t k = 1;
	CHECK(ebpf_map__user_update(m, &k, all, EBPF_ANY) == 0);
	CHECK(ebpf_map__user_lookup(m, &k, out) == 0);
	for (uint32_t c = 0; c < n; c++) {
		uint32_t v, pad;
		memcpy(&v, out + c * 8, 4);
		memcpy(&pad, out + c * 8 + 4, 4);
		CHECK(v == c + 1 && pad == 0);
	}
	/* Program side: this CPU's slot. Pin to make the slot predictable. */
	cpu_set_t set;
	CPU_ZERO(&set);
	int cpu = sched_getcpu();
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) == 0 && (uint32_t)cpu < n) {
		uint32_t *p = ebpf_map__lookup_elem(m, &k);
		CHECK(p && *p == (uint32_t)cpu + 1);
		uint32_t nv = 4242;
		CHECK(ebpf_map__update_elem(m, &k, &nv, EBPF_ANY) == 0);
		CHECK(ebpf_map__user_lookup(m, &k, out) == 0);
		uint32_t got;
		memcpy(&got, out + (size_t)cpu * 8, 4);
		CHECK(got == 4242);
		for (uint32_t c = 0; c < n; c++) {
			memcpy(&got, out + c * 8, 4);
			CHECK(c == (uint32_t)cpu || got == c + 1);
		}
	}
	k = 3;
	CHECK(ebpf_map__lookup_elem(m, &k) == NULL);
	CHECK(ebpf_map__user_update(m, &k, all, EBPF_ANY) == -E2BIG);
	CHECK(ebpf_map__delete_elem(m, &k) == -EINVAL);
	free(all);
	free(out);
	ebpf_map__free(m);
}

static void test_freeze_layout_matches(void)
{
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = ".rodata",
				 .type = EBPF_MAP_TYPE_ARRAY,
				 .key_size = 4,
				 .value_size = 20,
				 .max_entries = 3,
				 .flags = EBPF_MAP_F_RDONLY_PROG};
	struct ebpf_map *m = ebpf_map__create(&d, NULL, 0);
	CHECK(m != NULL);
	if (!m)
		return;
	CHECK(ebpf_map__def_matches(m, &d));
	d.value_size = 24;
	CHECK(!ebpf_map__def_matches(m, &d));
	d.value_size = 20;
	d.name = "other";
	CHECK(!ebpf_map__def_matches(m, &d));
	void *base = NULL;
	uint32_t stride = 0, k = 2;
	CHECK(ebpf_map__array_layout(m, &base, &stride) == 0 && stride == 24);
	CHECK((unsigned char *)base + 2 * stride == ebpf_map__lookup_elem(m, &k));
	unsigned char v[20] = {7};
	CHECK(ebpf_map__user_update(m, &k, v, EBPF_ANY) == 0);
	CHECK(!ebpf_map__is_frozen(m));
	CHECK(ebpf_map__freeze(m) == 0 && ebpf_map__is_frozen(m));
	CHECK(ebpf_map__user_update(m, &k, v, EBPF_ANY) == -EPERM);
	CHECK(ebpf_map__user_delete(m, &k) == -EPERM);
	unsigned char out[20];
	CHECK(ebpf_map__user_lookup(m, &k, out) == 0 && out[0] == 7);
	ebpf_map__free(m);
	d.type = EBPF_MAP_TYPE_PERCPU_ARRAY;
	d.flags = 0;
	m = ebpf_map__create(&d, NULL, 0);
	CHECK(m && ebpf_map__array_layout(m, &base, &stride) == -EINVAL);
	ebpf_map__free(m);
	CHECK(strcmp(ebpf_map_type__name(EBPF_MAP_TYPE_LRU_HASH), "lru_hash") == 0);
	CHECK(strcmp(ebpf_map_type__name(1234), "unknown") == 0);
}

int main(void)
{
	test_create_errors();
	test_array();
	test_percpu_array();
	test_freeze_layout_matches();
	CHECK(ebpf_epoch_synchronize() == 0);
	return check_summary("maps_array");
}
