/* The runtime (layer 2): policy bundles, their lifecycle (load -> verify -> JIT -> activate),
 * hot reload with epoch-based retirement, per-communicator contexts, statistics and trace
 * recording. It knows nothing of NCCL's plugin ABI; adapters (adapters/nccl/) translate.
 *
 * Model
 * - One process-wide runtime, reference-counted: every communicator an adapter creates holds a
 *   reference (ncclbpf_rt_acquire/release). The first acquire reads the configuration from the
 *   environment, loads the bundle and starts the bundle watcher; the last release stops the
 *   watcher and retires the policy.
 * - A policy is one loaded, verified, compiled bundle with a process-unique version number
 *   (1, 2, ... in load order). Exactly one policy (or none) is active; it is published through
 *   one atomic pointer. A hook call reads that pointer once, inside a read-side epoch, so a call
 *   runs entirely under one version. A reload swaps the pointer and retires the old policy to
 *   the engine's epoch reclaimer: its code and maps are freed only after every call that could
 *   still see it has left its epoch section (engine/include/ebpf/epoch.h).
 * - The hot path (ncclbpf_rt_run_*) takes no lock and allocates nothing.
 *
 * Environment (read at the first acquire)
 *   NCCLBPF_POLICY=PATH   the bundle (one BPF ELF object). Unset: no policy, every hook leaves
 *                         NCCL alone (each adapter says once what that means for it).
 *   NCCLBPF_ENGINE=jit|interp   execution engine (default jit, interpreter where no JIT).
 *   NCCLBPF_WATCH=0       do not watch the bundle path for hot reload (default: watch).
 *   NCCLBPF_TRACE=FILE    append one text line per hook call (format: trace.h).
 *   NCCLBPF_DEBUG=1       log every reload step at INFO level.
 *   NCCLBPF_INSPECT=0     no live-inspection server (ncclbpf ps/stat/map; default on).
 *   NCCLBPF_CP_DIR=DIR    where the process registers (default /dev/shm/ncclbpf-<uid>).
 *   NCCLBPF_MAX_MAP_BYTES=N   map memory one bundle may declare (default 1G; K/M/G/T suffixes).
 */
#ifndef NCCLBPF_RUNTIME_H
#define NCCLBPF_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "ncclbpf.h"
#include "ncclbpf/rt_hot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Logging ------------------------------------------------------------------------------ */
enum ncclbpf_log_level {
	NCCLBPF_LOG_WARN = 1, /* something the user must see (bundle rejected, no policy) */
	NCCLBPF_LOG_INFO = 2, /* lifecycle events (policy active, reload done) */
	NCCLBPF_LOG_DEBUG = 3,
};
/* The runtime calls this for every message (one line, no trailing newline). NULL: WARN lines go
 * to stderr, the rest is dropped. May be called from the watcher thread. */
typedef void (*ncclbpf_log_fn)(int level, const char *msg);
void ncclbpf_rt_set_logger(ncclbpf_log_fn fn);
/* One message (printf format, one line of at most 1023 bytes) through that logger, as the
 * runtime's own messages go: for the plugin's hooks, which speak to the user the same way. */
void ncclbpf_rt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- Process-wide lifetime ---------------------------------------------------------------- */
/* Returns the reference count after the call. Never fails: without a usable bundle the runtime
 * runs with no active policy (every hook leaves NCCL's decision alone). */
int ncclbpf_rt_acquire(void);
int ncclbpf_rt_release(void);

/* What the policy came to, for an adapter to say once what that means for its own hook: the
 * runtime itself logs NCCLBPF_POLICY unset only at INFO and a bundle that did not load as a WARN
 * with the reason, and neither message speaks for any one hook (no tuning, no transport). */
enum ncclbpf_policy_state {
	NCCLBPF_POLICY_UNSET = 0,  /* NCCLBPF_POLICY not set and no policy loaded on request */
	NCCLBPF_POLICY_ACTIVE = 1, /* a policy is active */
	NCCLBPF_POLICY_FAILED = 2, /* NCCLBPF_POLICY set, nothing active (the WARN said why) */
};
enum ncclbpf_policy_state ncclbpf_rt_policy_state(void);

enum ncclbpf_engine_kind {
	NCCLBPF_ENGINE_JIT = 0, /* JIT where available, else the interpreter */
	NCCLBPF_ENGINE_INTERP = 1,
	NCCLBPF_ENGINE_NATIVE = 2, /* a policy compiled into the host (comparison tuners, tests) */
};

/* --- Hot path ----------------------------------------------------------------------------- */
/* The hot path is inline (C only) so that an adapter's hook pays no call into the runtime: one
 * epoch section, one load of the active policy, one indirect call of its JIT code. The measured
 * cost over calling a no-op C function through a pointer is in benchmarks/jit_bench.c.
 *
 * One attached program: JIT code or native function (fn != NULL, called as fn(ctx, arg)), or
 * the interpreter on prog. */
typedef uint64_t (*ncclbpf_rt_fn)(uint64_t ctx, uint64_t arg);
struct ebpf_exec;
struct ncclbpf_rt_hook {
	ncclbpf_rt_fn fn;
	uint64_t arg;
	const struct ebpf_exec *prog;
	uint32_t code_size; /* JIT machine code bytes (0: not compiled), for `ncclbpf stat` */
	/* 1: fn is a register-keeping JIT entry (ebpf/jit.h) and this build can call it so
	 * (ncclbpf_rt_hook_run_keeping); 0: call fn as a plain C function. */
	uint32_t keeps_regs;
	/* The 8-byte words of the context the program may read from memory (the verifier's
	 * ctx_words: bit i for bytes [8i, 8i + 8), less the cost cells when its reads of them are
	 * converted); all ones for native policies. An adapter fills only these: a word the
	 * program cannot read is never observed. */
	uint64_t ctx_words;
	/* The words the program may write (the verifier's ctx_written); all ones for native
	 * policies. An output whose word is clear still holds what the adapter put there. */
	uint64_t ctx_written;
};

