/* State shared by the runtime's files. */
#ifndef NCCLBPF_RT_INTERNAL_H
#define NCCLBPF_RT_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "ncclbpf/runtime.h"

struct ebpf_prog;
struct ebpf_object;

/* Runtime-side names of the public hot-path types (runtime.h). */
typedef ncclbpf_rt_fn rt_fn;
#define rt_hook ncclbpf_rt_hook

/* Net hooks in NCCLBPF_NET_* order minus one (connect, accept, isend, irecv, complete). */
#define RT_NET_HOOKS 5
/* When a net event reads the clock: NOW, before its program runs (the program may read time_ns
 * or duration_ns); AFTER, posts only: the completion's duration needs the posting time, which
 * the caller may take once the request is handed to the transport (off the data's path). */
#define RT_NET_CLOCK_NOW   1u
#define RT_NET_CLOCK_AFTER 2u
/* completions: the program may read duration_ns (NOW: time_ns) */
#define RT_NET_CLOCK_DUR 4u

/* net_tsc.c: TSC posting stamps (ncclbpf_rt_net_stamp). A stamp with RT_TSC_TAG set holds TSC
 * ticks, without it CLOCK_MONOTONIC ns; a completion converts whichever it gets. */
#define RT_TSC_TAG (1ull << 63)
struct rt_tsc_state {
	int on;
	uint64_t mult; /* ns per tick, 32.32 fixed point */
};
extern struct rt_tsc_state rt_tsc;
void rt_tsc_setup(void); /* once per process, at the first acquire (a 2 ms calibration) */
uint64_t rt_tsc_read(void);
uint64_t rt_tsc_ticks_to_ns(uint64_t ticks);
/* NCCLBPF_NET_TIME_EVERY (1..2^20), 0 when unset: the operator's stride, over any policy's. */
uint32_t rt_net_time_every_env(void);

/* Both completions (send, receive) are served by SEC("net/complete"). */
static inline uint32_t rt_net_slot(uint32_t op)
{
	return op == NCCLBPF_NET_COMPLETE_RECV ? NCCLBPF_NET_COMPLETE - 1 : op - 1;
}

/* A loaded policy. Immutable once published; freed only after an epoch drain. */
struct rt_policy {
	struct ncclbpf_rt_policy_hot hot; /* first: read by the inline entries of runtime.h */
	int engine;			  /* enum ncclbpf_engine_kind */
	struct rt_hook net[RT_NET_HOOKS]; /* SEC("net/connect") .. SEC("net/complete") */
	/* 1 when the net event of that slot reads the clock (bundle.c, from what the programs
	 * may read): its program reads time_ns, or, for isend/irecv, the complete program reads
	 * duration_ns (the posting time), or, for complete, it reads duration_ns. */
	uint8_t net_clock[RT_NET_HOOKS]; /* RT_NET_CLOCK_* per net hook */
	/* Posts stamped for the completion's duration_ns: one in this many per connection (1:
	 * every one). SEC("net/complete/time_every=N"), or NCCLBPF_NET_TIME_EVERY over it. */
	uint32_t net_time_every;
	struct ebpf_object *obj;       /* owns programs, code and maps (NULL for native policies) */
	void (*release)(uint64_t arg); /* native policies: called when freed */
	uint64_t release_arg;
	char name[4200];		   /* bundle path or "native:NAME" */
	struct ncclbpf_reload_report load; /* how it was loaded (times, counts), for inspection */
	/* Control plane (cp_policy.c): references (the process default and every communicator
	 * bound to it; retired when the last goes), the ELF image (map-update proposals rebuild
	 * from it) and its hash. */
	_Atomic uint32_t refs;
	void *image;
	size_t image_len;
	uint64_t hash;
	/* Its per-communicator maps (templates; hot.comm_maps of them), bundle.c. */
	struct ebpf_map *comm_tmpl[64];
};

/* The process-wide active policy (runtime.h names it for the inline entries). Own cache line
 * (runtime.c): every hook call reads it, and rt's locks are taken by slow paths (reloads,
 * inspection) that must not bounce the hot path's line. */
