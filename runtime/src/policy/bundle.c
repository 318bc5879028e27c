/* Engine binding: a bundle is one BPF ELF object. Opening parses it (ELF, BTF, relocations),
 * loading creates its maps, verifies every program and creates the executable programs, and the
 * programs of the hooks the runtime serves are JIT-compiled. This is the only runtime file that
 * calls the engine's loader and JIT. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclbpf/map_walk.h"
#include "ebpf/jit.h"
#include "ebpf/maps.h"
#include "ebpf/object.h"
#include "ncclbpf/nccl_platform.h"
#include "ncclbpf/envvars.h"
#include "policy.h"
#include "telem/telem.h"

/* Hooks by program type (runtime/platform/nccl_platform.c, the one table of sections) and, for
 * net, by event. A program in any other section is an error (a misspelt section would
 * otherwise load and never run). */
#define NET_HOOK(event)                                                                            \
	{                                                                                          \
		"net", (event)-1, offsetof(struct rt_policy, net[(event)-1]), 0, (event)-1         \
	}
static const struct {
	const char *type;
	int name; /* which of the type's section names (ebpf_prog_type.names) */
	size_t hook_off;
	uint32_t profiler_needs; /* what the adapter must ask NCCL for (runtime.h) */
	int net_slot;		 /* index into rt_policy.net, -1: not a net hook */
} hooks[] = {
    {"tuner", 0, offsetof(struct rt_policy, hot.tuner), 0, -1},
    {"tuner_chunk", 0, offsetof(struct rt_policy, hot.chunk), 0, -1},
    /* All three attach to the one profiler hook; the section says which NCCL events it needs. */
    {"profiler", 0, offsetof(struct rt_policy, hot.profiler), NCCLBPF_RT_PROF_PROGRAM, -1},
    {"profiler_proxy", 0, offsetof(struct rt_policy, hot.profiler),
     NCCLBPF_RT_PROF_PROGRAM | NCCLBPF_RT_PROF_PROXY, -1},
    {"profiler_coll_end", 0, offsetof(struct rt_policy, hot.profiler),
     NCCLBPF_RT_PROF_PROGRAM | NCCLBPF_RT_PROF_END_ONLY, -1},
    NET_HOOK(NCCLBPF_NET_CONNECT),
    NET_HOOK(NCCLBPF_NET_ACCEPT),
    NET_HOOK(NCCLBPF_NET_ISEND),
    NET_HOOK(NCCLBPF_NET_IRECV),
    NET_HOOK(NCCLBPF_NET_COMPLETE),
};

/* NCCLBPF_NET_TIME_EVERY (1..2^20), 0 when unset: the operator's stride, over any policy's;
 * read once per process. */
static uint32_t env_time_every;
static void read_time_every(void)
{
	env_time_every = (uint32_t)ncclbpf_env_uint("NCCLBPF_NET_TIME_EVERY");
}
static uint32_t time_every_env(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, read_time_every);
	return env_time_every;
}

/* The runtime runs verified code only: ebpf_object__load verifies every program (and decides
 * which maps decisions may depend on, recording it on each map) before anything is created.
 * What the runtime takes from that: the verification time, and what each program may read of
 * its context (reads[k] fields, words[k] 8-byte words) and write (written[k] words), for the
 * k-th program in object order. */
static void verify_results(struct ebpf_object *obj, struct ncclbpf_reload_report *r,
			   uint64_t *in_load_ns, uint64_t *reads, uint64_t *words,
			   uint64_t *written)
{
	uint32_t k = 0, n_progs = ebpf_object__prog_cnt(obj);
	for (struct ebpf_program *p = ebpf_object__next_program(obj, NULL); p && k < n_progs;
	     p = ebpf_object__next_program(obj, p), k++) {
		const struct ebpf_verify_stats *vs = ebpf_program__verify_stats(p);
		r->verify_ns += vs->time_ns;
		*in_load_ns += vs->time_ns;
		reads[k] = vs->ctx_read;
		words[k] = vs->ctx_words;
		written[k] = vs->ctx_written;
		if (ebpf_program__ctx_converted(p)) /* read from the table, not the context */
			words[k] &= ~ebpf_ctx_from_f32_words(ebpf_program__type(p)->from_f32);
	}
}

