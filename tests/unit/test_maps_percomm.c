/* Per-communicator maps in the engine (EBPF_MAP_F_PER_COMM): program-side operations on a
 * template act on the instance the thread has bound (ebpf_map__bind), with the interpreter and
 * the JIT alike (which must not inline lookups in a template), and on the template itself when
 * nothing is bound; user-side operations always act on the map they are given; only ARRAY and
 * HASH maps may be per-communicator; direct value access to one is refused. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "insn_macros.h"
#include "ebpf/helpers.h"
#include "ebpf/jit.h"
#include "ebpf/maps.h"
#include "ebpf/exec.h"

static struct ebpf_map *mk(uint32_t type, uint32_t flags, char *err, size_t len)
{
	struct ebpf_map_def d = {.sz = sizeof(d),
				 .name = "calls",
				 .type = type,
				 .key_size = 4,
				 .value_size = 8,
				 .max_entries = 4,
				 .flags = flags};
	return ebpf_map__create(&d, err, len);
}

/* r0 = ++(*lookup(map 0, key 0)), 0 when the lookup fails. */
static const struct ebpf_insn bump[] = {
    ST_MEM(EBPF_W, 10, -4, 0),
    LD_MAP_FD(1, 0),
    MOV64_REG(2, 10),
    ALU64_IMM(EBPF_ADD, 2, -4),
    CALL_HELPER(1),
    JMP_IMM(EBPF_JNE, 0, 0, 1),
    EXIT(),
    LDX_MEM(EBPF_DW, 1, 0, 0),
    ALU64_IMM(EBPF_ADD, 1, 1),
    STX_MEM(EBPF_DW, 0, 1, 0),
    MOV64_REG(0, 1),
    EXIT(),
};

static uint64_t value_of(struct ebpf_map *m)
{
	uint32_t k = 0;
	uint64_t v = 0;
	CHECK(ebpf_map__user_lookup(m, &k, &v) == 0);
	return v;
}

static uint64_t run(const struct ebpf_exec *p, enum ebpf_engine engine)
{
	uint64_t r0 = ~0ull;
	CHECK(ebpf_exec__run(p, engine, 0, 0, NULL, &r0) == 0);
	return r0;
}

/* Two instances and the template, each counting its own calls, with one engine. */
static void counts_per_instance(struct ebpf_exec *p, enum ebpf_engine engine, struct ebpf_map *tmpl)
{
	char err[160];
	struct ebpf_map *a = mk(EBPF_MAP_TYPE_ARRAY, 0, err, sizeof(err));
	struct ebpf_map *b = mk(EBPF_MAP_TYPE_ARRAY, 0, err, sizeof(err));
	struct ebpf_map_binding *ba = calloc(1, sizeof(*ba) + sizeof(ba->e[0]));
	struct ebpf_map_binding *bb = calloc(1, sizeof(*bb) + sizeof(bb->e[0]));
	CHECK(a && b && ba && bb);
	*ba = (struct ebpf_map_binding){.n = 1};
	ba->e[0].tmpl = tmpl;
	ba->e[0].inst = a;
	*bb = (struct ebpf_map_binding){.n = 1};
	bb->e[0].tmpl = tmpl;
	bb->e[0].inst = b;
	uint64_t before = value_of(tmpl);

	ebpf_map__bind(ba);
	CHECK_EQ_U64(run(p, engine), 1);
	CHECK_EQ_U64(run(p, engine), 2);
	ebpf_map__bind(bb);
	CHECK_EQ_U64(run(p, engine), 1);
	ebpf_map__bind(ba);
	CHECK_EQ_U64(run(p, engine), 3);
	/* user-side operations act on the map they are given, bound or not */
	CHECK_EQ_U64(value_of(tmpl), before);
	ebpf_map__bind(NULL);
	CHECK_EQ_U64(run(p, engine), before + 1);
	CHECK_EQ_U64(value_of(a), 3);
	CHECK_EQ_U64(value_of(b), 1);
	CHECK_EQ_U64(value_of(tmpl), before + 1);
	ebpf_map__free(a);
	ebpf_map__free(b);
	free(ba);
	free(bb);
}