#define rt_active ncclbpf_rt_active_

struct rt_state {
	pthread_mutex_t lock;	     /* refcount, comms registry, configuration */
	pthread_mutex_t reload_lock; /* serialises reloads */
	int refcount;
	/* configuration (from the environment at the first acquire) */
	char policy_path[4096];
	int have_policy_path;
	int engine;
	int engine_forced;
	int watch;
	int debug;
	/* registry and totals */
	struct ncclbpf_comm *comms;
	uint64_t totals[NCCLBPF_STAT_MAX];
	uint64_t comms_live, comms_total;
	_Atomic uint64_t reloads_ok, reloads_failed;
	_Atomic uint64_t next_version;
};

extern struct rt_state rt;

void rt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t rt_now_ns(void);
/* The time ns from now on clock clk, as the absolute deadline pthread's timed waits take. */
struct timespec rt_time_after(clockid_t clk, uint64_t ns);

/* Swaps in p (may be NULL) and retires the previous policy (freed once no call can still use
 * it). wait: also wait for that and free it now. Returns the ns spent in the swap itself and in
 * retiring. Caller holds reload_lock. */
void rt_activate(struct rt_policy *p, int wait, uint64_t *swap_ns, uint64_t *retire_ns);
void rt_policy_free(struct rt_policy *p);
/* reload.c: a new policy loaded from image, which it takes over (p->image; freed on failure),
 * run by the process's engine (the interpreter where there is no JIT), holding one reference.
 * NULL on failure, with r->err and r->msg. r->parse_ns: what the caller put there (a file's
 * read time) plus the parse. */
struct rt_policy *rt_policy_load(void *image, size_t len, const char *name,
				 struct ncclbpf_reload_report *r);

/* bundle.c: the only file that talks to the engine's loader/JIT. */
int rt_bundle_load_mem(const void *image, size_t len, const char *name, int engine,
		       struct rt_policy *p, struct ncclbpf_reload_report *r);
void rt_bundle_free(struct rt_policy *p);
/* The one carry-over of map contents from a policy to the next (file reload, control-plane
 * switch): copies every map of old into the map of p with the same name and shape
 * (rt_map_same_shape; ring buffers never), .maps maps always, .data/.bss only with_globals (a
 * rebuild of the same bundle, where they are the same state), .rodata never. A copy that fails
 * is logged. Returns the number of maps carried. Per-communicator instances are carried by
 * comm_maps.c, with the same shape rule, at each communicator's first call under p. */
uint32_t rt_bundle_carry_maps(struct rt_policy *p, const struct rt_policy *old, int with_globals);
/* 1 when a and b have the same type, key, value and entry sizes (contents can be copied). */
int rt_map_same_shape(const struct ebpf_map *a, const struct ebpf_map *b);
/* The hook of p that runs xp and its name ("tuner", "profiler", "net/complete", ...); NULL and
 * "-" for none. */
const struct rt_hook *rt_bundle_hook_of_prog(const struct rt_policy *p, const struct ebpf_prog *xp,
					     char *name, size_t len);
/* The map called name in p's bundle, or NULL. */
struct ebpf_map *rt_bundle_find_map(const struct rt_policy *p, const char *name);
/* Copies every element of src into dst (same type and sizes, checked by the caller): 0 or
 * -errno. */
int rt_bundle_copy_map(struct ebpf_map *dst, struct ebpf_map *src);

/* comm_maps.c: a communicator's instances of its policy's per-communicator maps, created at
 * its creation (for the policy it runs then), freed at its end (retired through the epoch). */
struct rt_comm_maps;
void rt_comm_maps_create(struct ncclbpf_comm *c);
void rt_comm_maps_destroy(struct ncclbpf_comm *c);
/* c's instance of the per-communicator map `name` of policy version `version` (0: the version c
 * runs), or NULL. Call inside an epoch section. */
struct ebpf_map *rt_comm_maps_find(const struct ncclbpf_comm *c, uint64_t version,
				   const char *name);
