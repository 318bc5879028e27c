/* The active policy's bundle as the inspection server shows it: programs with their verifier
 * and JIT statistics, maps with their rank-consistency class, map contents, and map updates.
 * Callers hold rt.reload_lock, so the policy (and its maps) cannot be retired meanwhile; the
 * hot path takes no lock and is not slowed (map reads and writes are the engine's user-side
 * operations, safe while programs run).
 *
 * Classes, as loading decided them (ebpf_object_map__rank_flags, engine/src/loader/rank.c):
 * "rank-local": some program writes the map, or it is per-CPU or LRU; decisions never depend on
 * it, so it may be changed in one process alone. "uniform": no program writes it, decisions may
 * read it, so it must be the same on every rank and changes only through the control plane's
 * consistent activation. "per-comm": one instance per communicator (NCCLBPF_F_PER_COMM), decision
 * state its own tuner programs keep: a dump shows every communicator's instance, and no update
 * is taken (the state is the programs'). "read-only": .rodata, frozen. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclbpf/map_walk.h"
#include "inspect.h"
#include "ncclbpf/hex.h"
#include "ebpf/maps.h"
#include "ebpf/object.h"

enum { CLASS_UNIFORM, CLASS_RANK_LOCAL, CLASS_READ_ONLY, CLASS_PER_COMM };
static const char *const class_names[] = {"uniform", "rank-local", "read-only", "per-comm"};

static int map_class(const struct ebpf_object_map *om)
{
	if (ebpf_object_map__kind(om) == EBPF_OBJECT_MAP_RODATA)
		return CLASS_READ_ONLY;
	if (ebpf_object_map__rank_flags(om) & EBPF_OBJECT_MAP_F_PER_COMM)
		return CLASS_PER_COMM;
	return ebpf_object_map__rank_flags(om) & EBPF_OBJECT_MAP_F_RANK_LOCAL ? CLASS_RANK_LOCAL
									      : CLASS_UNIFORM;
}

static int is_percpu(const struct ebpf_map *m)
{
	uint32_t t = ebpf_map__type(m);
	return t == EBPF_MAP_TYPE_PERCPU_HASH || t == EBPF_MAP_TYPE_PERCPU_ARRAY;
}

static void map_record(struct insp_out *o, struct ebpf_object_map *om, int cls)
{
	struct ebpf_map *m = ebpf_object_map__map(om);
	struct ebpf_map_stats ms = {.sz = sizeof(ms)};
	ebpf_map__get_stats(m, &ms);
	insp_begin(o, "map");
	insp_kv(o, "name", ebpf_object_map__name(om));
	insp_kv(o, "type", ebpf_map_type__name(ebpf_map__type(m)));
	insp_kv(o, "kind", ebpf_object_map_kind__name(ebpf_object_map__kind(om)));
	insp_kv(o, "class", class_names[cls]);
	insp_kvu(o, "key_size", ebpf_map__key_size(m));
	insp_kvu(o, "value_size", ebpf_map__value_size(m));
	insp_kvu(o, "max_entries", ebpf_map__max_entries(m));
	insp_kvu(o, "cpus", is_percpu(m) ? ebpf_map__num_cpus(m) : 1);
	insp_kvu(o, "entries", ms.entries);
	insp_kvu(o, "updates", ms.updates);
	insp_end(o);
}

/* How often the program of hook h ran since the library was loaded: runs=N, and for the
 * profiler program the runs per event. Counted per hook, not per bundle: a reload's new
 * program continues its predecessor's count. */
static void prog_runs(struct insp_out *o, const struct rt_policy *p, const struct rt_hook *h)
{
	static const char *const prof_events[] = {"runs_coll_start", "runs_coll_end",
						  "runs_kernel_ch", "runs_proxy_op"};
	if (!h)
		return;
	if (h == &p->hot.tuner) {
		struct ncclbpf_rt_stats st;
		ncclbpf_rt_get_stats(&st);
		insp_kvu(o, "runs", st.comm[NCCLBPF_STAT_RUNS]);
	} else if (h == &p->hot.chunk) {
		insp_kvu(o, "runs", ncclbpf_rt_runs(NCCLBPF_RT_RUNS_CHUNK));
	} else if (h == &p->hot.profiler) {
		uint64_t n[4], all = 0;
		for (int e = 0; e < 4; e++)
			all += n[e] = ncclbpf_rt_runs(NCCLBPF_RT_RUNS_PROF + e);
		insp_kvu(o, "runs", all);
		for (int e = 0; e < 4; e++)
			insp_kvu(o, prof_events[e], n[e]);
	} else if (h >= p->net && h < p->net + RT_NET_HOOKS) {
		insp_kvu(o, "runs", ncclbpf_rt_runs(NCCLBPF_RT_RUNS_NET + (int)(h - p->net)));
	}
}