/* When each net event reads the clock (rt_policy.net_clock): reads[i] is what the program of
 * net slot i may read (0 when none is attached). Field bits come from the net program type by
 * name; a type without the field counts as reading it whenever it reads anything. */
static void net_clock_flags(struct rt_policy *p, const uint64_t *reads)
{
	const struct ebpf_prog_type *t = ncclbpf_prog_type("net");
	uint64_t tb = ebpf_prog_type_field_bit(t, "time_ns");
	uint64_t db = ebpf_prog_type_field_bit(t, "duration_ns");
	const int done = NCCLBPF_NET_COMPLETE - 1;
	tb = tb ? tb : ~0ull;
	db = db ? db : ~0ull;
	for (int i = 0; i < RT_NET_HOOKS; i++)
		p->net_clock[i] = (reads[i] & tb) ? RT_NET_CLOCK_NOW : 0;
	/* the completion's duration needs the posting time, and its own time */
	if (reads[done] & db) {
		p->net_clock[NCCLBPF_NET_ISEND - 1] |= RT_NET_CLOCK_AFTER;
		p->net_clock[NCCLBPF_NET_IRECV - 1] |= RT_NET_CLOCK_AFTER;
		p->net_clock[done] |= RT_NET_CLOCK_DUR;
	}
}

#define TIME_EVERY_MAX (1u << 20)

/* Which hook serves section sec: its index in hooks[], or -1. *every gets N of
 * SEC("net/complete/time_every=N") (ncclbpf.h: NCCLBPF_NET_COMPLETE_SAMPLED), else 0. */
static int hook_of(const char *sec, uint32_t *every)
{
	*every = 0;
	const struct ebpf_prog_type *t = ebpf_platform_type_by_section(ncclbpf_platform(), sec);
	uint64_t num;
	int name = ebpf_prog_type_section_name(t, sec, &num);
	if (name < 0)
		return -1;
	if (t == ncclbpf_prog_type("net") && name == NCCLBPF_NET_NAME_SAMPLED) {
		if (num < 1 || num > TIME_EVERY_MAX)
			return -1;
		*every = (uint32_t)num;
		name = NCCLBPF_NET_COMPLETE - 1;
	}
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (!strcmp(t->name, hooks[i].type) && name == hooks[i].name)
			return (int)i;
	return -1;
}

/* The message names every section of the platform's table (test_sections checks that each is
 * served), so it cannot fall behind the table. */
static void unserved(const char *sec, char *why, size_t n)
{
	char known[512];
	ebpf_platform_sections(ncclbpf_platform(), known, sizeof(known));
	snprintf(why, n, "no hook serves SEC(\"%s\") (%s; N in 1..%u)", sec, known, TIME_EVERY_MAX);
}

const struct rt_hook *rt_bundle_hook_of_prog(const struct rt_policy *p, const struct ebpf_exec *xp,
					     char *name, size_t len)
{
	snprintf(name, len, "-");
	for (size_t i = 0; xp && i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		const struct rt_hook *h =
		    (const struct rt_hook *)((const char *)p + hooks[i].hook_off);
		if (h->prog != xp)
			continue;
		/* the profiler's three sections share one hook: name the hook */
		const struct ebpf_prog_type *t =
		    ncclbpf_prog_type(hooks[i].profiler_needs ? "profiler" : hooks[i].type);
		snprintf(name, len, "%s%s", t->section, t->names ? t->names[hooks[i].name] : "");
		return h;
	}
	return NULL;
}

