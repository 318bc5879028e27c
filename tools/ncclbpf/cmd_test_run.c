/* `ncclbpf test-run FILE.o --prog NAME [--ctx f=v,...] [--ctx-hex HEX] [--repeat N]`: loads the
 * object (maps, verification), runs one program on a context built from its program type's
 * field table, and prints the return value, the writable (output) fields and every map entry the
 * run added, changed or deleted. This is how policy authors unit-test a policy offline.
 *
 * Context: all zero, except for tuner programs, whose outputs start at their DEFAULT values and
 * whose cost table is fully filled (num_algo/num_proto at their maxima) as NCCL does. Then
 * --ctx-hex bytes, then --ctx assignments:  name=value  name[i]=value  name[i][j]=value, where a
 * value is a number (decimal, 0x hex, negative where the field is signed), NA (all ones), or an
 * NCCL name in either spelling (RING or Ring, ALLREDUCE or AllReduce, COLLNET_DIRECT or
 * CollNetDirect, LL128, COLL_END, ...); name=value on an array field sets every element. A value
 * outside the field's range (its size, its sign, the ids NCCL defines) is refused. The inputs
 * used, defaults included, are printed before the outputs. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_json.h"
#include "hexio.h"
#include "ncclbpf.h"
#include "ebpf/epoch.h"
#include "ebpf/jit.h"
#include "ebpf/object.h"
#include "ncclbpf/map_walk.h"
#include "ncclbpf/nccl_platform.h"

#define MAX_REPEAT   100000000ull
#define MAX_SNAPSHOT (1u << 20) /* entries per map */

/* --- Context construction ------------------------------------------------------------------ */

/* Array shapes of the context fields that are arrays (the type tables give bytes only). */
struct shape {
	const char *type, *field;
	uint32_t elem, dims[2];
};
static const struct shape shapes[] = {
    {"tuner", "cost_ns", 8, {NCCLBPF_NUM_ALGOS, NCCLBPF_NUM_PROTOS}},
    {"net", "peer_addr", 4, {4, 1}},
};

static const struct shape *shape_of(const struct ebpf_prog_type *t, const char *field)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (!strcmp(shapes[i].type, t->name) && !strcmp(shapes[i].field, field))
			return &shapes[i];
	return NULL;
}

static const struct {
	const char *name;
	int64_t value;
} names[] = {
    {"NA", -1},
    {"DEFAULT", -1},
    {"BROADCAST", NCCLBPF_COLL_BROADCAST},
    {"REDUCE", NCCLBPF_COLL_REDUCE},
    {"ALLGATHER", NCCLBPF_COLL_ALLGATHER},
    {"REDUCESCATTER", NCCLBPF_COLL_REDUCESCATTER},
    {"ALLREDUCE", NCCLBPF_COLL_ALLREDUCE},
    {"TREE", NCCLBPF_ALGO_TREE},
    {"RING", NCCLBPF_ALGO_RING},
    {"COLLNET_DIRECT", NCCLBPF_ALGO_COLLNET_DIRECT},
    {"COLLNET_CHAIN", NCCLBPF_ALGO_COLLNET_CHAIN},
    {"NVLS", NCCLBPF_ALGO_NVLS},
    {"NVLS_TREE", NCCLBPF_ALGO_NVLS_TREE},
    {"PAT", NCCLBPF_ALGO_PAT},
    {"LL", NCCLBPF_PROTO_LL},
    {"LL128", NCCLBPF_PROTO_LL128},
    {"SIMPLE", NCCLBPF_PROTO_SIMPLE},
    {"COLL_START", NCCLBPF_PROF_COLL_START},
    {"COLL_END", NCCLBPF_PROF_COLL_END},
    {"KERNEL_CH", NCCLBPF_PROF_KERNEL_CH},
    {"PROXY_OP", NCCLBPF_PROF_PROXY_OP},
    {"CONNECT", NCCLBPF_NET_CONNECT},
    {"ACCEPT", NCCLBPF_NET_ACCEPT},
    {"ISEND", NCCLBPF_NET_ISEND},
    {"IRECV", NCCLBPF_NET_IRECV},
    {"COMPLETE", NCCLBPF_NET_COMPLETE},
};

