/* The default helper table: ids, names, typed prototypes, rank-local flags, and each helper's
 * behaviour through its function pointer (as a program would call it). */
#include <errno.h>
#include <string.h>

#include "ebpf/helpers.h"
#include "ebpf/maps.h"
#include "check.h"

#define U(p) ((uint64_t)(uintptr_t)(p))

static uint64_t call(uint32_t id, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	const struct ebpf_helper_proto *p = ebpf_helpers_default()->by_id[id];
	return p->fn(a, b, c, d, e);
}

static void test_table(void)
{
	const struct ebpf_helper_table *t = ebpf_helpers_default();
	static const uint32_t ids[] = {1, 2, 3, 5, 6, 7, 8, 130, 131, 132, 133};
	int n = 0;
	for (uint32_t i = 0; i < EBPF_MAX_HELPERS; i++) {
		if (!t->by_id[i])
			continue;
		n++;
		CHECK(t->by_id[i]->id == i);
		CHECK(t->by_id[i]->fn != NULL && t->by_id[i]->name != NULL);
	}
	CHECK(n == (int)(sizeof(ids) / sizeof(ids[0])));
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		CHECK(t->by_id[ids[i]] != NULL);
	CHECK(strcmp(t->by_id[1]->name, "map_lookup_elem") == 0);
	CHECK(t->by_id[1]->ret == EBPF_RET_MAP_VALUE_OR_NULL);
	CHECK(t->by_id[1]->args[0] == EBPF_ARG_CONST_MAP &&
	      t->by_id[1]->args[1] == EBPF_ARG_PTR_TO_KEY);
	CHECK(t->by_id[2]->args[2] == EBPF_ARG_PTR_TO_VALUE);
	CHECK(t->by_id[131]->ret == EBPF_RET_ALLOC_MEM_OR_NULL);
	CHECK(t->by_id[132]->args[0] == EBPF_ARG_PTR_TO_ALLOC_MEM &&
	      t->by_id[132]->ret == EBPF_RET_VOID);
	CHECK(t->by_id[6]->args[0] == EBPF_ARG_PTR_TO_MEM &&
	      t->by_id[6]->args[1] == EBPF_ARG_CONST_SIZE);
	CHECK(t->by_id[130]->args[1] == EBPF_ARG_PTR_TO_MEM &&
	      t->by_id[130]->args[2] == EBPF_ARG_CONST_SIZE);
	CHECK(t->by_id[5]->flags & EBPF_HELPER_RANK_LOCAL);
	CHECK(t->by_id[7]->flags & EBPF_HELPER_RANK_LOCAL);
	CHECK(t->by_id[8]->flags & EBPF_HELPER_RANK_LOCAL);
	CHECK(!(t->by_id[1]->flags & EBPF_HELPER_RANK_LOCAL));
	CHECK(ebpf_helper_proto(4) == NULL && ebpf_helper_proto(100000) == NULL);
	struct ebpf_helper_table sub;
	uint32_t want[] = {1, 5, 4, 9999};
	ebpf_helpers_subset(&sub, want, 4);
	CHECK(sub.by_id[1] == t->by_id[1] && sub.by_id[5] == t->by_id[5] && !sub.by_id[2]);
}

static void test_map_helpers(void)
{
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = "m",
				 .type = EBPF_MAP_TYPE_HASH,
				 .key_size = 4,
				 .value_size = 8,
				 .max_entries = 4};
	struct ebpf_map *m = ebpf_map__create(&d, NULL, 0);
	uint32_t k = 3;
	uint64_t v = 77;
	CHECK(call(1, U(m), U(&k), 0, 0, 0) == 0);
	CHECK((long)call(2, U(m), U(&k), U(&v), EBPF_NOEXIST, 0) == 0);
	CHECK((long)call(2, U(m), U(&k), U(&v), EBPF_NOEXIST, 0) == -EEXIST);
	uint64_t *p = (uint64_t *)(uintptr_t)call(1, U(m), U(&k), 0, 0, 0);
	CHECK(p && *p == 77);
	CHECK((long)call(3, U(m), U(&k), 0, 0, 0) == 0);
	CHECK((long)call(3, U(m), U(&k), 0, 0, 0) == -ENOENT);
	ebpf_map__free(m);
	/* Read-only maps refuse program writes at run time too. */
	d.type = EBPF_MAP_TYPE_ARRAY;
	d.flags = EBPF_MAP_F_RDONLY_PROG;
	m = ebpf_map__create(&d, NULL, 0);
	k = 0;
	CHECK((long)call(2, U(m), U(&k), U(&v), 0, 0) == -EPERM);
	CHECK((long)call(3, U(m), U(&k), 0, 0, 0) == -EPERM);
	CHECK(ebpf_map__user_update(m, &k, &v, 0) == 0); /* the loader may initialise it */
	ebpf_map__free(m);
}

static void test_misc(void)
{
	uint64_t t1 = call(5, 0, 0, 0, 0, 0), t2 = call(5, 0, 0, 0, 0, 0);
	CHECK(t1 > 0 && t2 >= t1);
	uint32_t bits_or = 0, bits_and = ~0u;
	int same = 0;
	uint64_t prev = call(7, 0, 0, 0, 0, 0);
	for (int i = 0; i < 1000; i++) {
		uint64_t r = call(7, 0, 0, 0, 0, 0);
		CHECK(r <= UINT32_MAX);
		bits_or |= (uint32_t)r;
		bits_and &= (uint32_t)r;
		same += r == prev;
		prev = r;
	}
	CHECK(bits_or == ~0u && bits_and == 0 && same < 3);
	uint64_t cpu = call(8, 0, 0, 0, 0, 0);
	CHECK(cpu < 65536);
}

int main(void)
{
	test_table();
	test_map_helpers();
	test_misc();
	return check_summary("helpers_basic");
}
