/* Policy maps exported as metrics (SDK: NCCLBPF_EXPORT_GAUGES / NCCLBPF_EXPORT_COUNTERS; the
 * loader checked the key and value types, engine/src/loader/export.c). Each value member is a
 * family ncclbpf_map_<map>_<member> (counters: ..._total), one sample per map element, labelled
 * with the process's labels, the bundle, and one label per key member (an integer array as its
 * elements joined by '.'); per-CPU values are summed. Rendered by the exporter thread under the
 * reload lock (the policy cannot be retired meanwhile), reading the maps through the engine's
 * user side like `ncclbpf map dump`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclbpf/map_walk.h"
#include "ebpf/object.h"
#include "telem_internal.h"

/* Labels every sample has already, which a key member may not take. */
static const char *const reserved[] = {"job_id", "node",   "rank", "local_rank", "gpu", "pid",
				       "le",	 "bundle", "map",  "quantile",	 NULL};

int telem_check_exports(const struct ebpf_object *obj, char *why, size_t len)
{
	for (struct ebpf_object_map *m = ebpf_object__next_map(obj, NULL); m;
	     m = ebpf_object__next_map(obj, m)) {
		if (!ebpf_object_map__export(m))
			continue;
		const char *name = ebpf_object_map__name(m);
		for (const char *c = name; *c; c++)
			if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (*c >= '0' && *c <= '9'))) {
				snprintf(
				    why, len,
				    "map '%s' is exported: its name must be letters, digits and "
				    "'_' (a metric name)",
				    name);
				return -EINVAL;
			}
		const struct ebpf_map_field *k;
		uint32_t nk = ebpf_object_map__fields(m, 0, &k);
		for (uint32_t i = 0; i < nk; i++)
			for (int r = 0; reserved[r]; r++)
				if (!strcmp(k[i].name, reserved[r])) {
					snprintf(why, len,
						 "map '%s' is exported: key member '%s' would "
						 "replace the label every sample has; rename it",
						 name, k[i].name);
					return -EINVAL;
				}
	}
	return 0;
}

/* A member's integer at p, widened to 64 bits (sign-extended when it is signed). */
static uint64_t rd(const uint8_t *p, const struct ebpf_map_field *f)
{
	uint64_t v = 0;
	memcpy(&v, p, f->size); /* little-endian host */
	uint32_t shift = 64 - 8 * f->size;
	return f->is_signed ? (uint64_t)((int64_t)(v << shift) >> shift) : v;
}

static void int_print(struct tbuf *b, uint64_t v, const struct ebpf_map_field *f)
{
	if (f->is_signed)
		tb_printf(b, "%lld", (long long)(int64_t)v);
	else
		tb_printf(b, "%llu", (unsigned long long)v);
}

static void key_labels(struct tbuf *b, const uint8_t *key, const struct ebpf_map_field *k,
		       uint32_t nk)
{
	for (uint32_t i = 0; i < nk; i++) {
		tb_printf(b, ",%s=\"", k[i].name);
		for (uint32_t e = 0; e < k[i].count; e++) {
			if (e)
				tb_puts(b, ".");
			const uint8_t *p = key + k[i].off + e * k[i].size;
			int_print(b, rd(p, &k[i]), &k[i]);
		}
		tb_puts(b, "\"");
	}
}

/* The value member f summed over the per-CPU slots of one element (one slot: its value),
 * modulo 2^64: signed members add as their two's complement. */
static void value_text(struct tbuf *b, const uint8_t *val, uint32_t ncpu, size_t stride,
		       const struct ebpf_map_field *f)
{
	uint64_t sum = 0;
	for (uint32_t c = 0; c < ncpu; c++)
		sum += rd(val + c * stride + f->off, f);
	int_print(b, sum, f);
}

/* One element's sample of one value member. */
struct sample {
	struct tbuf *b;
	const char *fam, *bundle;
	const struct ebpf_map_field *k, *v;
	uint32_t nk, ncpu;
	size_t stride;
};

static int one_sample(const void *key, const void *val, void *arg)
{
	const struct sample *s = arg;
	struct tbuf *b = s->b;
	tb_printf(b, "%s{", s->fam);
	telem_prom_base_labels(b);
	tb_puts(b, ",bundle=\"");
	tb_escaped(b, s->bundle);
	tb_puts(b, "\"");
	key_labels(b, key, s->k, s->nk);
	tb_puts(b, "} ");
	value_text(b, val, s->ncpu, s->stride, s->v);
	tb_eol(b);
	return 0;
}

static void one_map(struct tbuf *b, const struct ebpf_object_map *m, const char *bundle)
{
	struct ebpf_map *map = ebpf_object_map__map(m);
	const struct ebpf_map_field *k, *v;
	uint32_t nk = ebpf_object_map__fields(m, 0, &k), nv = ebpf_object_map__fields(m, 1, &v);
	if (!map || !nv)
		return;
	struct sample s = {.b = b, .bundle = bundle, .k = k, .nk = nk};
	s.ncpu = ebpf_map__num_cpus(map);
	s.stride = ((size_t)ebpf_map__value_size(map) + 7) & ~(size_t)7;
	int counter = ebpf_object_map__export(m) == EBPF_MAP_EXPORT_COUNTER;
	const char *mname = ebpf_object_map__name(m);
	for (uint32_t f = 0; f < nv; f++) {
		char fam[256], help[256];
		snprintf(fam, sizeof(fam), "ncclbpf_map_%s_%s%s", mname, v[f].name,
			 counter ? "_total" : "");
		snprintf(help, sizeof(help),
			 "policy map %s, value member %s (exported by the policy)", mname,
			 v[f].name);
		telem_prom_family(b, fam, counter ? "counter" : "gauge", help);
		s.fam = fam;
		s.v = &v[f];
		/* Bounded: at most max_entries + 1 keys (a concurrent insert may end it early). */
		ncclbpf_map_walk(map, (uint64_t)ebpf_map__max_entries(map) + 1, one_sample, &s);
	}
}

void telem_prom_maps(struct tbuf *b, const struct rt_policy *p)
{
	if (!p || !p->obj)
		return;
	const char *slash = strrchr(p->name, '/');
	for (struct ebpf_object_map *m = ebpf_object__next_map(p->obj, NULL); m;
	     m = ebpf_object__next_map(p->obj, m))
		if (ebpf_object_map__export(m))
			one_map(b, m, slash ? slash + 1 : p->name);
}