/* NCCL's names compare without case and underscores: RING = Ring, COLLNET_DIRECT = CollNetDirect,
 * ALLREDUCE = AllReduce. */
static int same_name(const char *a, const char *b)
{
	for (;; a++, b++) {
		while (*a == '_')
			a++;
		while (*b == '_')
			b++;
		if (toupper((unsigned char)*a) != toupper((unsigned char)*b))
			return 0;
		if (!*a)
			return 1;
	}
}

/* *all_ones: the value is NA/DEFAULT, all ones whatever the field's size. */
static int parse_value(const char *s, uint64_t *v, int *all_ones)
{
	*all_ones = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (same_name(s, names[i].name)) {
			*v = (uint64_t)names[i].value;
			*all_ones = names[i].value == -1;
			return 0;
		}
	}
	char *end;
	errno = 0;
	if (s[0] == '-') {
		long long x = strtoll(s, &end, 0);
		*v = (uint64_t)x;
	} else {
		*v = strtoull(s, &end, 0);
	}
	return (errno || end == s || *end) ? -1 : 0;
}

/* The fields whose values are NCCL ids or bounded counts, and the signed fields (min < 0); every
 * other field is unsigned and takes what fits its size. */
static const struct range {
	const char *type, *field; /* type NULL: every program type with that field */
	int64_t min, max;
} ranges[] = {
    {NULL, "coll_type", NCCLBPF_COLL_BROADCAST, NCCLBPF_COLL_ALLREDUCE},
    {NULL, "algorithm", NCCLBPF_ALGO_DEFAULT, NCCLBPF_NUM_ALGOS - 1},
    {NULL, "protocol", NCCLBPF_PROTO_DEFAULT, NCCLBPF_NUM_PROTOS - 1},
    {"tuner", "num_algo", 0, NCCLBPF_NUM_ALGOS},
    {"tuner", "num_proto", 0, NCCLBPF_NUM_PROTOS},
    {"tuner", "n_channels", NCCLBPF_CHANNELS_DEFAULT, 64},
    {"net", "tag", INT32_MIN, INT32_MAX},
};

/* Why an assignment cannot be made: a --ctx or --ctx-hex text problem is a usage error. */
struct why {
	char msg[512];
};