/* What the runtime runs a tuner program on: the context, then NCCL's cost table (7 x 3 floats,
 * microseconds). The runtime loads tuner programs with their cost_ns reads converted where the
 * verifier allows (ebpf_program__ctx_converted): such a program reads each cell it needs from
 * cost_f32 when it needs it (nccl_platform.h: ncclbpf_tuner_cells), and its hook's ctx_words
 * leaves the cells out. cost_f32 must always point to 21 floats: NCCL's table when it is 7 x 3,
 * else a copy with NaN in the cells NCCL did not fill. */
struct ncclbpf_rt_tuner_ctx {
	struct ncclbpf_tuner_ctx x;
	const float *cost_f32;
};

/* The context words (ncclbpf_rt_hook.ctx_words bits) the register-keeping tuner path fills: the
 * inputs an adapter has at hand without keeping more of getCollInfo's arguments alive across
 * the program (comm_id, n_bytes, coll_type with n_ranks, num_algo with num_proto) and the
 * outputs. A program that may read another word from memory (seq, n_nodes, num_pipe_ops,
 * reg_buff, a cost cell read unconverted) takes the plain path: filling n_nodes and the others
 * too made GCC save three more callee-saved registers on every call of the keeping path, and
 * seq, the sum of two dozen counters (ncclbpf_comm__calls), two more. */
#define NCCLBPF_RT__TUNER_WORD(f) (1ull << (offsetof(struct ncclbpf_tuner_ctx, f) / 8))
/* The outputs: algorithm with protocol, n_channels with its padding. */
#define NCCLBPF_RT_TUNER_OUTPUT_WORDS                                                              \
	(NCCLBPF_RT__TUNER_WORD(algorithm) | NCCLBPF_RT__TUNER_WORD(n_channels))
#define NCCLBPF_RT_TUNER_KEEPING_WORDS                                                             \
	(NCCLBPF_RT__TUNER_WORD(comm_id) | NCCLBPF_RT__TUNER_WORD(n_bytes) |                       \
	 NCCLBPF_RT__TUNER_WORD(coll_type) | NCCLBPF_RT__TUNER_WORD(num_algo) |                    \
	 NCCLBPF_RT_TUNER_OUTPUT_WORDS)

/* What the keeping path does for a policy's tuner program (ncclbpf_rt__tuner_keeps), as flags
 * of one word that the path has loaded anyway. */
enum ncclbpf_rt_tuner_keeps {
	NCCLBPF_RT_KEEPS = 1u,	       /* the program may take the path (0: no flag is set) */
	NCCLBPF_RT_KEEPS_INPUTS = 2u,  /* it may read an input word: fill the path's inputs */
	NCCLBPF_RT_KEEPS_OUTPUTS = 4u, /* it may read or write an output: fill the outputs */
	NCCLBPF_RT_KEEPS_WRITES = 8u,  /* it may write an output: look at them after it ran */
	/* it may read or write n_channels: fill it, look at it after it ran (without, the path
	 * stores nothing there and takes it as the default) */
	NCCLBPF_RT_KEEPS_CHANNELS = 16u,
};

/* The first member of the runtime's (private) loaded policy: what the inline entries read. */
struct ncclbpf_rt_policy_hot {
	uint64_t version;
	struct ncclbpf_rt_hook tuner; /* SEC("tuner") */
	struct ncclbpf_rt_hook chunk; /* SEC("tuner/chunk") */
	struct ncclbpf_rt_hook
	    profiler;		 /* SEC("profiler"), "profiler/coll_end" or "profiler/proxy" */
	uint32_t profiler_needs; /* NCCLBPF_RT_PROF_* (0: no profiler program) */
	uint32_t comm_maps;	 /* per-communicator maps (NCCLBPF_F_PER_COMM) of the bundle */
	/* ncclbpf_rt__tuner_keeps(this), worked out once when the policy is built: the keeping
	 * path tests one word instead of five */
	uint32_t tuner_keeps;
};

/* The active policy and the keeping hint: ncclbpf_rt_hot_ (rt_hot.h). */
int ncclbpf_rt__run_interp(const struct ebpf_exec *prog, void *ctx);

#define NCCLBPF_RT_PROF_PROGRAM 1u
#define NCCLBPF_RT_PROF_PROXY	2u
/* SEC("profiler/coll_end"): the program is run on COLL_END only (the adapter still asks NCCL
 * for Coll and KernelCh events, which make up a COLL_END, but builds no context for them). */
#define NCCLBPF_RT_PROF_END_ONLY 4u

/* Program runs since the library was loaded, per hook, for inspection (`ncclbpf stat`; tuner runs
 * are counted per communicator, enum ncclbpf_comm_stat): the chunk program, the profiler
 * program per event, each net program. Each counter has its own cache line: the threads that
 * deliver one hook's calls add to it (relaxed), nothing else writes it. */
enum ncclbpf_rt_run_counter {
	NCCLBPF_RT_RUNS_CHUNK = 0,
	NCCLBPF_RT_RUNS_PROF = 1, /* + event - 1, for NCCLBPF_PROF_COLL_START .. _PROXY_OP */
	NCCLBPF_RT_RUNS_NET = 5,  /* + net hook slot: connect, accept, isend, irecv, complete */
	NCCLBPF_RT_RUNS_MAX = 10,
};
struct ncclbpf_rt_run_count {
	uint64_t n;
	uint64_t pad[7];
};
extern struct ncclbpf_rt_run_count ncclbpf_rt_runs_[NCCLBPF_RT_RUNS_MAX];
static inline void ncclbpf_rt__count_run(unsigned i)
{
	__atomic_fetch_add(&ncclbpf_rt_runs_[i].n, 1, __ATOMIC_RELAXED);
}
/* The counter i (relaxed read). */
uint64_t ncclbpf_rt_runs(enum ncclbpf_rt_run_counter i);