static void test_binding(void)
{
	char err[160];
	struct ebpf_map *tmpl = mk(EBPF_MAP_TYPE_ARRAY, EBPF_MAP_F_PER_COMM, err, sizeof(err));
	CHECKF(tmpl != NULL, "%s", err);
	struct ebpf_map *maps[1] = {tmpl};
	struct ebpf_exec_opts po = {
	    .sz = sizeof(po), .helpers = ebpf_helpers_default(), .maps = maps, .n_maps = 1};
	struct ebpf_exec *p = ebpf_exec__new(bump, INSN_CNT(bump), &po, err, sizeof(err));
	CHECKF(p != NULL, "%s", err);
	counts_per_instance(p, EBPF_ENGINE_INTERP, tmpl);
	if (ebpf_jit_available()) {
		struct ebpf_jit_stats st;
		CHECK(ebpf_exec__jit(p, &st, err, sizeof(err)) == 0);
		/* the template's lookup goes through the helper, which resolves the binding */
		CHECK_EQ_U64(st.n_inlined, 0);
		counts_per_instance(p, EBPF_ENGINE_JIT, tmpl);

		/* the same program on a plain array is inlined: the check above means something */
		struct ebpf_map *plain = mk(EBPF_MAP_TYPE_ARRAY, 0, err, sizeof(err));
		struct ebpf_map *pm[1] = {plain};
		po.maps = pm;
		struct ebpf_exec *q = ebpf_exec__new(bump, INSN_CNT(bump), &po, err, sizeof(err));
		CHECK(q && ebpf_exec__jit(q, &st, err, sizeof(err)) == 0);
		CHECK_EQ_U64(st.n_inlined, 1);
		ebpf_exec__free(q);
		ebpf_map__free(plain);
	}
	ebpf_exec__free(p);

	/* direct value access would address the template's storage */
	const struct ebpf_insn direct[] = {LD_MAP_VALUE(0, 0, 0), LDX_MEM(EBPF_DW, 0, 0, 0),
					   EXIT()};
	po.maps = maps;
	p = ebpf_exec__new(direct, INSN_CNT(direct), &po, err, sizeof(err));
	CHECK(p == NULL);
	CHECKF(strstr(err, "not per-communicator"), "%s", err);
	ebpf_map__free(tmpl);
}

/* A HASH template: updates and deletes act on the bound instance, their results too. */
static void test_hash(void)
{
	char err[160];
	struct ebpf_map *tmpl = mk(EBPF_MAP_TYPE_HASH, EBPF_MAP_F_PER_COMM, err, sizeof(err));
	struct ebpf_map *inst = mk(EBPF_MAP_TYPE_HASH, 0, err, sizeof(err));
	CHECK(tmpl && inst);
	struct ebpf_map_binding *b = calloc(1, sizeof(*b) + sizeof(b->e[0]));
	CHECK(b != NULL);
	b->n = 1;
	b->e[0].tmpl = tmpl;
	b->e[0].inst = inst;
	uint32_t k = 7;
	uint64_t v = 5, out = 0;
	ebpf_map__bind(b);
	CHECK(ebpf_map__update_elem(tmpl, &k, &v, EBPF_NOEXIST) == 0);
	CHECK(ebpf_map__update_elem(tmpl, &k, &v, EBPF_NOEXIST) == -EEXIST);
	CHECK(ebpf_map__lookup_elem(tmpl, &k) != NULL);
	/* a user-side delete acts on the map given, bound or not (inst keeps k, checked below) */
	CHECK(ebpf_map__user_delete(tmpl, &k) == -ENOENT);
	ebpf_map__bind(NULL);
	CHECK(ebpf_map__lookup_elem(tmpl, &k) == NULL);
	CHECK(ebpf_map__user_lookup(inst, &k, &out) == 0 && out == 5);
	ebpf_map__bind(b);
	CHECK(ebpf_map__delete_elem(tmpl, &k) == 0);
	CHECK(ebpf_map__delete_elem(tmpl, &k) == -ENOENT);
	ebpf_map__bind(NULL);
	CHECK(ebpf_map__user_lookup(inst, &k, &out) == -ENOENT);
	free(b);
	ebpf_map__free(inst);
	ebpf_map__free(tmpl);
}

static void test_kinds(void)
{
	static const uint32_t refused[] = {EBPF_MAP_TYPE_PERCPU_ARRAY, EBPF_MAP_TYPE_PERCPU_HASH,
					   EBPF_MAP_TYPE_LRU_HASH};
	char err[200];
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct ebpf_map *m = mk(refused[i], EBPF_MAP_F_PER_COMM, err, sizeof(err));
		CHECK(m == NULL);
		CHECKF(strstr(err, "must be an ARRAY or a HASH"), "%s", err);
	}
	struct ebpf_map *m =
	    mk(EBPF_MAP_TYPE_ARRAY, EBPF_MAP_F_PER_COMM | EBPF_MAP_F_RDONLY_PROG, err, sizeof(err));
	CHECK(m == NULL);
	CHECKF(strstr(err, "read-only"), "%s", err);
	/* layout queries (what a JIT inlines with) refuse templates */
	void *base;
	uint32_t stride;
	m = mk(EBPF_MAP_TYPE_ARRAY, EBPF_MAP_F_PER_COMM, err, sizeof(err));
	CHECK(m && ebpf_map__array_layout(m, &base, &stride) == -EINVAL);
	ebpf_map__free(m);
}

int main(void)
{
	test_binding();
	test_hash();
	test_kinds();
	return check_summary("test_maps_percomm");
}