__attribute__((format(printf, 2, 3))) static int refuse(struct why *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->msg, sizeof(w->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* 0 when v (as parsed) is a value of field f; else says why not in w and returns -1. */
static int check_range(const struct ebpf_prog_type *t, const char *field, uint32_t elem,
		       const char *text, uint64_t v, int all_ones, struct why *w)
{
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		const struct range *r = &ranges[i];
		if (strcmp(r->field, field) || (r->type && strcmp(r->type, t->name)))
			continue;
		if ((int64_t)v >= r->min && (int64_t)v <= r->max)
			return 0;
		return refuse(w, "%s=%s is out of range (%lld..%lld)", field, text,
			      (long long)r->min, (long long)r->max);
	}
	if (all_ones)
		return 0;
	if (text[0] == '-')
		return refuse(w, "%s=%s: the field is unsigned", field, text);
	if (elem < 8 && v >> (8 * elem))
		return refuse(w, "%s=%s does not fit its %u bytes", field, text, elem);
	return 0;
}

static void store(uint8_t *p, uint32_t size, uint64_t v)
{
	/* Little-endian host (the engine's only kind): the low bytes of v. */
	memcpy(p, &v, size);
}

static uint64_t load(const uint8_t *p, uint32_t size)
{
	uint64_t v = 0;
	memcpy(&v, p, size);
	return v;
}

/* A scalar field's value, sign-extended from its size (*raw: the bits as stored). */
static int64_t scalar(const uint8_t *ctx, const struct ebpf_ctx_field *f, uint64_t *raw)
{
	uint64_t v = load(ctx + f->off, f->size);
	*raw = v;
	return f->size == 4   ? (int32_t)v
	       : f->size == 2 ? (int16_t)v
	       : f->size == 1 ? (int8_t)v
			      : (int64_t)v;
}

/* Is an array element of elem bytes NA (all ones, NCCL's "not available")? */
static int is_na(uint64_t v, uint32_t elem)
{
	return elem < 8 ? v == (1ull << (8 * elem)) - 1 : v == UINT64_MAX;
}

/* One index "[i]" at p: *i, and the text after it in *end; -1 unless i is a plain number
 * (strtoul would take "-1" or 2^32 and wrap them onto a valid index). */
static int parse_index(const char *p, uint32_t *i, char **end)
{
	unsigned long long v;
	if (*p != '[' || !isdigit((unsigned char)p[1]))
		return -1;
	errno = 0;
	v = strtoull(p + 1, end, 0);
	if (errno || **end != ']' || v > UINT32_MAX)
		return -1;
	*i = (uint32_t)v;
	++*end;
	return 0;
}

/* One assignment "name[i][j]=value"; -1 with the reason in w. */
static int assign(const struct ebpf_prog_type *t, uint8_t *ctx, uint8_t *given, char *a,
		  struct why *w)
{
	char *eq = strchr(a, '=');
	uint32_t idx[2] = {0, 0}, n_idx = 0;
	uint64_t v;
	if (!eq)
		return refuse(w, "'%s': expected FIELD=VALUE", a);
	*eq = 0;
	char *br = strchr(a, '[');
	if (br) {
		char *p = br, *end;
		for (; *p == '['; p = end) {
			if (n_idx == 2)
				return refuse(w, "'%s': too many indices", a);
			if (parse_index(p, &idx[n_idx++], &end))
				return refuse(w, "'%s': bad index", a);
		}
		if (*p)
			return refuse(w, "'%s': junk after the index", a);
		*br = 0;
	}
	const struct ebpf_ctx_field *f = NULL;
	for (uint32_t i = 0; i < t->n_fields; i++)
		if (!strcmp(t->fields[i].name, a))
			f = &t->fields[i];
	if (!f) {
		int n = snprintf(w->msg, sizeof(w->msg),
				 "%s context has no field '%s'; fields:", t->name, a);
		for (uint32_t i = 0; i < t->n_fields && n > 0 && (size_t)n < sizeof(w->msg); i++)
			n += snprintf(w->msg + n, sizeof(w->msg) - (size_t)n, " %s",
				      t->fields[i].name);
		return -1;
	}
	int all_ones;
	if (parse_value(eq + 1, &v, &all_ones))
		return refuse(w, "'%s': bad value '%s'", a, eq + 1);
	const struct shape *sh = shape_of(t, f->name);
	uint32_t elem = sh ? sh->elem : f->size <= 8 ? f->size : 1;
	if (check_range(t, f->name, elem, eq + 1, v, all_ones, w))
		return -1;
	uint32_t count = f->size / elem;
	uint32_t flat = idx[0];
	if (n_idx && sh && sh->dims[1] > 1) {
		if (n_idx != 2 || idx[0] >= sh->dims[0] || idx[1] >= sh->dims[1])
			return refuse(w, "'%s' is [%u][%u]", f->name, sh->dims[0], sh->dims[1]);
		flat = idx[0] * sh->dims[1] + idx[1];
	} else if (n_idx && (n_idx != 1 || flat >= count || count == 1)) {
		return refuse(w, "'%s' is not an array of that size", f->name);
	}
	memset(given + f->off, 1, f->size); /* printed as given, not as a default */
	if (!n_idx) {			    /* the whole field, or every element of an array */
		for (uint32_t k = 0; k < count; k++)
			store(ctx + f->off + k * elem, elem, v);
		return 0;
	}
	store(ctx + f->off + flat * elem, elem, v);
	return 0;
}

static void ctx_defaults(const struct ebpf_prog_type *t, uint8_t *ctx)
{
	if (!strcmp(t->name, "tuner")) {
		struct ncclbpf_tuner_ctx *c = (struct ncclbpf_tuner_ctx *)ctx;
		c->num_algo = NCCLBPF_NUM_ALGOS;
		c->num_proto = NCCLBPF_NUM_PROTOS;
		c->algorithm = NCCLBPF_ALGO_DEFAULT;
		c->protocol = NCCLBPF_PROTO_DEFAULT;
		c->n_channels = NCCLBPF_CHANNELS_DEFAULT;
	}
}

/* NCCL's name of an algorithm/protocol/collective value, for the reader. */
static const char *symbol(const char *field, int64_t v)
{
	static const char *const algos[] = {
	    "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
	static const char *const protos[] = {"LL", "LL128", "SIMPLE"};
	static const char *const colls[] = {"BROADCAST", "REDUCE", "ALLGATHER", "REDUCESCATTER",
					    "ALLREDUCE"};
	int is_algo = !strcmp(field, "algorithm"), is_proto = !strcmp(field, "protocol");
	if ((is_algo || is_proto) && v == -1)
		return "(DEFAULT: NCCL decides)";
	if (is_algo && v >= 0 && v < NCCLBPF_NUM_ALGOS)
		return algos[v];
	if (is_proto && v >= 0 && v < NCCLBPF_NUM_PROTOS)
		return protos[v];
	if (!strcmp(field, "coll_type") && v >= 0 && v <= NCCLBPF_COLL_ALLREDUCE)
		return colls[v];
	if (!strcmp(field, "n_channels") && v == 0)
		return "(DEFAULT)";
	return NULL;
}

/* One field's value: a number (with its NCCL name), or an array's elements (NA for all ones);
 * note follows it on the line. */
static void print_field(const struct ebpf_prog_type *t, const struct ebpf_ctx_field *f,
			const uint8_t *ctx, const char *note)
{
	const struct shape *sh = shape_of(t, f->name);
	if (f->size <= 8 && !sh) {
		uint64_t v;
		int64_t sv = scalar(ctx, f, &v);
		printf("  %-12s = %lld", f->name, (long long)sv);
		if (sv < 0 || v > 9)
			printf(" (0x%llx)", (unsigned long long)v);
		const char *sym = symbol(f->name, sv);
		if (sym)
			printf(" %s", sym);
		printf("%s\n", note);
		return;
	}
	printf("  %-12s =", f->name);
	if (sh) {
		for (uint32_t k = 0; k < f->size / sh->elem; k++) {
			uint64_t v = load(ctx + f->off + k * sh->elem, sh->elem);
			printf("%s", sh->dims[1] > 1 && k && k % sh->dims[1] == 0 ? " |" : "");
			if (is_na(v, sh->elem))
				printf(" NA");
			else
				printf(" %llu", (unsigned long long)v);
		}
	} else {
		for (uint32_t k = 0; k < f->size; k++)
			printf(" %02x", ctx[f->off + k]);
	}
	printf("%s\n", note);
}

/* The same as one JSON object: {"field", "value" (a number, an array with null for NA, or a
 * hex string), "symbol" (NCCL's name, when it has one), "default" (inputs: no --ctx or
 * --ctx-hex byte set it)}. */
static void json_field(struct json *j, const struct ebpf_prog_type *t,
		       const struct ebpf_ctx_field *f, const uint8_t *ctx, int is_default)
{
	const struct shape *sh = shape_of(t, f->name);
	json_obj(j);
	json_kstr(j, "field", f->name);
	json_key(j, "value");
	if (f->size <= 8 && !sh) {
		uint64_t v;
		int64_t sv = scalar(ctx, f, &v);
		if (f->size == 8 && sv < 0)
			json_u64(j, v); /* a u64 past INT64_MAX */
		else
			json_i64(j, sv);
		const char *sym = symbol(f->name, sv);
		if (sym)
			json_kstr(j, "symbol", sym);
	} else if (sh) {
		json_arr(j);
		for (uint32_t k = 0; k < f->size / sh->elem; k++) {
			uint64_t v = load(ctx + f->off + k * sh->elem, sh->elem);
			if (is_na(v, sh->elem))
				json_null(j);
			else
				json_u64(j, v);
		}
		json_end(j);
	} else {
		json_hex(j, ctx + f->off, f->size);
	}
	if (is_default >= 0)
		json_kbool(j, "default", is_default);
	json_end(j);
}

/* Did no --ctx or --ctx-hex byte set field f? */
static int is_default(const struct ebpf_ctx_field *f, const uint8_t *given)
{
	for (uint32_t k = 0; k < f->size; k++)
		if (given[f->off + k])
			return 0;
	return 1;
}

/* The inputs the run used; a field no --ctx or --ctx-hex byte set is marked as a default. */
static void print_inputs(struct json *j, const struct ebpf_prog_type *t, const uint8_t *ctx,
			 const uint8_t *given)
{
	if (j) {
		json_key(j, "inputs");
		json_arr(j);
	} else {
		printf("inputs:\n");
	}
	for (uint32_t i = 0; i < t->n_fields; i++) {
		const struct ebpf_ctx_field *f = &t->fields[i];
		if (f->flags & EBPF_CTX_WRITE)
			continue;
		if (j)
			json_field(j, t, f, ctx, is_default(f, given));
		else
			print_field(t, f, ctx, is_default(f, given) ? "  (default)" : "");
	}
	if (j)
		json_end(j);
}

/* --- Map snapshots ----------------------------------------------------------------------- */

struct snap {
	uint32_t n, cap;
	size_t ksz, vsz;
	uint8_t *keys, *vals;
};

/* Appends one element; 1 stops the walk at MAX_SNAPSHOT elements. */
static int snap_add(const void *key, const void *value, void *arg)
{
	struct snap *s = arg;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 16;
		uint8_t *k = realloc(s->keys, (size_t)cap * s->ksz + 1);
		if (k)
			s->keys = k;
		uint8_t *v = realloc(s->vals, (size_t)cap * s->vsz + 1);
		if (v)
			s->vals = v;
		if (!k || !v)
			return -ENOMEM;
		s->cap = cap;
	}
	memcpy(s->keys + (size_t)s->n * s->ksz, key, s->ksz);
	memcpy(s->vals + (size_t)s->n * s->vsz, value, s->vsz);
	return ++s->n == MAX_SNAPSHOT;
}

static int snapshot(struct ebpf_map *m, struct snap *s)
{
	memset(s, 0, sizeof(*s));
	if (ebpf_map__type(m) == EBPF_MAP_TYPE_RINGBUF)
		return 0;
	s->ksz = ebpf_map__key_size(m);
	s->vsz = ebpf_map__user_value_size(m);
	int ret = ncclbpf_map_walk(m, 0, snap_add, s);
	return ret > 0 ? 0 : ret;
}

static void snap_free(struct snap *s)
{
	free(s->keys);
	free(s->vals);
}

static int snap_find(const struct snap *s, const uint8_t *key)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (!memcmp(s->keys + (size_t)i * s->ksz, key, s->ksz))
			return (int)i;
	return -1;
}