struct ncclbpf_comm;
/* Binds c's instances of p's per-communicator maps for this thread (runtime/src/policy/comm_maps.c:
 * built, and carried over from c's previous policy, at c's first call under p). 0, or -ENOMEM
 * (the program must not run). */
int ncclbpf_rt__comm_maps_bind(struct ncclbpf_comm *c, const struct ncclbpf_rt_policy_hot *p);

#ifndef __cplusplus
#include "ebpf/epoch.h"
#include "ebpf/jit.h"
#include "ebpf/maps.h"

/* A hook call in three steps, for an adapter that builds its context from what the program
 * reads (hook->ctx_words):
 *   h = ncclbpf_rt_hook_begin(slot, c, off, &version): the hook at byte offset off of the
 *       policy in *slot, for communicator c (NULL: none), inside an epoch section (it keeps the
 *       policy, its code and maps, and any map value the program looks up alive until the end);
 *       NULL when no policy has a program for it, or c's per-communicator maps cannot be made
 *       (the program must not run), and then nothing is left open. With no policy at all it
 *       costs one load: an empty slot is seen before any epoch is entered (a policy activated
 *       meanwhile is as if activated just after this call). A policy with per-communicator maps
 *       runs with c's instances bound (one not-taken branch for the others).
 *   err = ncclbpf_rt_hook_run(h, ctx): 0, or -EFAULT when the interpreter stopped the program.
 *   ncclbpf_rt_hook_end(): closes the section; nothing read from the policy may be used after.
 */
static inline const struct ncclbpf_rt_hook *ncclbpf_rt_hook_begin(struct rt_policy *const *slot,
								  struct ncclbpf_comm *c,
								  size_t off, uint64_t *version)
{
	if (!__atomic_load_n(slot, __ATOMIC_RELAXED))
		return NULL;
	ebpf_epoch_enter();
	const struct ncclbpf_rt_policy_hot *p =
	    (const struct ncclbpf_rt_policy_hot *)(const void *)__atomic_load_n(slot,
										__ATOMIC_ACQUIRE);
	if (__builtin_expect(p != NULL, 1)) {
		const struct ncclbpf_rt_hook *h =
		    (const struct ncclbpf_rt_hook *)(const void *)((const char *)p + off);
		if (version)
			*version = p->version;
		if (__builtin_expect(h->fn != NULL || h->prog != NULL, 1) &&
		    (!c || __builtin_expect(p->comm_maps == 0, 1) ||
		     ncclbpf_rt__comm_maps_bind(c, p) == 0))
			return h;
	}
	ebpf_epoch_exit();
	return NULL;
}

static inline int ncclbpf_rt_hook_run(const struct ncclbpf_rt_hook *h, void *ctx)
{
	if (__builtin_expect(h->fn != NULL, 1)) {
		h->fn((uint64_t)(uintptr_t)ctx, h->arg);
		return 0;
	}
	return ncclbpf_rt__run_interp(h->prog, ctx);
}

static inline void ncclbpf_rt_hook_end(void)
{
	if (__builtin_expect(ebpf_map_binding_ != NULL, 0))
		ebpf_map__bind(NULL); /* hook_begin bound a communicator's per-communicator maps */
	ebpf_epoch_exit();
}

/* enum ncclbpf_rt_tuner_keeps for policy p's tuner program: 0 unless it may take
 * ncclbpf_rt_tuner_begin_kept's path (a register-keeping JIT entry, no per-communicator maps
 * to bind, and nothing to read from memory beyond NCCLBPF_RT_TUNER_KEEPING_WORDS), else
 * NCCLBPF_RT_KEEPS and what the path must fill and look at. The one rule for that path,
 * evaluated once per policy (bundle.c, into p->tuner_keeps, which the path and activate.c's
 * hint read). */
static inline uint32_t ncclbpf_rt__tuner_keeps(const struct ncclbpf_rt_policy_hot *p)
{
	const uint64_t reads = p->tuner.ctx_words, writes = p->tuner.ctx_written;
	if (!p->tuner.keeps_regs || p->comm_maps != 0 || (reads & ~NCCLBPF_RT_TUNER_KEEPING_WORDS))
		return 0;
	return NCCLBPF_RT_KEEPS |
	       (reads & ~NCCLBPF_RT_TUNER_OUTPUT_WORDS ? NCCLBPF_RT_KEEPS_INPUTS : 0) |
	       ((reads | writes) & NCCLBPF_RT_TUNER_OUTPUT_WORDS ? NCCLBPF_RT_KEEPS_OUTPUTS : 0) |
	       (writes & NCCLBPF_RT_TUNER_OUTPUT_WORDS ? NCCLBPF_RT_KEEPS_WRITES : 0) |
	       ((reads | writes) & NCCLBPF_RT__TUNER_WORD(n_channels) ? NCCLBPF_RT_KEEPS_CHANNELS
								      : 0);
}

/* A tuner call that makes no call out of line, for an adapter whose hot path keeps NCCL's
 * arguments in registers (the saves and restores a call forces are most of what running an
 * empty program costs):
 *   h = ncclbpf_rt_tuner_begin_kept(flags): the process's active tuner hook when its program's
 *       keeping flags (ncclbpf_rt__tuner_keeps) are exactly flags (an adapter has an entry
 *       compiled for each value), and the thread enters its epoch section inline (registered,
 *       not inside one already); NULL otherwise, with nothing entered (take
 *       ncclbpf_rt_tuner_begin's path). For communicators outside the control plane only
 *       (their slot is the process's).
 *   ncclbpf_rt_hook_run_keeping(h, ctx); ncclbpf_rt_hook_end_keeping(). */
