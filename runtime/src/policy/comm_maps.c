/* Per-communicator maps (include/ncclbpf.h: NCCLBPF_F_PER_COMM): every communicator has its own
 * instance of each such map of the policy it runs, created when its context is created (or
 * when it first runs a policy with new per-communicator maps), written only by its own decision
 * programs, and freed at finalize. NCCL calls a communicator's tuner in the same order on every
 * rank, so state written from uniform inputs stays the same on every rank; the verifier keeps
 * rank-local values out of it.
 *
 * How programs reach the instance. The program code is the policy's, shared by every
 * communicator; its map references are the policy's maps (templates). Before a decision
 * program runs for a communicator, the hot path (runtime.h) stores the communicator's binding,
 * {template -> instance} pairs, in a thread-local pointer, and the map operations of a
 * per-communicator template use the bound instance (maps.h: ebpf_map__bind). The alternative,
 * per-communicator copies of the programs with the instances' addresses compiled in, would
 * need a program build and JIT compile per communicator and reload, code memory per
 * communicator, and a policy pointer per communicator that every reload must rewrite, for a
 * saving of one predictable branch per map helper call. The binding costs a policy without
 * per-communicator maps one load and one not-taken branch per call, and a policy with them one
 * call here and two thread-local stores; lookups in per-communicator arrays go through the
 * helper instead of the JIT's inlined address computation.
 *
 * Carrying state across a reload. A communicator's instances belong to one policy version.
 * The first call of the communicator that runs another version (after a plain reload, or at
 * the control plane's agreed sequence number, where the member switches inside that call)
 * builds instances for it and copies the contents of every old instance with the same name,
 * type and sizes, on the communicator's own thread, before the program runs: every rank copies
 * the same state at the same call. Old instances are retired through the epoch (the
 * inspection server may be reading them).
 *
 * Memory. The bundle limit (NCCLBPF_MAX_MAP_BYTES) counts a per-communicator map once, but
 * every communicator gets its own instances: a job with many communicators multiplied a large
 * one past the node's memory. So the instances of all communicators of the process together
 * are held to the same limit (a second pool beside the bundle's own maps; during a reload's
 * carry-over the retired ones may still hold as much again). A communicator whose instances
 * would not fit runs without the policy, as when memory runs out: one WARN, NCCL decides. */
#include <stdatomic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/epoch.h"
#include "ebpf/maps.h"
#include "ebpf/object.h"
#include "policy.h"

/* A communicator's instances for one policy version. */
struct rt_comm_maps {
	uint64_t version;
	int err;		    /* they could not be made (b NULL): the version runs without */
	uint64_t bytes;		    /* their memory (ebpf_map__def_memory), counted in live_bytes */
	struct ebpf_map_binding *b; /* n pairs: the policy's templates and their instances */
};

/* Memory of the instances of every communicator, current versions only. */
static _Atomic uint64_t live_bytes;

/* Replaces credit bytes of live_bytes (the set being replaced) by bytes unless that would pass
 * the limit: 0, or -E2BIG (nothing changed). */
static int reserve(uint64_t bytes, uint64_t credit, uint64_t limit)
{
	uint64_t have = atomic_load_explicit(&live_bytes, memory_order_relaxed);
	do {
		uint64_t rest = have - credit; /* credit is part of have */
		if (bytes > limit || rest > limit - bytes)
			return -E2BIG;
	} while (!atomic_compare_exchange_weak_explicit(
	    &live_bytes, &have, have - credit + bytes, memory_order_relaxed, memory_order_relaxed));
	return 0;
}

static void unreserve(struct rt_comm_maps *m)
{
	if (m && m->bytes) {
		atomic_fetch_sub_explicit(&live_bytes, m->bytes, memory_order_relaxed);
		m->bytes = 0;
	}
}

static struct ebpf_map_def inst_def(const struct ebpf_map *t)
{
	return (struct ebpf_map_def){
	    .sz = sizeof(struct ebpf_map_def),
	    .name = ebpf_map__name(t),
	    .type = ebpf_map__type(t),
	    .key_size = ebpf_map__key_size(t),
	    .value_size = ebpf_map__value_size(t),
	    .max_entries = ebpf_map__max_entries(t),
	    .flags = ebpf_map__flags(t) & ~EBPF_MAP_F_PER_COMM,
	};
}

static void comm_maps_free(void *ptr)
{
	struct rt_comm_maps *m = ptr;
	if (!m)
		return;
	unreserve(m); /* 0 once replaced or given back; a failure marker never holds any */
	for (uint32_t i = 0; m->b && i < m->b->n; i++)
		ebpf_map__free(m->b->e[i].inst);
	free(m->b);
	free(m);
}

/* The old instance to carry into inst: same name, type and sizes. */
static struct ebpf_map *old_match(const struct rt_comm_maps *old, const struct ebpf_map *inst)
{
	for (uint32_t i = 0; old && i < old->b->n; i++) {
		struct ebpf_map *o = old->b->e[i].inst;
		if (!strcmp(ebpf_map__name(o), ebpf_map__name(inst)) && rt_map_same_shape(o, inst))
			return o;
	}
	return NULL;
}

/* Instances of p's per-communicator maps, filled from old where it has the same map: 0, or
 * -E2BIG (*need, their memory, over what *limit leaves) or -ENOMEM. */