static void print_bytes(const char *label, const uint8_t *p, size_t n)
{
	printf("%s", label);
	for (size_t i = 0; i < n; i++)
		printf("%s%02x", i && i % 4 == 0 ? " " : "", p[i]);
	if (n == 4 || n == 8)
		printf(" (%llu)", (unsigned long long)load(p, (uint32_t)n));
}

/* A key or value as JSON typed by the object's BTF (docs/cli-json.md) under name, and its bytes
 * under name_hex. */
static void json_typed(struct json *j, const struct ebpf_object_map *om, const char *name,
		       int value, const uint8_t *p, size_t n)
{
	char hex_key[32];
	size_t room = 24 * n + 4096;
	char *buf = malloc(room);
	json_key(j, name);
	if (buf && ebpf_object_map__json(om, value, p, n, buf, room) >= 0)
		json_raw(j, buf);
	else
		json_hex(j, p, n);
	free(buf);
	snprintf(hex_key, sizeof(hex_key), "%s_hex", name);
	json_key(j, hex_key);
	json_hex(j, p, n);
}

/* One changed entry: old is NULL for an added one, now NULL for a deleted one. */
static void show_change(struct json *j, const struct ebpf_object_map *om, const struct snap *s,
			const uint8_t *k, const uint8_t *old, const uint8_t *now)
{
	const char *name = ebpf_object_map__name(om);
	const char *what = !old ? "added" : !now ? "deleted" : "changed";
	if (j) {
		json_obj(j);
		json_kstr(j, "map", name);
		json_kstr(j, "change", what);
		json_typed(j, om, "key", 0, k, s->ksz);
		if (old && now)
			json_typed(j, om, "old_value", 1, old, s->vsz);
		if (now)
			json_typed(j, om, "value", 1, now, s->vsz);
		json_end(j);
		return;
	}
	printf("  %s: %-7s", name, what);
	print_bytes(" key ", k, s->ksz);
	if (old && now)
		print_bytes("\n           value ", old, s->vsz);
	if (now)
		print_bytes(old ? "\n        -> value " : "\n           value ", now, s->vsz);
	printf("\n");
}