static inline const struct ncclbpf_rt_hook *ncclbpf_rt_tuner_begin_kept(uint32_t flags)
{
#ifdef EBPF_JIT_HAVE_KEEPING_CALL
	if (!ebpf_epoch_try_enter_outer())
		return NULL;
	const struct ncclbpf_rt_policy_hot *p =
	    (const struct ncclbpf_rt_policy_hot *)(const void *)__atomic_load_n(
		&ncclbpf_rt_hot_.active, __ATOMIC_ACQUIRE);
	if (__builtin_expect(p != NULL && p->tuner_keeps == flags, 1))
		return &p->tuner;
	ebpf_epoch_exit_outer();
#else
	(void)flags;
#endif
	return NULL;
}

static inline void ncclbpf_rt_hook_run_keeping(const struct ncclbpf_rt_hook *h, void *ctx)
{
#ifdef EBPF_JIT_HAVE_KEEPING_CALL
	ebpf_jit_call_keeping((ebpf_jit_fn)h->fn, (uint64_t)(uintptr_t)ctx, h->arg);
#else
	(void)h;
	(void)ctx;
#endif
}

static inline void ncclbpf_rt_hook_end_keeping(void)
{
	ebpf_epoch_exit_outer();
}

/* Runs the hook at byte offset off of the policy in *slot on a context filled whole. Returns 0,
 * -ENOENT when no policy has a program for it, or -EFAULT (interpreter). */
static inline int ncclbpf_rt__run_hook(struct rt_policy *const *slot, struct ncclbpf_comm *c,
				       size_t off, void *ctx, uint64_t *version)
{
	const struct ncclbpf_rt_hook *h = ncclbpf_rt_hook_begin(slot, c, off, version);
	if (!h)
		return -2; /* -ENOENT */
	int err = ncclbpf_rt_hook_run(h, ctx);
	ncclbpf_rt_hook_end();
	return err;
}

/* Runs the active policy's SEC("tuner") (resp. SEC("tuner/chunk")) program on ctx. Returns 0
 * and the policy version that ran, -ENOENT when no active policy has such a program, or
 * -EFAULT when the interpreter stopped the program (call depth).
 * ctx's outputs are whatever the program wrote; the caller validates them. */
static inline int ncclbpf_rt_run_tuner(struct ncclbpf_rt_tuner_ctx *ctx, uint64_t *version)
{
	return ncclbpf_rt__run_hook(&ncclbpf_rt_hot_.active, NULL,
				    offsetof(struct ncclbpf_rt_policy_hot, tuner), ctx, version);
}
static inline int ncclbpf_rt_run_chunk(struct ncclbpf_chunk_ctx *ctx, uint64_t *version)
{
	int err = ncclbpf_rt__run_hook(&ncclbpf_rt_hot_.active, NULL,
				       offsetof(struct ncclbpf_rt_policy_hot, chunk), ctx, version);
	if (err == 0)
		ncclbpf_rt__count_run(NCCLBPF_RT_RUNS_CHUNK);
	return err;
}

/* Profiler hook. A bundle has at most one profiler program; its section says which NCCL events
 * it needs: SEC("profiler") collectives and their per-channel kernel timings,
 * SEC("profiler/proxy") also proxy (network) operations. needs() tells the adapter what to ask
 * NCCL for (0: no program, ask for nothing). run() runs the program on ctx (read-only: the
 * verifier keeps profiler programs to reads) and returns 0, -ENOENT (no active profiler
 * program) or -EFAULT (interpreter stopped it). */
static inline int ncclbpf_rt_run_profiler(const struct ncclbpf_profiler_ctx *ctx)
{
	int err = ncclbpf_rt__run_hook(&ncclbpf_rt_hot_.active, NULL,
				       offsetof(struct ncclbpf_rt_policy_hot, profiler),
				       (void *)ctx, NULL);
	if (err == 0 && ctx->event - 1u < 4u)
		ncclbpf_rt__count_run(NCCLBPF_RT_RUNS_PROF + ctx->event - 1u);
	return err;
}
#endif
uint32_t ncclbpf_rt_profiler_needs(void);

/* The same for one communicator: its bound policy when it takes part in the control plane
 * (control.h), else the process-wide one. Chunk calls follow the tuner call of the same
 * collective, so they run the policy that call switched to. Defined after struct ncclbpf_comm. */
struct ncclbpf_comm;

/* Called from the thread that changed the active policy (reload, unload), after the change, so
 * that an adapter can re-derive what it asks its host for. At most 8 listeners; adding one twice
 * is a no-op. Returns 0 or -ENOSPC. */
typedef void (*ncclbpf_activate_fn)(void);
int ncclbpf_rt_add_activate_listener(ncclbpf_activate_fn fn);

