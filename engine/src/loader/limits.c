/* ebpf_object__check_limits: what an object asks for (map memory by definition, ring buffer
 * sizes, programs, instructions) against the limits its host sets. Runs on the definitions the
 * loader parsed, before any map exists or any program is verified, so an oversized object costs
 * a few microseconds instead of its allocations or its verification. This is the only place the
 * limits are compared; ebpf_object__load calls it first. */
#include <errno.h>
#include <stdio.h>

#include "loader.h"

/* "8.0 GiB" */
static const char *human(uint64_t b, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)b;
	int u = 0;
	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

static void measure(const struct ebpf_object *obj, struct ebpf_object_usage *u)
{
	*u = (struct ebpf_object_usage){
	    .sz = sizeof(*u), .maps = obj->n_maps, .progs = obj->n_progs};
	for (uint32_t i = 0; i < obj->n_progs; i++)
		u->insns += obj->progs[i].n_insns; /* <= EBPF_OBJECT_MAX_TOTAL_INSNS, no overflow */
	for (uint32_t i = 0; i < obj->n_maps; i++) {
		const struct ebpf_map_def *d = &obj->maps[i].def;
		uint64_t b = ebpf_map__def_memory(d);
		u->map_bytes = u->map_bytes > UINT64_MAX - b ? UINT64_MAX : u->map_bytes + b;
		if (b > u->largest_map_bytes) {
			u->largest_map_bytes = b;
			u->largest_map = i;
		}
		if (d->type == EBPF_MAP_TYPE_RINGBUF && d->max_entries > u->ringbuf_bytes)
			u->ringbuf_bytes = d->max_entries;
	}
}

static int over(uint64_t have, uint64_t limit)
{
	return limit && have > limit;
}

int ebpf_object__check_limits(const struct ebpf_object *obj, const struct ebpf_object_limits *lim,
			      struct ebpf_object_usage *usage, char *err, size_t err_len)
{
	struct ebpf_object_limits l = {.sz = sizeof(l)};
	struct ebpf_object_usage u;
	char h1[32], h2[32], h3[32];
	if (err && err_len)
		err[0] = 0;
	if (!obj)
		return ldr_err(err, err_len, EINVAL, "no object");
	if (lim)
		memcpy(&l, lim, lim->sz < sizeof(l) ? lim->sz : sizeof(l));
	measure(obj, &u);
	if (usage)
		memcpy(usage, &u, usage->sz < sizeof(u) ? usage->sz : sizeof(u));
	if (over(u.progs, l.progs))
		return ldr_err(err, err_len, E2BIG, "%u programs, over the limit of %u", u.progs,
			       l.progs);
	if (over(u.insns, l.insns))
		return ldr_err(err, err_len, E2BIG,
			       "%u instructions in all programs, over the limit of %u", u.insns,
			       l.insns);
	for (uint32_t i = 0; i < obj->n_maps && l.ringbuf_bytes; i++) {
		const struct ebpf_object_map *m = &obj->maps[i];
		if (m->def.type == EBPF_MAP_TYPE_RINGBUF &&
		    over(m->def.max_entries, l.ringbuf_bytes))
			return ldr_err(err, err_len, E2BIG,
				       "ring buffer '%s' of %s (%u bytes), over the limit of "
				       "%s (%llu bytes) for one ring buffer",
				       m->name, human(m->def.max_entries, h1, sizeof(h1)),
				       m->def.max_entries, human(l.ringbuf_bytes, h2, sizeof(h2)),
				       (unsigned long long)l.ringbuf_bytes);
	}
	if (over(u.map_bytes, l.map_bytes)) {
		const struct ebpf_object_map *big = &obj->maps[u.largest_map];
		return ldr_err(err, err_len, E2BIG,
			       "map memory %s (%llu bytes in %u maps; largest '%s' %s %s) "
			       "exceeds the limit of %s (%llu bytes)%s%s",
			       human(u.map_bytes, h1, sizeof(h1)), (unsigned long long)u.map_bytes,
			       u.maps, big->name, ebpf_map_type__name(big->def.type),
			       human(u.largest_map_bytes, h3, sizeof(h3)),
			       human(l.map_bytes, h2, sizeof(h2)), (unsigned long long)l.map_bytes,
			       l.map_bytes_hint ? "; " : "",
			       l.map_bytes_hint ? l.map_bytes_hint : "");
	}
	return 0;
}