/* Shows the differences; returns the number of changed entries. */
static uint32_t diff(struct json *j, const struct ebpf_object_map *om, const struct snap *a,
		     const struct snap *b)
{
	uint32_t changes = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		const uint8_t *k = b->keys + (size_t)i * b->ksz, *v = b->vals + (size_t)i * b->vsz;
		int x = snap_find(a, k);
		const uint8_t *old = x >= 0 ? a->vals + (size_t)x * a->vsz : NULL;
		if (old && !memcmp(old, v, a->vsz))
			continue;
		show_change(j, om, b, k, old, v);
		changes++;
	}
	for (uint32_t i = 0; i < a->n; i++) {
		const uint8_t *k = a->keys + (size_t)i * a->ksz;
		if (snap_find(b, k) >= 0)
			continue;
		show_change(j, om, a, k, a->vals + (size_t)i * a->vsz, NULL);
		changes++;
	}
	return changes;
}

struct rb_print {
	struct json *j;
	const char *name;
	uint32_t n;
};

static int print_record(void *ctx, const void *data, uint32_t size)
{
	struct rb_print *r = ctx;
	if (r->j) {
		json_obj(r->j);
		json_kstr(r->j, "map", r->name);
		json_kstr(r->j, "change", "record");
		json_ku64(r->j, "n", r->n++);
		json_ku64(r->j, "size", size);
		json_key(r->j, "value_hex");
		json_hex(r->j, data, size);
		json_end(r->j);
		return 0;
	}
	char label[96];
	snprintf(label, sizeof(label), "  %s: record %u (%u bytes) ", r->name, r->n++, size);
	print_bytes(label, data, size);
	printf("\n");
	return 0;
}