/* The net adapter's hot path (adapters/nccl/src/net_hooks.c). */
/* Runs the active policy's program for x->op on x, in one epoch section, and reads the clock
 * only when a program can see the time (the verifier records which context fields a program
 * may read):
 * - *now and x->time_ns are the CLOCK_MONOTONIC time in ns when the program for x->op may read
 *   time_ns, or, for COMPLETE and COMPLETE_RECV, duration_ns, or, for ISEND and IRECV, when
 *   the SEC("net/complete") program may read duration_ns (it needs the posting time);
 *   otherwise 0 and no clock is read (a program that runs then reads neither field). So *now
 *   may be 0 although a program ran. The caller keeps *now as the request's posting time.
 * - for completions, x->duration_ns = time_ns - t0, or 0 when no clock was read or t0 is 0
 *   (the request was posted while no program needed a time: one was attached since).
 * The caller fills every other field; x is its scratch copy, and the program runs on it
 * directly (no second copy: every net context field is read-only to programs, verifier). *now
 * comes from a local, whatever the program does. Returns 0 and the program's r0 in *ret when
 * a program ran, -ENOENT when none is attached for the op, -EINVAL for an unknown op.
 * stamp_after (may be NULL): for ISEND and IRECV, when only the completion needs the posting
 * time (no program of the post itself reads time), no clock is read here and *stamp_after is
 * set to N >= 1: the caller takes a posting stamp (ncclbpf_rt_net_stamp) itself right after
 * handing the request to the transport, so the clock read does not delay the data, for one post
 * in N per connection (sampled timing: SEC("net/complete/time_every=N"), or
 * NCCLBPF_NET_TIME_EVERY=N over it; 1: every post). The others pass t0 0: their completions
 * read no clock and see duration_ns 0. NULL: read here as above. */
int ncclbpf_rt_net_event(struct ncclbpf_net_ctx *x, uint64_t t0, uint64_t *now, uint64_t *ret,
			 int *stamp_after);
/* Completions off NCCL's critical path. A SEC("net/complete") program only observes, so it
 * need not run on NCCL's proxy progress thread, whose every nanosecond delays NCCL's next step:
 * ncclbpf_rt_net_complete takes the completion's time at once (as ncclbpf_rt_net_event would)
 * and queues the context; the program runs later, on the active policy of that moment:
 * - on the runtime's drain thread, which wakes every 0.1-4 ms while queues exist;
 * - on the completing thread when the queue is full (all queued ones, before queueing);
 * - when a reference is put (a connection closes), before a reload or unload replaces the
 *   policy (so they count in the maps it carries over), and at ncclbpf_rt_net_flush (called by
 *   every map read: inspection, ncclbpf_rt_map_lookup).
 * So a map that completions update shows every completion once it is read, and the programs
 * see the same contexts they would inline, in order. One queue per NCCL communicator (net
 * context), shared by its connections through references (queue_get; queue_put drops one, the
 * last frees it). Its producer is the first thread that queues on it (NCCL's proxy progress
 * thread); completions on any other thread run inline.
 * ncclbpf_rt_net_queue_new returns NULL (completions then run inline) when NCCLBPF_NET_DEFER=0
 * or out of memory. ncclbpf_rt_net_complete: 0 when the program ran or was queued, -ENOENT when
 * the active policy has no SEC("net/complete"), -EINVAL when x->op is not a completion; q may
 * be NULL (inline). */
struct ncclbpf_net_queue;
struct ncclbpf_net_queue *ncclbpf_rt_net_queue_new(void);
struct ncclbpf_net_queue *ncclbpf_rt_net_queue_get(struct ncclbpf_net_queue *q);
void ncclbpf_rt_net_queue_put(struct ncclbpf_net_queue *q);
int ncclbpf_rt_net_complete(struct ncclbpf_net_queue *q, struct ncclbpf_net_ctx *x, uint64_t t0);
void ncclbpf_rt_net_flush(void);
/* Totals over the process's queues, for inspection and tests. */
struct ncclbpf_net_queue_stats {
	uint64_t queues;       /* live queues */
	uint64_t queued;       /* completions queued since start */
	uint64_t drained;      /* of those, run by the drain thread */
	uint64_t catch_up;     /* times a full queue was emptied by its producer */
	uint64_t inline_full;  /* completions run inline: queue full while a consumer emptied it */
	uint64_t other_thread; /* completions run inline: not the queue's producing thread */
	uint64_t pending;      /* queued and not run yet */
	uint64_t drain_thread; /* 1 while the drain thread runs */
};
void ncclbpf_rt_net_queue_stats(struct ncclbpf_net_queue_stats *out);
/* The posting stamp a caller takes when ncclbpf_rt_net_event set *stamp_after; pass it back as
 * the completion's t0. TSC ticks (tagged in bit 63) where the kernel keeps time with the TSC
 * (NCCLBPF_NET_TSC=0/1 forces), else CLOCK_MONOTONIC ns: not a time to read, only a t0.
 * ncclbpf_rt_net_tsc(): 1 when stamps are TSC ticks. */
uint64_t ncclbpf_rt_net_stamp(void);
int ncclbpf_rt_net_tsc(void);

/* `ncclbpf replay` of recorded net events (ncclbpf/trace.h): runs the active policy's program
 * for x->op (completions: SEC("net/complete")) at once on a copy of x as given, time fields
 * included; no clock is read, nothing is queued. 0 and the program's r0 in *ret, -ENOENT when
 * none is attached for the op, -EINVAL for an unknown op. */
int ncclbpf_rt_net_replay(const struct ncclbpf_net_ctx *x, uint64_t *ret);

/* 1 when the active policy has any SEC("net/...") program (a hint: it may change at once). */
int ncclbpf_rt_net_active(void);

/* 0 when a hook serves programs of SEC(section) (its name, or net/complete/time_every=N with
 * N in 1..1048576; *time_every gets N, else 0; may be NULL); else -EINVAL and, in why, the
 * sections that are served. A bundle with a program in any other section fails to load;
 * `ncclbpf verify` says so first. */
int ncclbpf_rt_section_served(const char *section, uint32_t *time_every, char *why, size_t why_len);

/* --- What a bundle may be (docs/security.md, Limits) --------------------------------------- */
struct ebpf_object;
struct ebpf_program;
struct ebpf_object_limits;
/* The limits every bundle loads under (engine/include/ebpf/object.h): map memory
 * NCCLBPF_MAX_MAP_BYTES (default 1 GiB, as ebpf_map__def_memory counts it), one ring buffer
 * 256 MiB, 16 programs, 131072 instructions in all. */