static int comm_maps_new(const struct rt_policy *p, struct rt_comm_maps *old,
			 struct rt_comm_maps **out, uint64_t *need, uint64_t *limit)
{
	struct ebpf_object_limits lim;
	uint32_t n = p->hot.comm_maps;
	*need = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct ebpf_map_def d = inst_def(p->comm_tmpl[i]);
		uint64_t b = ebpf_map__def_memory(&d);
		*need = *need > UINT64_MAX - b ? UINT64_MAX : *need + b;
	}
	ncclbpf_rt_bundle_limits(&lim);
	*limit = lim.map_bytes;
	/* The set being replaced counts no more once this one does: a reload's new version fits
	 * where the old one did. */
	uint64_t credit = old && !old->err ? old->bytes : 0;
	if (reserve(*need, credit, *limit))
		return -E2BIG;
	struct rt_comm_maps *m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	m->version = p->hot.version;
	m->b = calloc(1, sizeof(*m->b) + n * sizeof(m->b->e[0]));
	if (!m->b)
		goto nomem;
	for (uint32_t i = 0; i < n; i++) {
		struct ebpf_map *t = p->comm_tmpl[i];
		struct ebpf_map_def d = inst_def(t);
		char err[160];
		struct ebpf_map *inst = ebpf_map__create(&d, err, sizeof(err));
		struct ebpf_map *o = inst && old && !old->err ? old_match(old, inst) : NULL;
		if (!inst || (o && rt_bundle_copy_map(inst, o) != 0)) {
			ebpf_map__free(inst);
			goto nomem;
		}
		m->b->e[i].tmpl = t;
		m->b->e[i].inst = inst;
		m->b->n = i + 1;
	}
	m->bytes = *need; /* the reservation is the new set's now, and no longer the old one's */
	if (old)
		old->bytes = 0;
	*out = m;
	return 0;
nomem:
	comm_maps_free(m); /* m->bytes is still 0: it gives nothing back */
	atomic_fetch_add_explicit(&live_bytes, credit - *need, memory_order_relaxed); /* undo */
	return -ENOMEM;
}

int ncclbpf_rt__comm_maps_bind(struct ncclbpf_comm *c, const struct ncclbpf_rt_policy_hot *hot)
{
	struct rt_comm_maps *m = __atomic_load_n(&c->comm_maps, __ATOMIC_ACQUIRE);
	if (__builtin_expect(m && m->version == hot->version && m->err, 0))
		return m->err; /* decided at the version's first call: NCCL decides, all along */
	if (__builtin_expect(!m || m->version != hot->version, 0)) {
		/* The first call under another policy version: build and carry over. */
		struct rt_comm_maps *nm = NULL;
		uint64_t need, limit;
		int e = comm_maps_new((const struct rt_policy *)(const void *)hot, m, &nm, &need,
				      &limit);
		if (e) {
			static int said;
			char why[200];
			if (e == -E2BIG)
				snprintf(why, sizeof(why),
					 "its %llu bytes would take the per-communicator maps of "
					 "all communicators past NCCLBPF_MAX_MAP_BYTES=%llu",
					 (unsigned long long)need, (unsigned long long)limit);
			else
				snprintf(why, sizeof(why), "out of memory");
			if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
				rt_log(NCCLBPF_LOG_WARN,
				       "NCCLbpf: cannot create the per-communicator maps of policy "
				       "version %llu for communicator %016llx (%s); its decisions "
				       "under this version are left to NCCL",
				       (unsigned long long)hot->version,
				       (unsigned long long)c->comm_id, why);
			/* Remembered for the version, so that the communicator's decisions do not
			 * switch to the policy halfway when memory frees up (the old instances go:
			 * a later version starts this communicator's state afresh). */
			struct rt_comm_maps *f = calloc(1, sizeof(*f));
			if (f) {
				f->version = hot->version;
				f->err = e;
				__atomic_store_n(&c->comm_maps, f, __ATOMIC_RELEASE);
				if (m) {
					unreserve(m);
					ebpf_epoch_retire(m, comm_maps_free);
				}
			}
			return e;
		}
		__atomic_store_n(&c->comm_maps, nm, __ATOMIC_RELEASE);
		if (m)
			ebpf_epoch_retire(m, comm_maps_free);
		m = nm;
	}
	ebpf_map__bind(m->b);
	return 0;
}

void rt_comm_maps_create(struct ncclbpf_comm *c)
{
	ebpf_epoch_enter();
	const struct ncclbpf_rt_policy_hot *p =
	    (const struct ncclbpf_rt_policy_hot *)(const void *)__atomic_load_n(
		ncclbpf_rt__comm_slot(c), __ATOMIC_ACQUIRE);
	if (p && p->comm_maps && ncclbpf_rt__comm_maps_bind(c, p) == 0)
		ebpf_map__bind(NULL);
	ebpf_epoch_exit();
}

void rt_comm_maps_destroy(struct ncclbpf_comm *c)
{
	struct rt_comm_maps *m = __atomic_exchange_n(&c->comm_maps, NULL, __ATOMIC_ACQ_REL);
	if (m) {
		unreserve(m); /* free for the next communicator now, not after the grace period */
		ebpf_epoch_retire(m, comm_maps_free);
	}
}

struct ebpf_map *rt_comm_maps_find(const struct ncclbpf_comm *c, uint64_t version, const char *name)
{
	const struct rt_comm_maps *m = __atomic_load_n(&c->comm_maps, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; m && m->b && (!version || m->version == version) && i < m->b->n; i++)
		if (!strcmp(ebpf_map__name(m->b->e[i].inst), name))
			return m->b->e[i].inst;
	return NULL;
}
