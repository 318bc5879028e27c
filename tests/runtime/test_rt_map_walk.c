/* The one walk over a map's elements from the user side (include/ncclbpf/map_walk.h), which a
 * reload's carry-over, `ncclbpf map dump` and the telemetry's exported maps use: every element
 * once with its value, a per-CPU map's every slot, a limit on the keys it visits, the callback's
 * stop, an empty map, and a callback that deletes the element it is shown (the walk goes on). */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "ebpf/maps.h"
#include "ncclbpf/map_walk.h"

struct seen {
	int calls;
	uint64_t keys, values; /* sums */
	int stop_at;	       /* the call that returns 7 (0: never) */
	struct ebpf_map *del;  /* deletes each key it is shown from this map */
	uint32_t vs;
};

static int see(const void *key, const void *value, void *arg)
{
	struct seen *s = arg;
	uint32_t k;
	uint64_t v = 0;
	memcpy(&k, key, 4);
	for (uint32_t off = 0; off < s->vs; off += 8) {
		uint64_t x;
		memcpy(&x, (const char *)value + off, 8);
		v += x;
	}
	s->calls++;
	s->keys += k;
	s->values += v;
	if (s->del)
		CHECK(ebpf_map__user_delete(s->del, key) == 0);
	return s->calls == s->stop_at ? 7 : 0;
}

static struct ebpf_map *make(uint32_t type, uint32_t max)
{
	char err[256] = "";
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = "m",
				 .type = type,
				 .key_size = 4,
				 .value_size = 8,
				 .max_entries = max};
	struct ebpf_map *m = ebpf_map__create(&d, err, sizeof(err));
	CHECKF(m != NULL, "%s", err);
	return m;
}

int main(void)
{
	struct ebpf_map *h = make(EBPF_MAP_TYPE_HASH, 16);
	if (!h)
		return check_summary("test_rt_map_walk");
	struct seen s = {.vs = 8};
	CHECK(ncclbpf_map_walk(h, 0, see, &s) == 0 && s.calls == 0); /* empty */
	for (uint32_t k = 1; k <= 5; k++) {
		uint64_t v = 100 * k;
		CHECK(ebpf_map__user_update(h, &k, &v, EBPF_ANY) == 0);
	}
	s = (struct seen){.vs = 8};
	CHECK(ncclbpf_map_walk(h, 0, see, &s) == 0);
	CHECK(s.calls == 5 && s.keys == 15 && s.values == 1500);
	s = (struct seen){.vs = 8};
	CHECK(ncclbpf_map_walk(h, 3, see, &s) == 0 && s.calls == 3);
	s = (struct seen){.vs = 8, .stop_at = 2};
	CHECK(ncclbpf_map_walk(h, 0, see, &s) == 7 && s.calls == 2);
	s = (struct seen){.vs = 8, .del = h};
	CHECK(ncclbpf_map_walk(h, 0, see, &s) == 0);
	CHECKF(s.calls == 5 && s.keys == 15, "deleting while walking: %d calls", s.calls);
	s = (struct seen){.vs = 8};
	CHECK(ncclbpf_map_walk(h, 0, see, &s) == 0 && s.calls == 0);
	ebpf_map__free(h);

	/* Per-CPU: the value is every CPU's slot. */
	struct ebpf_map *pc = make(EBPF_MAP_TYPE_PERCPU_ARRAY, 2);
	if (pc) {
		uint32_t ncpu = ebpf_map__num_cpus(pc), k = 1;
		size_t us = ebpf_map__user_value_size(pc);
		CHECK(us == (size_t)ncpu * 8);
		uint64_t v[1024] = {0};
		for (uint32_t c = 0; c < ncpu && c < 1024; c++)
			v[c] = c + 1;
		CHECK(ncpu <= 1024 && ebpf_map__user_update(pc, &k, v, EBPF_ANY) == 0);
		s = (struct seen){.vs = (uint32_t)us};
		CHECK(ncclbpf_map_walk(pc, 0, see, &s) == 0);
		CHECKF(s.calls == 2 && s.keys == 1 && s.values == (uint64_t)ncpu * (ncpu + 1) / 2,
		       "per-CPU: %d calls, keys %llu, values %llu", s.calls,
		       (unsigned long long)s.keys, (unsigned long long)s.values);
		ebpf_map__free(pc);
	}
	return check_summary("test_rt_map_walk");
}