/* --- The command --------------------------------------------------------------------------- */

static int cmd_test_run(int argc, char **argv)
{
	const char *file = NULL, *prog_name = NULL, *ctx_arg = NULL, *ctx_hex = NULL;
	unsigned long long repeat = 1;
	int quiet = 0, jit = 0, status = 1, json = 0;
	char err[512];

	const char *repeat_s = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int k;
		if (!strcmp(a, "--quiet"))
			quiet = 1;
		else if (!strcmp(a, "--json"))
			json = 1;
		else if (!strcmp(a, "--jit"))
			jit = 1;
		else if ((k = cli_opt(argc, argv, &i, "--prog", &prog_name)) ||
			 (k = cli_opt(argc, argv, &i, "--ctx", &ctx_arg)) ||
			 (k = cli_opt(argc, argv, &i, "--ctx-hex", &ctx_hex)) ||
			 (k = cli_opt(argc, argv, &i, "--repeat", &repeat_s))) {
			if (k < 0)
				return CLI_USAGE;
		} else if (a[0] == '-')
			return cli_usage_error("unknown option '%s'", a);
		else if (file)
			return cli_usage_error("one object at a time ('%s' and '%s')", file, a);
		else
			file = a;
	}
	if (repeat_s && cli_parse_u64("--repeat", repeat_s, 1, MAX_REPEAT, &repeat))
		return CLI_USAGE;
	if (!file)
		return cli_usage_error("no object file given");

	struct ebpf_object *obj = ncclbpf_object_open_file(file, NULL, err, sizeof(err));
	if (!obj)
		return cli_fail("%s", err);
	/* --prog may be left out when the object has one program. */
	struct ebpf_program *p = NULL;
	if (prog_name)
		p = ebpf_object__find_program_by_name(obj, prog_name);
	else if (ebpf_object__prog_cnt(obj) == 1)
		p = ebpf_object__prog(obj, 0);
	uint8_t *ctx = NULL, *before = NULL, *given = NULL;
	struct snap *snaps = NULL;
	uint32_t n_maps = ebpf_object__map_cnt(obj);
	if (!p) {
		if (prog_name)
			fprintf(stderr, "ncclbpf test-run: %s has no program '%s'; programs:", file,
				prog_name);
		else
			fprintf(stderr,
				"ncclbpf test-run: %s has %u programs, --prog picks one:", file,
				ebpf_object__prog_cnt(obj));
		for (uint32_t i = 0; i < ebpf_object__prog_cnt(obj); i++)
			fprintf(stderr, " %s", ebpf_program__name(ebpf_object__prog(obj, i)));
		fprintf(stderr, "\n");
		goto out;
	}
	if (ebpf_object__load(obj, NULL, err, sizeof(err))) {
		fprintf(stderr, "ncclbpf test-run: %s\n", err);
		goto out;
	}
	const struct ebpf_prog_type *t = ebpf_program__type(p);
	ctx = calloc(1, t->ctx_size + 8);
	before = calloc(1, t->ctx_size + 8);
	given = calloc(1, t->ctx_size + 8);
	snaps = calloc(n_maps ? n_maps : 1, 2 * sizeof(*snaps));
	if (!ctx || !before || !given || !snaps) {
		fprintf(stderr, "ncclbpf test-run: out of memory\n");
		goto out;
	}
	ctx_defaults(t, ctx);
	if (ctx_hex) {
		struct hexbuf hb;
		if (hex_parse_str(ctx_hex, t->ctx_size, &hb, err, sizeof(err))) {
			status = cli_usage_error("--ctx-hex: %s (context is %u bytes)", err,
						 t->ctx_size);
			goto out;
		}
		memset(ctx, 0, t->ctx_size);
		if (hb.len)
			memcpy(ctx, hb.data, hb.len);
		memset(given, 1, t->ctx_size); /* the whole context came from the user */
		hexbuf_free(&hb);
	}
	if (ctx_arg) {
		char *copy = strdup(ctx_arg), *save = NULL;
		struct why w = {.msg = "out of memory"};
		int bad = !copy;
		for (char *a = copy ? strtok_r(copy, ",", &save) : NULL; a && !bad;
		     a = strtok_r(NULL, ",", &save))
			bad = assign(t, ctx, given, a, &w) != 0;
		free(copy);
		if (bad) {
			status = copy ? cli_usage_error("--ctx %s", w.msg) : cli_fail("%s", w.msg);
			goto out;
		}
	}
	memcpy(before, ctx, t->ctx_size);
	for (uint32_t i = 0; i < n_maps; i++)
		if (snapshot(ebpf_object_map__map(ebpf_object__map(obj, i)), &snaps[i])) {
			fprintf(stderr, "ncclbpf test-run: out of memory\n");
			goto out;
		}

	uint64_t r0 = 0;
	struct timespec t0, t1;
	int ret = 0;
	if (jit && ebpf_exec__jit(ebpf_program__exec(p), NULL, err, sizeof(err))) {
		fprintf(stderr, "ncclbpf test-run: JIT: %s\n", err);
		goto out;
	}
	enum ebpf_engine engine = jit ? EBPF_ENGINE_JIT : EBPF_ENGINE_INTERP;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ebpf_epoch_enter();
	for (unsigned long long k = 0; k < repeat && !ret; k++)
		ret = ebpf_exec__run(ebpf_program__exec(p), engine, (uint64_t)(uintptr_t)ctx, 0,
				     NULL, &r0);
	ebpf_epoch_exit();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret) {
		fprintf(stderr, "ncclbpf test-run: run failed: %s\n", strerror(-ret));
		goto out;
	}
	double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	struct json jw, *j = NULL;
	if (json) {
		j = &jw;
		json_init(j, stdout);
		json_obj(j);
		json_kstr(j, "file", file);
		json_kstr(j, "program", ebpf_program__name(p));
		json_kstr(j, "type", t->name);
		json_ku64(j, "insns", ebpf_program__insn_cnt(p));
		json_kstr(j, "engine", jit ? "jit" : "interp");
		json_ki64(j, "return", (int64_t)r0);
		json_ku64(j, "runs", repeat);
		if (repeat > 1)
			json_kf64(j, "ns_per_run", ns / (double)repeat);
	} else {
		printf("%s (%s, %u insns): return %lld", ebpf_program__name(p), t->name,
		       ebpf_program__insn_cnt(p), (long long)r0);
		if ((int64_t)r0 < 0 || r0 > 9)
			printf(" (0x%llx)", (unsigned long long)r0);
		printf("\n");
		if (repeat > 1)
			printf("%s: %llu runs, %.1f ns per run\n", jit ? "jit" : "interpreter",
			       repeat, ns / (double)repeat);
	}
	if (!quiet)
		print_inputs(j, t, before, given);
	if (j) {
		json_key(j, "outputs");
		json_arr(j);
	} else {
		printf("outputs:\n");
	}
	int outputs = 0;
	for (uint32_t i = 0; i < t->n_fields; i++) {
		const struct ebpf_ctx_field *f = &t->fields[i];
		if (f->flags & EBPF_CTX_WRITE) {
			if (j)
				json_field(j, t, f, ctx, -1);
			else
				print_field(t, f, ctx, "");
			outputs++;
		}
	}
	if (j)
		json_end(j);
	else if (!outputs)
		printf("  (none: %s context is read-only)\n", t->name);
	if (j) {
		json_key(j, "inputs_changed");
		json_arr(j);
	}
	for (uint32_t i = 0; i < t->n_fields; i++) {
		const struct ebpf_ctx_field *f = &t->fields[i];
		if (!(f->flags & EBPF_CTX_WRITE) &&
		    memcmp(ctx + f->off, before + f->off, f->size)) {
			if (j)
				json_str(j, f->name);
			else
				printf("  WARNING: input field '%s' changed\n", f->name);
		}
	}
	if (j)
		json_end(j);
	if (!quiet) {
		uint32_t changes = 0;
		if (j) {
			json_key(j, "map_changes");
			json_arr(j);
		} else {
			printf("maps changed:\n");
		}
		for (uint32_t i = 0; i < n_maps; i++) {
			struct ebpf_object_map *om = ebpf_object__map(obj, i);
			struct ebpf_map *m = ebpf_object_map__map(om);
			if (ebpf_map__type(m) == EBPF_MAP_TYPE_RINGBUF) {
				struct rb_print rp = {j, ebpf_object_map__name(om), 0};
				ebpf_ringbuf__consume(m, print_record, &rp, 0);
				changes += rp.n;
				continue;
			}
			if (snapshot(m, &snaps[n_maps + i])) {
				fprintf(stderr, "ncclbpf test-run: out of memory\n");
				goto out;
			}
			changes += diff(j, om, &snaps[i], &snaps[n_maps + i]);
		}
		if (j)
			json_end(j);
		else if (!changes)
			printf("  (none)\n");
	}
	if (j)
		json_end(j);
	status = 0;