void insp_bundle_progs(struct insp_out *o, const struct rt_policy *p)
{
	if (!p->obj)
		return;
	for (struct ebpf_program *prog = ebpf_object__next_program(p->obj, NULL); prog;
	     prog = ebpf_object__next_program(p->obj, prog)) {
		const struct ebpf_verify_stats *vs = ebpf_program__verify_stats(prog);
		char hook[64];
		const struct rt_hook *h =
		    rt_bundle_hook_of_prog(p, ebpf_program__exec(prog), hook, sizeof(hook));
		insp_begin(o, "prog");
		insp_kv(o, "name", ebpf_program__name(prog));
		insp_kv(o, "section", ebpf_program__section(prog));
		insp_kv(o, "hook", hook);
		insp_kv(o, "engine", !h ? "-" : h->fn ? "jit" : "interp");
		insp_kvu(o, "insns", ebpf_program__insn_cnt(prog));
		insp_kvu(o, "processed", vs ? vs->processed : 0);
		insp_kvu(o, "peak_states", vs ? vs->peak_states : 0);
		insp_kvu(o, "worst_case_insns", vs ? vs->worst_case_insns : 0);
		insp_kvu(o, "verify_ns", vs ? vs->time_ns : 0);
		insp_kvu(o, "code_size", h ? h->code_size : 0);
		prog_runs(o, p, h);
		/* Posts timed for a completion's duration_ns: one in this many (0: not read). */
		if (h == &p->net[NCCLBPF_NET_COMPLETE - 1])
			insp_kvu(o, "time_every",
				 (p->net_clock[NCCLBPF_NET_COMPLETE - 1] & RT_NET_CLOCK_DUR)
				     ? p->net_time_every
				     : 0);
		insp_end(o);
	}
}

void insp_bundle_maps(struct insp_out *o, const struct rt_policy *p)
{
	if (!p->obj)
		return;
	for (struct ebpf_object_map *om = ebpf_object__next_map(p->obj, NULL); om;
	     om = ebpf_object__next_map(p->obj, om))
		map_record(o, om, map_class(om));
}

static struct ebpf_object_map *find(const struct rt_policy *p, const char *name)
{
	return p->obj ? ebpf_object__find_map_by_name(p->obj, name) : NULL;
}

int insp_bundle_map_is_uniform(const struct rt_policy *p, const char *name)
{
	struct ebpf_object_map *om = find(p, name);
	if (!om)
		return 0;
	return map_class(om) == CLASS_UNIFORM;
}

/* key=value of the map's key or value as JSON, typed by the bundle's BTF where it has a type
 * (ebpf_object_map__json; an integer or hex otherwise). The hex bytes are sent too. */
static void kv_typed(struct insp_out *o, const char *key, const struct ebpf_object_map *om,
		     int value, const void *data, size_t n, char *buf, size_t len)
{
	if (ebpf_object_map__json(om, value, data, n, buf, len) >= 0)
		insp_kv(o, key, buf);
}

/* Room for one key or value as JSON: field names and numbers grow it well beyond its bytes. */
static size_t json_room(size_t bytes)
{
	return 24 * bytes + 4096;
}

struct dump {
	struct insp_out *o;
	const struct ebpf_object_map *om;
	int64_t comm;
	size_t ks;
	uint32_t vs, stride, cpus;
	char *json;
	size_t room;
};

/* One "elem" record (ncclbpf_map_walk: an element deleted meanwhile is simply not shown); 1 stops
 * the walk once the output failed. */
static int dump_elem(const void *key, const void *value, void *arg)
{
	const struct dump *d = arg;
	struct insp_out *o = d->o;
	const unsigned char *val = value;
	insp_begin(o, "elem");
	insp_kvhex(o, "key", key, d->ks);
	kv_typed(o, "key_json", d->om, 0, key, d->ks, d->json, d->room);
	if (d->comm >= 0)
		insp_kvu(o, "comm", (uint64_t)d->comm);
	if (!d->cpus) {
		insp_kvhex(o, "value", val, d->vs);
		kv_typed(o, "value_json", d->om, 1, val, d->vs, d->json, d->room);
	}
	for (uint32_t c = 0; c < d->cpus; c++) {
		char k[24];
		snprintf(k, sizeof(k), "cpu%u", c);
		insp_kvhex(o, k, val + (size_t)c * d->stride, d->vs);
		snprintf(k, sizeof(k), "cpu%u_json", c);
		kv_typed(o, k, d->om, 1, val + (size_t)c * d->stride, d->vs, d->json, d->room);
	}
	insp_end(o);
	return o->err ? 1 : 0;
}

/* One "elem" record per element of m (om's map, or one communicator's instance of it); comm >=
 * 0: the communicator (serial) whose instance m is. */
static int dump_elems(struct insp_out *o, const struct ebpf_object_map *om, struct ebpf_map *m,
		      int64_t comm)
{
	struct dump d = {.o = o, .om = om, .comm = comm, .ks = ebpf_map__key_size(m)};
	d.vs = ebpf_map__value_size(m);
	d.stride = (d.vs + 7) & ~7u;
	d.cpus = is_percpu(m) ? ebpf_map__num_cpus(m) : 0;
	d.room = json_room(d.ks > d.vs ? d.ks : d.vs);
	d.json = malloc(d.room);
	int err = !d.json ? -ENOMEM : o->err ? 0 : ncclbpf_map_walk(m, 0, dump_elem, &d);
	free(d.json);
	return err > 0 ? 0 : err; /* 1: the output failed, which o reports */
}