void ncclbpf_rt_bundle_limits(struct ebpf_object_limits *lim);
/* The structural rules a bundle must meet before any program is verified: every program in a
 * section a hook serves, at most one program per hook. 0, or -EINVAL with *bad (may be NULL)
 * the first program that breaks one and why it does. `ncclbpf verify` applies the same. */
int ncclbpf_rt_bundle_check(const struct ebpf_object *obj, const struct ebpf_program **bad,
			    char *why, size_t why_len);

/* --- Reload ------------------------------------------------------------------------------- */
struct ncclbpf_reload_report {
	size_t sz;
	int err;	  /* 0 or -errno */
	uint64_t version; /* version now active (the new one on success, the old one on failure) */
	uint32_t n_progs; /* programs in the bundle */
	uint32_t n_maps;
	uint32_t maps_kept; /* maps whose contents were carried over from the previous version */
	int engine;	    /* enum ncclbpf_engine_kind actually used */
	/* Time of each step in ns: ELF/BTF parse, verification (all programs), the rest of loading
	 * (relocation, program creation, map setup), JIT (all programs), carrying map contents,
	 * the pointer swap itself, and retiring the old policy (handing it to the epoch
	 * reclaimer, which frees it once every call that could still see it has returned). */
	uint64_t parse_ns, verify_ns, load_ns, jit_ns, carry_ns, swap_ns, retire_ns, total_ns;
	char msg[512]; /* why it failed, or a one-line summary */
};

/* Loads path (NULL: the configured NCCLBPF_POLICY), verifies, compiles and activates it. On any
 * failure the running policy stays active and report->msg says why. Serialised internally;
 * callable from any thread, including while hooks run. */
int ncclbpf_rt_reload(const char *path, struct ncclbpf_reload_report *report);
/* Deactivates the running policy (hooks fall back to NCCL) and retires it. */
void ncclbpf_rt_unload(void);

/* The bundle NCCLBPF_POLICY names, read once per process (by whichever asks first: the env
 * plugin's init or the first acquire) under the trusted-path rules (ncclbpf/trusted_path.h):
 * the env plugin's settings and the first policy's programs come from these same bytes, so a
 * file replaced between two reads cannot mix two bundles. 0 with *path and the bytes (valid for
 * the life of the process); -ENOENT with *path NULL when NCCLBPF_POLICY is unset or names a
 * native policy; else -errno with *path set and the reason in why. */
int ncclbpf_rt_launch_bundle(const char **path, const void **img, size_t *len, char *why,
			     size_t why_len);

/* A policy compiled into the host process: fn(ctx, arg) plays the program. Used by comparison
 * tuners and tests to measure and exercise everything but the eBPF engine. release(arg), if
 * set, runs when the policy is retired and no call can still be using it. */
typedef uint64_t (*ncclbpf_native_fn)(uint64_t ctx, uint64_t arg);
struct ncclbpf_native_policy {
	size_t sz;
	const char *name;
	ncclbpf_native_fn tuner; /* SEC("tuner") equivalent, may be NULL */
	ncclbpf_native_fn chunk; /* SEC("tuner/chunk") equivalent, may be NULL */
	uint64_t arg;
	void (*release)(uint64_t arg);
	ncclbpf_native_fn profiler; /* SEC("profiler") equivalent, may be NULL */
	uint32_t profiler_needs;    /* NCCLBPF_RT_PROF_* (PROGRAM implied by profiler != NULL) */
	/* 8-byte words of the tuner context the tuner function never reads (the complement of
	 * what the verifier records for its eBPF twin, ncclbpf_rt_hook.ctx_words), so that the
	 * adapter does the same work for both; 0: it may read everything. */
	uint64_t tuner_skip_words;
};
int ncclbpf_rt_install_native(const struct ncclbpf_native_policy *np,
			      struct ncclbpf_reload_report *report);

/* Registers a native policy under its name, so that a bundle path "native:NAME" (NCCLBPF_POLICY,
 * reload) installs it. For comparison tuners built from the plugin's sources; the shipped
 * plugin registers none. Returns 0 or -ENOSPC (16 at most). */
int ncclbpf_rt_register_native(const struct ncclbpf_native_policy *np);

/* User-side access to a map of the active policy by name (the map's own key and value sizes;
 * per-CPU maps take all CPUs' values). Serialised with reloads, safe while hooks run. Return 0,
 * -ENOENT (no active bundle or no such map, or no such key) or the map's error. */
int ncclbpf_rt_map_lookup(const char *name, const void *key, void *value);
int ncclbpf_rt_map_update(const char *name, const void *key, const void *value);

/* Engine for subsequent loads (overrides NCCLBPF_ENGINE). */
void ncclbpf_rt_set_engine(int engine);

/* --- Per-communicator contexts ------------------------------------------------------------ */
/* Statistics per communicator, as `ncclbpf stat` shows them. The hot path counts each tuner call
 * once, in the counter of its outcome (NCCLBPF_STAT_NO_POLICY, _DEFAULT, _INVALID, _BAD_CALL,
 * or an applied decision's cell in applied_cell), plus the channel count it set, if any; the
 * rest is derived when read (ncclbpf_comm__stats): calls = the sum of those outcome counters
 * (which is also the next call's number, ncclbpf_comm__calls), applied = the sum of
 * applied_cell, runs = applied + default + invalid, chunk_calls = chunk_seq, NCCL's channels
 * (applied_channels[0]) = applied - the rest. */
