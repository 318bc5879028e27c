/* The engine's helpers (helpers.h): thin, typed wrappers over maps, the clock, a per-thread
 * random generator and the CPU number. The log helper lives in trace_printk.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "ebpf/helpers.h"
#include "ebpf/maps.h"

uint64_t ebpf_helper_trace_printk(uint64_t fmt, uint64_t fmt_size, uint64_t a1, uint64_t a2,
				  uint64_t a3); /* trace_printk.c */

#define MAP(r) ((struct ebpf_map *)(uintptr_t)(r))
#define PTR(r) ((void *)(uintptr_t)(r))

static uint64_t h_map_lookup_elem(uint64_t map, uint64_t key, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return (uint64_t)(uintptr_t)ebpf_map__lookup_elem(MAP(map), PTR(key));
}

static uint64_t h_map_update_elem(uint64_t map, uint64_t key, uint64_t value, uint64_t flags,
				  uint64_t r5)
{
	/* The verifier rejects writes to read-only maps; this is the run-time backstop. */
	if (ebpf_map__flags(MAP(map)) & EBPF_MAP_F_RDONLY_PROG)
		return (uint64_t)(long)-EPERM;
	return (uint64_t)ebpf_map__update_elem(MAP(map), PTR(key), PTR(value), flags);
}

static uint64_t h_map_delete_elem(uint64_t map, uint64_t key, uint64_t r3, uint64_t r4, uint64_t r5)
{
	if (ebpf_map__flags(MAP(map)) & EBPF_MAP_F_RDONLY_PROG)
		return (uint64_t)(long)-EPERM;
	return (uint64_t)ebpf_map__delete_elem(MAP(map), PTR(key));
}

static uint64_t h_ktime_get_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xoshiro-style generator with per-thread state: no shared mutable state on the hot path. The
 * seed mixes the state's address (distinct per thread), the clock and a process-wide counter. */
static __thread uint64_t rnd_state[2];
static _Atomic uint64_t rnd_seed_counter;

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t h_get_prandom_u32(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	uint64_t *s = rnd_state;
	if (!(s[0] | s[1])) {
		uint64_t x =
		    h_ktime_get_ns(0, 0, 0, 0, 0) ^ (uint64_t)(uintptr_t)s ^
		    (atomic_fetch_add_explicit(&rnd_seed_counter, 1, memory_order_relaxed) << 32);
		s[0] = splitmix64(&x);
		s[1] = splitmix64(&x);
		if (!(s[0] | s[1]))
			s[1] = 1;
	}
	/* xorshift128+ */
	uint64_t a = s[0], b = s[1];
	s[0] = b;
	a ^= a << 23;
	s[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
	return (uint32_t)((s[1] + b) >> 32);
}

static uint64_t h_get_smp_processor_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5)
{
	int c = sched_getcpu();
	return c < 0 ? 0 : (uint64_t)c;
}

static uint64_t h_ringbuf_output(uint64_t map, uint64_t data, uint64_t size, uint64_t flags,
				 uint64_t r5)
{
	return (uint64_t)ebpf_ringbuf__output(MAP(map), PTR(data), size, flags);
}

static uint64_t h_ringbuf_reserve(uint64_t map, uint64_t size, uint64_t flags, uint64_t r4,
				  uint64_t r5)
{
	return (uint64_t)(uintptr_t)ebpf_ringbuf__reserve(MAP(map), size, flags);
}

static uint64_t h_ringbuf_submit(uint64_t data, uint64_t flags, uint64_t r3, uint64_t r4,
				 uint64_t r5)
{
	ebpf_ringbuf__submit(PTR(data), flags);
	return 0;
}

static uint64_t h_ringbuf_discard(uint64_t data, uint64_t flags, uint64_t r3, uint64_t r4,
				  uint64_t r5)
{
	ebpf_ringbuf__discard(PTR(data), flags);
	return 0;
}