int rt_bundle_run_interp(const struct ebpf_prog *prog, void *ctx);
/* Same, also returning the program's r0. */
int rt_bundle_run_interp_r0(const struct ebpf_prog *prog, void *ctx, uint64_t *r0);
int rt_jit_available(void);

/* Runs one net hook's program on x (inside the caller's epoch section): 0 and r0 in *ret, or
 * -ENOENT when none is attached. */
static inline int rt_net_run_hook(const struct rt_hook *h, struct ncclbpf_net_ctx *x, uint64_t *ret)
{
	int err = 0;
	if (h->fn)
		*ret = h->fn((uint64_t)(uintptr_t)x, h->arg);
	else
		err = h->prog ? rt_bundle_run_interp_r0(h->prog, x, ret) : -ENOENT;
	if (err == 0)
		ncclbpf_rt__count_run(NCCLBPF_RT_RUNS_NET + rt_net_slot(x->op));
	return err;
}

/* net_defer.c: queues a completion whose time is filled in for a later run of SEC("net/complete")
 * (ncclbpf_rt_net_complete). Returns 0 when the caller must run it now (no queue, or the queue
 * is full and another thread is emptying it). */
int rt_net_defer(struct ncclbpf_net_queue *q, const struct ncclbpf_net_ctx *x);

/* Runs the activation listeners (after every change of the active policy). */
void rt_notify_activate(void);

/* cp_policy.c: references; the last put retires p to the epoch reclaimer. */
void rt_policy_get(struct rt_policy *p);
void rt_policy_put(struct rt_policy *p);

/* cp_member.c */
int cp_enabled(void);
/* NCCLBPF_CP_DIR is set but refused (not trusted): live inspection stays off too, quietly (the
 * control plane's WARN said why). */
int cp_dir_refused(void);
void cp_member_attach(struct ncclbpf_comm *c);
void cp_member_detach(struct ncclbpf_comm *c);

/* reload.c: ncclbpf_rt_reload with a way out. cancel (may be NULL) is looked at once the file
 * is read and again under reload_lock: when set, nothing is activated (-ECANCELED). */
int rt_reload(const char *path, struct ncclbpf_reload_report *r, const int *cancel);
/* Loads and activates image (taken over, freed on failure) as policy name. */
int rt_reload_image(void *image, size_t len, const char *name, struct ncclbpf_reload_report *r);

/* launch_bundle.c: 1 when the file NCCLBPF_POLICY names is no longer the one read at launch. */
int rt_launch_changed(void);

/* watch.c */
int rt_watch_start(const char *path);
void rt_watch_stop(void);
int rt_watch_running(void);

/* inspect_*.c: the live-inspection server (started at the first acquire, stopped at the last
 * release) and the reload history it reports. */
void rt_inspect_start(void);
void rt_inspect_stop(void);
void rt_inspect_note_reload(const char *path, const struct ncclbpf_reload_report *r);

/* ident.c: the process's identity from the job's environment (host, job id, ranks, GPU),
 * shared by the inspection and the telemetry's labels; "-" where unknown. */
struct rt_ident {
	char host[65];
	char job[128];
	char rank[16], local_rank[16];
	char gpu[64];
	uint64_t start_unix_ns;
	int pid;
	unsigned uid;
};
void rt_ident_read(struct rt_ident *id);
/* Copies src keeping [A-Za-z0-9.-_:/@], every other byte as '_' (a token for a file, a record
 * or a label value). */
void rt_clean_token(char *dst, size_t len, const char *src);

/* telem_export.c: reads the telemetry configuration and starts the exporter thread when an
 * output is configured (first acquire); stops it (last release). */
void rt_telem_start(void);
void rt_telem_stop(void);
/* telem_maps.c: a bundle's exported maps (NCCLBPF_EXPORT_*) can be rendered: map names and key
 * members that would clash with labels every sample has are refused at load (why says which).
 * 0 or -EINVAL. */
struct ebpf_object;
int telem_check_exports(const struct ebpf_object *obj, char *why, size_t len);

/* trace.c */
void rt_trace_open(const char *path);
void rt_trace_close(void);

#endif