enum ncclbpf_comm_stat {
	NCCLBPF_STAT_CALLS = 0,	    /* hook calls (derived: the outcomes' sum) */
	NCCLBPF_STAT_RUNS,	    /* calls where a policy program ran (derived) */
	NCCLBPF_STAT_APPLIED,	    /* decisions that changed what NCCL does (derived) */
	NCCLBPF_STAT_DEFAULT,	    /* the program left every output at its default */
	NCCLBPF_STAT_NO_POLICY,	    /* no active policy / no program for the hook / it faulted */
	NCCLBPF_STAT_INVALID,	    /* outputs rejected (out of range, unavailable cell, ...) */
	NCCLBPF_STAT_BAD_CALL,	    /* malformed call from the host (NULL table, absurd sizes) */
	NCCLBPF_STAT_CH_SKIPPED,    /* channel request dropped because a CollNet algorithm won */
	NCCLBPF_STAT_CHUNK_CALLS,   /* chunk-size hook calls (derived: chunk_seq) */
	NCCLBPF_STAT_CHUNK_APPLIED, /* chunk sizes changed */
	NCCLBPF_STAT_CHUNK_INVALID, /* chunk outputs rejected */
	NCCLBPF_STAT_MAX
};

/* One per communicator. Calls for one communicator are serialised by the host (NCCL
 * guarantees it for the tuner), so no counter needs a read-modify-write; they are stored with
 * relaxed atomics so that statistics can be read from another thread. */
struct ncclbpf_comm {
	uint64_t comm_id;
	uint32_t n_ranks;
	uint32_t n_nodes;
	uint32_t api_version; /* which host interface created it (e.g. NCCL tuner v5) */
	uint32_t serial;      /* creation number in this process (traces key contexts by it) */
	/* Control plane (control.h; NULL when off or without a commId): the member state. Here,
	 * beside the fields every call reads, at an offset the tuner's assembly entry knows
	 * (adapters/nccl/src/tuner_call.c). */
	struct ncclbpf_cp_member *cp;
	uint64_t seq; /* under the control plane only: the next tuner call number, taken at the
		       * call's start (ncclbpf_comm__tick; the fences need it before the outcome
		       * is known); elsewhere ncclbpf_comm__calls numbers the calls */
	uint64_t chunk_seq;		  /* next chunk-size call number = chunk calls so far */
	uint64_t stats[NCCLBPF_STAT_MAX]; /* counted ones only; read with ncclbpf_comm__stats */
	/* Decision histograms (relaxed atomics, read by the inspection server): the cell NCCL
	 * will pick after each applied decision, and the channel count applied (index 0 unused:
	 * decisions that left the count to NCCL are the applied ones not counted here). */
	union { /* by (algo, proto), or by cell: algo * NCCLBPF_NUM_PROTOS + proto */
		uint64_t applied_cell[NCCLBPF_NUM_ALGOS][NCCLBPF_NUM_PROTOS];
		uint64_t applied_cells[NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS];
	};
	uint64_t applied_channels[65];
	struct ncclbpf_comm *prev, *next; /* registry (under the runtime's lock) */
	/* Control plane (unused when cp is NULL): the policy bound to this communicator (read in an
	 * epoch section) and the seq at which the tick must look at the control plane (a queued
	 * switch or an unresolved fence). */
	struct rt_policy *cp_policy;
	uint64_t cp_next;
	/* This communicator's instances of its policy's per-communicator maps (comm_maps.c;
	 * written by its calling thread, read by inspection inside an epoch section). */
	struct rt_comm_maps *comm_maps;
};

/* c's statistics with the derived ones (see enum ncclbpf_comm_stat); channels0, if not NULL,
 * gets the applied decisions that left the channel count to NCCL. Safe from any thread while
 * c's hooks run (a count in flight may show a moment later). */
void ncclbpf_comm__stats(const struct ncclbpf_comm *c, uint64_t out[NCCLBPF_STAT_MAX],
			 uint64_t *channels0);

#ifndef __cplusplus
/* The policy slot c runs: its bound policy under the control plane, else the process's. */
static inline struct rt_policy *const *ncclbpf_rt__comm_slot(const struct ncclbpf_comm *c)
{
	return __builtin_expect(c->cp != NULL, 0) ? &c->cp_policy : &ncclbpf_rt_hot_.active;
}
/* The tuner hook of c's policy (ncclbpf_rt_hook_begin), or NULL. */
static inline const struct ncclbpf_rt_hook *ncclbpf_rt_tuner_begin(struct ncclbpf_comm *c,
								   uint64_t *version)
{
	return ncclbpf_rt_hook_begin(ncclbpf_rt__comm_slot(c), c,
				     offsetof(struct ncclbpf_rt_policy_hot, tuner), version);
}
static inline int ncclbpf_rt_run_tuner_comm(struct ncclbpf_comm *c,
					    struct ncclbpf_rt_tuner_ctx *ctx, uint64_t *version)
{
	return ncclbpf_rt__run_hook(ncclbpf_rt__comm_slot(c), c,
				    offsetof(struct ncclbpf_rt_policy_hot, tuner), ctx, version);
}
static inline int ncclbpf_rt_run_chunk_comm(struct ncclbpf_comm *c, struct ncclbpf_chunk_ctx *ctx,
					    uint64_t *version)
{
	int err = ncclbpf_rt__run_hook(ncclbpf_rt__comm_slot(c), c,
				       offsetof(struct ncclbpf_rt_policy_hot, chunk), ctx, version);
	if (err == 0)
		ncclbpf_rt__count_run(NCCLBPF_RT_RUNS_CHUNK);
	return err;
}
#endif

/* Control plane slow path (cp_member.c): applies queued switches due at s, waits (bounded) at
 * an unresolved fence. */
void ncclbpf_cp__slow(struct ncclbpf_comm *c, uint64_t s);

/* The number of c's tuner calls so far, which is the next call's number: each call is counted
 * once, by its outcome (enum ncclbpf_comm_stat), so the sum of the outcome counters is the
 * count of calls. For the calling thread (relaxed loads; NCCL serialises a communicator's calls)
 * and, with acquire loads, for ncclbpf_comm__stats. */