int ncclbpf_rt_section_served(const char *section, uint32_t *time_every, char *why, size_t why_len)
{
	uint32_t every = 0;
	int served = section && hook_of(section, &every) >= 0;
	if (time_every)
		*time_every = every;
	if (served)
		return 0;
	if (why && why_len)
		unserved(section ? section : "", why, why_len);
	return -EINVAL;
}

int ncclbpf_rt_bundle_check(const struct ebpf_object *obj, const struct ebpf_program **bad,
			    char *why, size_t why_len)
{
	/* first program seen per hook (the profiler's sections share one) */
	const struct ebpf_program *seen[sizeof(hooks) / sizeof(hooks[0])] = {0};
	for (const struct ebpf_program *p = ebpf_object__next_program(obj, NULL); p;
	     p = ebpf_object__next_program(obj, p)) {
		uint32_t every;
		const char *sec = ebpf_program__section(p);
		int i = hook_of(sec, &every), e = 0;
		if (i < 0) {
			unserved(sec, why, why_len);
			e = -EINVAL;
		}
		for (size_t k = 0; !e && k < sizeof(hooks) / sizeof(hooks[0]); k++)
			if (seen[k] && hooks[k].hook_off == hooks[i].hook_off) {
				snprintf(why, why_len,
					 "a second program for the hook of SEC(\"%s\") (the first "
					 "is %s); one program per hook",
					 sec, ebpf_program__name(seen[k]));
				e = -EINVAL;
			}
		if (e) {
			if (bad)
				*bad = p;
			return e;
		}
		seen[i] = p;
	}
	return 0;
}

static int attach(struct rt_policy *p, struct ebpf_program *prog, size_t off, int engine,
		  struct ncclbpf_reload_report *r)
{
	struct rt_hook *h = (struct rt_hook *)((char *)p + off);
	struct ebpf_exec *xp = ebpf_program__exec(prog);
	if (!xp) {
		snprintf(r->msg, sizeof(r->msg), "program %s was not created",
			 ebpf_program__name(prog));
		return -EINVAL;
	}
	h->prog = xp; /* one program per hook: ncclbpf_rt_bundle_check */
	h->arg = 0;
	if (engine != NCCLBPF_ENGINE_JIT)
		return 0;
	char err[256];
	struct ebpf_jit_stats st = {0};
	uint64_t t0 = rt_now_ns();
	int e = ebpf_exec__jit(xp, &st, err, sizeof(err));
	r->jit_ns += rt_now_ns() - t0;
	if (e) {
		/* The interpreter runs the same verified program: slower, never unsafe. */
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: JIT of %s failed (%s); using the interpreter",
		       ebpf_program__name(prog), err);
		return 0;
	}
	h->fn = (rt_fn)ebpf_exec__jit_fn(xp);
	h->code_size = st.code_size;
#ifdef EBPF_JIT_HAVE_KEEPING_CALL
	h->keeps_regs = st.keeps_regs;
#endif
	return 0;
}

/* The caller keeps the bytes (p->image): a control-plane map update rebuilds the policy from
 * them rather than from a file that may have changed since. Files are read by the caller
 * (reload.c), outside reload_lock. */