#define A(x) EBPF_ARG_##x
#define PROTO(ID, FN, RET, FLAGS, ...)                                                             \
	static const struct ebpf_helper_proto proto_##ID = {EBPF_FUNC_##ID, #ID,  FN, RET,         \
							    {__VA_ARGS__},  FLAGS}

PROTO(map_lookup_elem, h_map_lookup_elem, EBPF_RET_MAP_VALUE_OR_NULL, 0, A(CONST_MAP),
      A(PTR_TO_KEY));
PROTO(map_update_elem, h_map_update_elem, EBPF_RET_INTEGER, 0, A(CONST_MAP), A(PTR_TO_KEY),
      A(PTR_TO_VALUE), A(ANYTHING));
PROTO(map_delete_elem, h_map_delete_elem, EBPF_RET_INTEGER, 0, A(CONST_MAP), A(PTR_TO_KEY));
PROTO(ktime_get_ns, h_ktime_get_ns, EBPF_RET_INTEGER, EBPF_HELPER_RANK_LOCAL, 0);
/* The return value reveals rate limiting, which differs per rank. */
PROTO(trace_printk, ebpf_helper_trace_printk, EBPF_RET_INTEGER, EBPF_HELPER_RANK_LOCAL,
      A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING), A(ANYTHING), A(ANYTHING));
PROTO(get_prandom_u32, h_get_prandom_u32, EBPF_RET_INTEGER, EBPF_HELPER_RANK_LOCAL, 0);
PROTO(get_smp_processor_id, h_get_smp_processor_id, EBPF_RET_INTEGER, EBPF_HELPER_RANK_LOCAL, 0);
/* Ring-buffer space depends on the local consumer: results are rank-local. */
PROTO(ringbuf_output, h_ringbuf_output, EBPF_RET_INTEGER, EBPF_HELPER_RANK_LOCAL, A(CONST_MAP),
      A(PTR_TO_MEM), A(CONST_SIZE), A(ANYTHING));
/* r2 is the record size: the verifier requires a known constant (Linux:
 * ARG_CONST_ALLOC_SIZE_OR_ZERO) and sizes the returned memory by it. */
PROTO(ringbuf_reserve, h_ringbuf_reserve, EBPF_RET_ALLOC_MEM_OR_NULL, EBPF_HELPER_RANK_LOCAL,
      A(CONST_MAP), A(ANYTHING), A(ANYTHING));
PROTO(ringbuf_submit, h_ringbuf_submit, EBPF_RET_VOID, 0, A(PTR_TO_ALLOC_MEM), A(ANYTHING));
PROTO(ringbuf_discard, h_ringbuf_discard, EBPF_RET_VOID, 0, A(PTR_TO_ALLOC_MEM), A(ANYTHING));
#undef A
#undef PROTO

/* Built at compile time: no initialisation, no lock, shareable by any thread. */
#define E(ID) [EBPF_FUNC_##ID] = &proto_##ID
static const struct ebpf_helper_table default_table = {{
    E(map_lookup_elem),
    E(map_update_elem),
    E(map_delete_elem),
    E(ktime_get_ns),
    E(trace_printk),
    E(get_prandom_u32),
    E(get_smp_processor_id),
    E(ringbuf_output),
    E(ringbuf_reserve),
    E(ringbuf_submit),
    E(ringbuf_discard),
}};
#undef E

const struct ebpf_helper_table *ebpf_helpers_default(void)
{
	return &default_table;
}

const struct ebpf_helper_proto *ebpf_helper_proto(uint32_t id)
{
	return id < EBPF_MAX_HELPERS ? ebpf_helpers_default()->by_id[id] : NULL;
}

void ebpf_helpers_subset(struct ebpf_helper_table *out, const uint32_t *ids, uint32_t n)
{
	*out = (struct ebpf_helper_table){0};
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] < EBPF_MAX_HELPERS)
			out->by_id[ids[i]] = ebpf_helper_proto(ids[i]);
}
