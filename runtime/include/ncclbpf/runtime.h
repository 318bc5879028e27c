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
 *   still see it has left its epoch section (engine/include/ncclbpf/epoch.h).
 * - The hot path (ncclbpf_rt_run_*) takes no lock and allocates nothing.
 *
 * Environment (read at the first acquire)
 *   NCCLBPF_POLICY=PATH   the bundle (one BPF ELF object). Unset: no policy, NCCL decides.
 *   NCCLBPF_ENGINE=jit|interp   execution engine (default jit, interpreter where no JIT).
 *   NCCLBPF_WATCH=0       do not watch the bundle path for hot reload (default: watch).
 *   NCCLBPF_TRACE=FILE    append one text line per hook call (format: trace.h).
 *   NCCLBPF_DEBUG=1       log every reload step at INFO level.
 */
#ifndef NCCLBPF_RUNTIME_H
#define NCCLBPF_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "ncclbpf.h"

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

/* --- Process-wide lifetime ---------------------------------------------------------------- */
/* Returns the reference count after the call. Never fails: without a usable bundle the runtime
 * runs with no active policy (every hook leaves NCCL's decision alone). */
int ncclbpf_rt_acquire(void);
int ncclbpf_rt_release(void);

enum ncclbpf_engine_kind {
	NCCLBPF_ENGINE_JIT = 0, /* JIT where available, else the interpreter */
	NCCLBPF_ENGINE_INTERP = 1,
	NCCLBPF_ENGINE_NATIVE = 2, /* a policy compiled into the host (comparison tuners, tests) */
};

/* --- Hot path ----------------------------------------------------------------------------- */
/* Runs the active policy's SEC("tuner") (resp. SEC("tuner/chunk")) program on ctx. Returns 0
 * and the policy version that ran, -ENOENT when no active policy has such a program, or
 * -EFAULT when the interpreter stopped the program (call depth).
 * ctx's outputs are whatever the program wrote; the caller validates them. */
int ncclbpf_rt_run_tuner(struct ncclbpf_tuner_ctx *ctx, uint64_t *version);
int ncclbpf_rt_run_chunk(struct ncclbpf_chunk_ctx *ctx, uint64_t *version);

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
enum ncclbpf_comm_stat {
	NCCLBPF_STAT_CALLS = 0,	    /* hook calls */
	NCCLBPF_STAT_RUNS,	    /* calls where a policy program ran */
	NCCLBPF_STAT_APPLIED,	    /* decisions that changed what NCCL does */
	NCCLBPF_STAT_DEFAULT,	    /* the program left every output at its default */
	NCCLBPF_STAT_NO_POLICY,	    /* no active policy / no program for the hook */
	NCCLBPF_STAT_INVALID,	    /* outputs rejected (out of range, unavailable cell, ...) */
	NCCLBPF_STAT_BAD_CALL,	    /* malformed call from the host (NULL table, absurd sizes) */
	NCCLBPF_STAT_CH_SKIPPED,    /* channel request dropped because a CollNet algorithm won */
	NCCLBPF_STAT_CHUNK_CALLS,   /* chunk-size hook calls */
	NCCLBPF_STAT_CHUNK_APPLIED, /* chunk sizes changed */
	NCCLBPF_STAT_CHUNK_INVALID, /* chunk outputs rejected */
	NCCLBPF_STAT_MAX
};

/* One per communicator. Calls for one communicator are serialised by the host (NCCL
 * guarantees it for the tuner), so seq needs no atomics; counters are relaxed atomics so that
 * statistics can be read from another thread. */
struct ncclbpf_comm {
	uint64_t comm_id;
	uint32_t n_ranks;
	uint32_t n_nodes;
	uint32_t api_version; /* which host interface created it (e.g. NCCL tuner v5) */
	uint32_t serial;      /* creation number in this process (traces key contexts by it) */
	uint64_t seq;	      /* next tuner call number */
	uint64_t chunk_seq;   /* next chunk-size call number */
	uint64_t stats[NCCLBPF_STAT_MAX];
	struct ncclbpf_comm *prev, *next; /* registry (under the runtime's lock) */
};

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