int rt_bundle_load_mem(const void *image, size_t len, const char *name, int engine,
		       struct rt_policy *p, struct ncclbpf_reload_report *r)
{
	char err[sizeof(r->msg)];
	uint64_t t0 = rt_now_ns();
	struct ebpf_object_open_opts oo = {.sz = sizeof(oo), .name = name};
	struct ebpf_object *obj = ncclbpf_object_open_mem(image, len, &oo, err, sizeof(err));
	r->parse_ns = rt_now_ns() - t0;
	if (!obj) {
		int e = errno ? -errno : -EINVAL;
		snprintf(r->msg, sizeof(r->msg), "%s", err);
		return e;
	}
	/* Cheap refusals first: nothing is created or verified for a bundle that breaks a
	 * structural rule or a limit. */
	const struct ebpf_program *bad = NULL;
	char why[sizeof(r->msg) - 128]; /* room for the program's name */
	int e = ncclbpf_rt_bundle_check(obj, &bad, why, sizeof(why));
	if (e) {
		snprintf(r->msg, sizeof(r->msg), "program %s: %s", ebpf_program__name(bad), why);
		ebpf_object__close(obj);
		return e;
	}
	if ((e = telem_check_exports(obj, r->msg, sizeof(r->msg))) != 0) {
		ebpf_object__close(obj);
		return e;
	}
	struct ebpf_object_limits limits;
	ncclbpf_rt_bundle_limits(&limits);
	/* Tuner programs read the cost cells they need straight from NCCL's table. */
	struct ebpf_object_load_opts lo = {.sz = sizeof(lo), .limits = &limits, .convert_ctx = 1};
	t0 = rt_now_ns();
	e = ebpf_object__load(obj, &lo, err, sizeof(err));
	uint64_t load_ns = rt_now_ns() - t0;
	if (e) {
		snprintf(r->msg, sizeof(r->msg), "%s", err);
		ebpf_object__close(obj);
		return e;
	}
	r->n_progs = ebpf_object__prog_cnt(obj);
	r->n_maps = ebpf_object__map_cnt(obj);
	uint64_t verified_in_load = 0;
	size_t n_res = r->n_progs ? r->n_progs : 1;
	uint64_t *reads = malloc(n_res * 3 * sizeof(*reads));
	uint64_t *words = reads ? reads + n_res : NULL, *written = reads ? reads + 2 * n_res : NULL;
	if (!reads) {
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		ebpf_object__close(obj);
		return -ENOMEM;
	}
	verify_results(obj, r, &verified_in_load, reads, words, written);
	/* load_ns includes the verifier when the loader ran it. */
	r->load_ns = load_ns > verified_in_load ? load_ns - verified_in_load : 0;
	p->obj = obj;
	uint64_t net_reads[RT_NET_HOOKS] = {0};
	uint32_t k = 0;
	for (struct ebpf_program *prog = ebpf_object__next_program(obj, NULL); prog;
	     prog = ebpf_object__next_program(obj, prog), k++) {
		uint32_t every;
		int i = hook_of(ebpf_program__section(prog), &every); /* served: checked above */
		e = attach(p, prog, hooks[i].hook_off, engine, r);
		if (e) {
			free(reads);
			rt_bundle_free(p);
			return e;
		}
		struct rt_hook *h = (struct rt_hook *)((char *)p + hooks[i].hook_off);
		h->ctx_words = k < r->n_progs ? words[k] : ~0ull;
		h->ctx_written = k < r->n_progs ? written[k] : ~0ull;
		p->hot.profiler_needs |= hooks[i].profiler_needs;
		if (hooks[i].net_slot >= 0)
			net_reads[hooks[i].net_slot] = k < r->n_progs ? reads[k] : ~0ull;
		if (every)
			p->net_time_every = every;
	}
	free(reads);
	net_clock_flags(p, net_reads);
	/* Per-communicator maps: the templates each communicator instantiates (comm_maps.c). */
	for (struct ebpf_object_map *om = ebpf_object__next_map(obj, NULL); om;
	     om = ebpf_object__next_map(obj, om))
		if (ebpf_object_map__rank_flags(om) & EBPF_OBJECT_MAP_F_PER_COMM)
			p->comm_tmpl[p->hot.comm_maps++] = ebpf_object_map__map(om);
	/* The operator's NCCLBPF_NET_TIME_EVERY wins over the program's section. */
	uint32_t env_every = time_every_env();
	p->net_time_every = env_every ? env_every : p->net_time_every ? p->net_time_every : 1;
	/* Report the engine actually used by the tuner hook. */
	if (engine == NCCLBPF_ENGINE_JIT && p->hot.tuner.prog && !p->hot.tuner.fn)
		p->engine = NCCLBPF_ENGINE_INTERP;
	p->hot.tuner_keeps = ncclbpf_rt__tuner_keeps(&p->hot); /* the hook and its maps are set */
	return 0;
}