static inline uint64_t ncclbpf_comm__calls(const struct ncclbpf_comm *c)
{
	uint64_t n = __atomic_load_n(&c->stats[NCCLBPF_STAT_NO_POLICY], __ATOMIC_RELAXED) +
		     __atomic_load_n(&c->stats[NCCLBPF_STAT_DEFAULT], __ATOMIC_RELAXED) +
		     __atomic_load_n(&c->stats[NCCLBPF_STAT_INVALID], __ATOMIC_RELAXED) +
		     __atomic_load_n(&c->stats[NCCLBPF_STAT_BAD_CALL], __ATOMIC_RELAXED);
	for (int a = 0; a < NCCLBPF_NUM_ALGOS; a++)
		for (int p = 0; p < NCCLBPF_NUM_PROTOS; p++)
			n += __atomic_load_n(&c->applied_cell[a][p], __ATOMIC_RELAXED);
	return n;
}

/* Numbers a tuner call of c under the control plane (c->cp != NULL) at its start: the seq store
 * is seq_cst and is followed by one load of cp_next: with the control thread's seq_cst fence
 * store and re-read of seq (Dekker), either this call sees a new fence or the control thread
 * sees this call. The call is still counted by its outcome (ncclbpf_comm__calls). */
static inline uint64_t ncclbpf_comm__tick(struct ncclbpf_comm *c)
{
	uint64_t s = c->seq;
	__atomic_store_n(&c->seq, s + 1, __ATOMIC_SEQ_CST);
	if (__builtin_expect(s >= __atomic_load_n(&c->cp_next, __ATOMIC_SEQ_CST), 0))
		ncclbpf_cp__slow(c, s);
	return s;
}

/* The job-consistent version c runs now: generation g and bundle hash. Returns 0 when c does
 * not take part in the control plane. */
int ncclbpf_comm__cp_version(const struct ncclbpf_comm *c, uint64_t *g, uint64_t *hash);

/* Allocates and registers a communicator context (also takes a runtime reference). NULL only
 * when out of memory. */
struct ncclbpf_comm *ncclbpf_comm__new(uint64_t comm_id, uint32_t n_ranks, uint32_t n_nodes,
				       uint32_t api_version);
/* Folds its statistics into the process totals, unregisters, frees, drops the reference. */
void ncclbpf_comm__free(struct ncclbpf_comm *comm);

static inline void ncclbpf_comm__count(struct ncclbpf_comm *comm, enum ncclbpf_comm_stat s)
{
	__atomic_store_n(&comm->stats[s], __atomic_load_n(&comm->stats[s], __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

/* Counts one applied decision: the cell NCCL will pick (algo, proto: the adapter knows it for
 * every applied decision, and the applied count is their sum) and the channel count set (1..64;
 * 0 when left to NCCL, which is not counted: ncclbpf_comm__stats derives it). Hot path: relaxed
 * atomics, no lock. */
/* The applied decision for cell (algo * NCCLBPF_NUM_PROTOS + proto, below
 * NCCLBPF_NUM_ALGOS * NCCLBPF_NUM_PROTOS), when the channel count was left to NCCL. */
static inline void ncclbpf_comm__count_cell(struct ncclbpf_comm *comm, uint32_t cell)
{
	uint64_t *n = &comm->applied_cells[cell];
	__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}
static inline void ncclbpf_comm__count_decision(struct ncclbpf_comm *comm, int algo, int proto,
						int channels)
{
	if ((unsigned)algo < NCCLBPF_NUM_ALGOS && (unsigned)proto < NCCLBPF_NUM_PROTOS)
		ncclbpf_comm__count_cell(comm,
					 (uint32_t)algo * NCCLBPF_NUM_PROTOS + (uint32_t)proto);
	if ((unsigned)channels - 1 < 64) {
		uint64_t *ch = &comm->applied_channels[channels];
		__atomic_store_n(ch, __atomic_load_n(ch, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	}
}

/* --- Live inspection ----------------------------------------------------------------------- */
/* At the first acquire the runtime registers the process in <dir>/procs/<host>.<pid> and serves
 * `ncclbpf ps|stat|map` on the unix socket <dir>/procs/<host>.<pid>.sock (inspect_server.c);
 * <dir> = $NCCLBPF_CP_DIR, else /dev/shm/ncclbpf-<uid>. NCCLBPF_INSPECT=0 turns it off.
 *
 * Adapters that serve NCCL settings report them through a callback, so that the runtime does
 * not depend on them: reporter(emit, arg) calls emit(name, value, source, arg) once per setting
 * served (source: where the value came from, e.g. "process environment", "bundle PATH"; may be
 * NULL). Called from the inspection thread. The signature is env_served_foreach's
 * (adapters/nccl/src/env_settings.h), so the env adapter registers that function directly. */
typedef void (*ncclbpf_env_emit_fn)(const char *name, const char *value, const char *source,
				    void *arg);
typedef void (*ncclbpf_env_reporter_fn)(ncclbpf_env_emit_fn emit, void *arg);
void ncclbpf_rt_set_env_reporter(ncclbpf_env_reporter_fn fn);

/* --- Statistics --------------------------------------------------------------------------- */
struct ncclbpf_rt_stats {
	uint64_t comm[NCCLBPF_STAT_MAX]; /* summed over live and finished communicators */
	uint64_t comms_live, comms_total;
	uint64_t reloads_ok, reloads_failed;
	uint64_t active_version; /* 0: none */
	int refcount;
	int watching;
};
void ncclbpf_rt_get_stats(struct ncclbpf_rt_stats *out);
const char *ncclbpf_comm_stat_name(enum ncclbpf_comm_stat s);

#ifdef __cplusplus
}
#endif
#endif
