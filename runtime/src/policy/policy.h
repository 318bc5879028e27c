/* What the policy folder (runtime/src/policy/: bundles, activation, reload, references,
 * per-communicator maps, traces, the communicator registry) offers the folders above it (net,
 * cp, inspect, start). It calls none of them by name: what it needs from them is handed to it
 * (rt_policy_set_drain, rt_policy_acquire's argument). */
#ifndef NCCLBPF_POLICY_H
#define NCCLBPF_POLICY_H

#include "base/rt_internal.h"

struct ebpf_map;

/* activate.c: swaps in p (may be NULL) and retires the previous policy (freed once no call can
 * still use it). wait: also wait for that and free it now. Returns the ns spent in the swap itself
 * and in retiring. Caller holds reload_lock. */
void rt_activate(struct rt_policy *p, int wait, uint64_t *swap_ns, uint64_t *retire_ns);
/* policy_ref.c: frees p now (its bundle, its release callback, its image); rt_policy_put when
 * a call may still see it. */
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
const struct rt_hook *rt_bundle_hook_of_prog(const struct rt_policy *p, const struct ebpf_exec *xp,
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
int rt_bundle_run_interp(const struct ebpf_exec *prog, void *ctx);
/* Same, also returning the program's r0. */
int rt_bundle_run_interp_r0(const struct ebpf_exec *prog, void *ctx, uint64_t *r0);
int rt_jit_available(void);

/* activate.c: runs the activation listeners (after every change of the active policy). */
void rt_notify_activate(void);

/* policy_ref.c: references; the last put retires p to the epoch reclaimer. */
void rt_policy_get(struct rt_policy *p);
void rt_policy_put(struct rt_policy *p);

/* policy_ref.c: ncclbpf_cp_hash (control.h) identifies a policy by its image (or a native
 * policy's name). */

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

/* reload_history.c: the last RT_RELOAD_HISTORY reload attempts, which the inspection shows. */
#define RT_RELOAD_HISTORY 16
struct rt_reload_event {
	uint64_t unix_ns;
	int err;
	uint64_t version; /* active after the attempt */
	uint64_t total_ns, verify_ns, jit_ns;
	char path[256];
	char msg[200];
};
void rt_reload_history_note(const char *path, const struct ncclbpf_reload_report *r);
/* Copies up to max events (oldest first) and returns how many; *total = attempts ever. */
unsigned rt_reload_history(struct rt_reload_event *out, unsigned max, uint64_t *total);

/* activate.c: what runs before every swap of the active policy (reload, unload): set by the net
 * folder when it first queues completions (net_defer.c), so that queued completions count in
 * the policy they were taken for; NULL: nothing. */
void rt_policy_set_drain(void (*drain)(void));
void rt_policy_drain(void);

/* runtime.c: the process's side of ncclbpf_rt_acquire/_release (start/start.c calls them in
 * order with the other folders'). rt_policy_acquire counts a user and returns the count; the
 * first reads the configuration (no_watch: the control plane is on, so no file watch: a
 * watched reload would switch ranks at different calls). rt_policy_first_load loads
 * NCCLBPF_POLICY (first acquire); rt_policy_release counts one off and returns the count;
 * rt_policy_shutdown (the last release) stops the watch, unloads and closes the trace. */
int rt_policy_acquire(int no_watch);
void rt_policy_first_load(void);
int rt_policy_release(void);
void rt_policy_shutdown(void);
/* runtime.c: the communicator registry (ncclbpf_comm__new/__free, start/start.c);
 * unregistering also destroys its per-communicator maps. */
void rt_comm_register(struct ncclbpf_comm *c);
void rt_comm_unregister(struct ncclbpf_comm *c);

/* trace.c */
void rt_trace_open(const char *path);
void rt_trace_close(void);

#endif