void rt_bundle_free(struct rt_policy *p)
{
	if (p->obj)
		ebpf_object__close(p->obj);
	p->obj = NULL;
	p->hot.tuner = p->hot.chunk = p->hot.profiler = (struct rt_hook){0};
	p->hot.profiler_needs = 0;
	p->hot.comm_maps = 0;
	p->hot.tuner_keeps = 0;
	memset(p->net, 0, sizeof(p->net));
	memset(p->net_clock, 0, sizeof(p->net_clock));
	p->net_time_every = 0;
}

static int copy_elem(const void *key, const void *value, void *dst)
{
	return ebpf_map__user_update(dst, key, value, EBPF_ANY);
}

int rt_bundle_copy_map(struct ebpf_map *dst, struct ebpf_map *src)
{
	return ncclbpf_map_walk(src, 0, copy_elem, dst);
}

int rt_map_same_shape(const struct ebpf_map *a, const struct ebpf_map *b)
{
	return ebpf_map__type(a) == ebpf_map__type(b) &&
	       ebpf_map__key_size(a) == ebpf_map__key_size(b) &&
	       ebpf_map__value_size(a) == ebpf_map__value_size(b) &&
	       ebpf_map__max_entries(a) == ebpf_map__max_entries(b);
}

uint32_t rt_bundle_carry_maps(struct rt_policy *p, const struct rt_policy *old, int with_globals)
{
	uint32_t kept = 0;
	if (!old || !old->obj || !p->obj)
		return 0;
	for (struct ebpf_object_map *m = ebpf_object__next_map(p->obj, NULL); m;
	     m = ebpf_object__next_map(p->obj, m)) {
		/* Global data (.rodata/.data/.bss) is part of the new bundle's code and comes from
		 * it; state meant to survive a reload lives in .maps maps. A rebuild of the same
		 * bundle (with_globals) keeps .data/.bss too: there they are the same state. */
		int k = ebpf_object_map__kind(m);
		if (k == EBPF_OBJECT_MAP_RODATA || (k != EBPF_OBJECT_MAP_BTF && !with_globals))
			continue;
		struct ebpf_object_map *om =
		    ebpf_object__find_map_by_name(old->obj, ebpf_object_map__name(m));
		if (!om || ebpf_object_map__kind(om) != k)
			continue;
		struct ebpf_map *a = ebpf_object_map__map(m), *b = ebpf_object_map__map(om);
		if (!a || !b || !rt_map_same_shape(a, b) ||
		    ebpf_map__type(a) == EBPF_MAP_TYPE_RINGBUF)
			continue;
		int e = rt_bundle_copy_map(a, b);
		if (e)
			rt_log(NCCLBPF_LOG_WARN,
			       "NCCLbpf: contents of map %s not carried over (error %d)",
			       ebpf_object_map__name(m), e);
		else
			kept++;
	}
	return kept;
}

struct ebpf_map *rt_bundle_find_map(const struct rt_policy *p, const char *name)
{
	if (!p->obj)
		return NULL;
	struct ebpf_object_map *m = ebpf_object__find_map_by_name(p->obj, name);
	return m ? ebpf_object_map__map(m) : NULL;
}

int rt_bundle_run_interp(const struct ebpf_exec *prog, void *ctx)
{
	uint64_t r0;
	return ebpf_interp__run(prog, (uint64_t)(uintptr_t)ctx, 0, NULL, &r0);
}

int rt_bundle_run_interp_r0(const struct ebpf_exec *prog, void *ctx, uint64_t *r0)
{
	return ebpf_interp__run(prog, (uint64_t)(uintptr_t)ctx, 0, NULL, r0);
}

int rt_jit_available(void)
{
	return ebpf_jit_available();
}