out:
	for (uint32_t i = 0; snaps && i < 2 * n_maps; i++)
		snap_free(&snaps[i]);
	free(snaps);
	free(ctx);
	free(before);
	free(given);
	ebpf_object__close(obj);
	return status;
}

NCCLBPF_COMMAND(
    test_run_cmd, .name = "test-run",
    .args = "[--prog NAME] [--ctx FIELD=VALUE,...] [--ctx-hex HEX] [--repeat N] [--jit] [--quiet] "
	    "[--json] FILE.o",
    .summary = "run one program of a policy once on a context you describe",
    .help = "  --prog     the program to run (needed when the object has more than one)\n"
	    "  --ctx      fields by name: n_bytes=1048576,coll_type=AllReduce,\n"
	    "             cost_ns[1][2]=500, cost_ns=NA (all elements); values: numbers,\n"
	    "             NA, NCCL names (AllReduce or ALLREDUCE, Ring, LL128, ...);\n"
	    "             out-of-range values are refused. Unset fields are 0, except a\n"
	    "             tuner's num_algo/num_proto (all rows and columns) and outputs\n"
	    "             (DEFAULT); the inputs used are printed, defaults marked\n"
	    "  --ctx-hex  the context's bytes (shorter input is zero-padded)\n"
	    "  --repeat   run N times on the same context (prints the mean time per run)\n"
	    "  --jit      run the JIT-compiled program (default: the interpreter)\n"
	    "  --quiet    return value and outputs only\n"
	    "  --json     one JSON document (docs/cli-json.md)\n",
    .run = cmd_test_run);