int insp_bundle_map_dump(struct insp_out *o, const struct rt_policy *p, const char *name)
{
	struct ebpf_object_map *om = find(p, name);
	struct ebpf_map *m = om ? ebpf_object_map__map(om) : NULL;
	if (!m)
		return -ENOENT;
	if (!ebpf_map__user_value_size(m))
		return -EOPNOTSUPP; /* ring buffer: records, not elements */
	int cls = map_class(om), err = 0;
	map_record(o, om, cls);
	if (cls != CLASS_PER_COMM)
		return dump_elems(o, om, m, -1);
	/* Every communicator's own instance (caller is in an epoch section: instances retired
	 * meanwhile stay readable). */
	pthread_mutex_lock(&rt.lock);
	for (const struct ncclbpf_comm *c = rt.comms; c && !err; c = c->next) {
		struct ebpf_map *inst = rt_comm_maps_find(c, 0, name);
		if (inst)
			err = dump_elems(o, om, inst, c->serial);
	}
	pthread_mutex_unlock(&rt.lock);
	return err;
}

/* Exactly len bytes of hex into out: 0, or -1. */
static int unhex(const char *s, unsigned char *out, size_t len)
{
	return ncclbpf_unhex(s, out, len, NULL, 0) == (int)len ? 0 : -1;
}

/* Why the engine refused an update, in the map's terms (its errno alone says "Argument list
 * too long" for a key beyond an array). */
static void update_refused(struct ebpf_map *m, const char *name, const unsigned char *key,
			   size_t ks, int err, char *msg, size_t msg_len)
{
	uint32_t t = ebpf_map__type(m), max = ebpf_map__max_entries(m);
	int array = t == EBPF_MAP_TYPE_ARRAY || t == EBPF_MAP_TYPE_PERCPU_ARRAY;
	if (array && err == -E2BIG && ks == 4) {
		uint32_t idx;
		memcpy(&idx, key, 4);
		snprintf(msg, msg_len,
			 "key %u is out of range: '%s' is an array of %u entries (keys 0..%u)", idx,
			 name, max, max ? max - 1 : 0);
	} else if (err == -E2BIG) {
		snprintf(msg, msg_len,
			 "'%s' is full: all %u entries are in use (a new key needs a free one)",
			 name, max);
	} else {
		snprintf(msg, msg_len, "update of '%s' failed: %s", name, strerror(-err));
	}
}

int insp_bundle_map_update(const struct rt_policy *p, const char *name, const char *key_hex,
			   const char *value_hex, char *msg, size_t msg_len)
{
	struct ebpf_object_map *om = find(p, name);
	struct ebpf_map *m = om ? ebpf_object_map__map(om) : NULL;
	if (!m) {
		snprintf(msg, msg_len, "no map '%s' in the active policy", name);
		return -ENOENT;
	}
	int cls = map_class(om);
	if (cls == CLASS_READ_ONLY) {
		snprintf(msg, msg_len, "map '%s' is read-only (.rodata)", name);
		return -EPERM;
	}
	if (cls == CLASS_PER_COMM) {
		snprintf(msg, msg_len,
			 "map '%s' is per-communicator: each communicator's tuner programs keep it "
			 "(the same on every rank); it takes no updates from outside",
			 name);
		return -EPERM;
	}
	if (cls == CLASS_UNIFORM) {
		/* Decisions may read it: every rank must switch at the same call. */
		snprintf(msg, msg_len,
			 "uniform map: use the control plane (NCCLBPF_CP_DIR); '%s' may feed "
			 "decisions, which must change on every rank at the same call",
			 name);
		return -EPERM;
	}
	size_t ks = ebpf_map__key_size(m), us = ebpf_map__user_value_size(m);
	uint32_t vs = ebpf_map__value_size(m), stride = (vs + 7) & ~7u;
	uint32_t cpus = is_percpu(m) ? ebpf_map__num_cpus(m) : 0;
	unsigned char *key = malloc(ks ? ks : 1), *val = calloc(1, us ? us : 1);
	int err = key && val ? 0 : -ENOMEM;
	if (!err && (!us || unhex(key_hex, key, ks) != 0)) {
		snprintf(msg, msg_len, "key must be %zu bytes as hex", ks);
		err = -EINVAL;
	}
	if (!err) {
		/* Per-CPU maps: one value for every CPU, or all CPUs' values (padded to 8). */
		if (unhex(value_hex, val, vs) == 0) {
			for (uint32_t c = 1; c < cpus; c++)
				memcpy(val + (size_t)c * stride, val, vs);
		} else if (!cpus || unhex(value_hex, val, us) != 0) {
			snprintf(msg, msg_len, "value must be %u bytes as hex%s", vs,
				 cpus ? " (or every CPU's, padded to 8 bytes)" : "");
			err = -EINVAL;
		}
	}
	if (!err) {
		err = ebpf_map__user_update(m, key, val, EBPF_ANY);
		if (err)
			update_refused(m, name, key, ks, err, msg, msg_len);
	}
	free(key);
	free(val);
	return err;
}
