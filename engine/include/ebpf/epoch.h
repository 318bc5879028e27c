/* Epoch-based memory reclamation: memory that a running program may still point to (an old map
 * value, an old program after a hot swap) is retired instead of freed, and freed once every
 * thread that was inside an epoch section when it was retired has left it.
 *
 * Readers bracket each program run with ebpf_epoch_enter()/ebpf_epoch_exit(): a per-thread store
 * and no shared write, no lock. Sections nest. Writers unlink an object so that new readers
 * cannot reach it, then call ebpf_epoch_retire(); retired objects are freed in batches by later
 * retire calls, ebpf_epoch_reclaim() or ebpf_epoch_synchronize(). The engine and the runtime
 * share one epoch domain per process. */
#ifndef EBPF_EPOCH_H
#define EBPF_EPOCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*ebpf_epoch_free_fn)(void *ptr);

void ebpf_epoch_enter_slow(void);
void ebpf_epoch_exit_slow(void);

#ifndef __cplusplus
#include <stdatomic.h>
/* The calling thread's reader record, in static TLS, so that entering and leaving a section
 * inline into the hot path as one load, one compare and one store each way. Internal to the
 * engine.
 *
 * One word says everything, and reclaimers read it:
 *   bit 0 (INSIDE)  inside a section;
 *   bit 1 (FAST)    registered, and membarrier orders readers, so the inline path applies
 *                   (0: not registered yet, or full-barrier readers: every enter/exit goes out of
 *                   line); a zeroed TLS block therefore always takes the slow path first;
 *   bits 2..31      nesting depth while inside (DEPTH1 = outermost);
 *   bits 32..63     the global epoch announced at the outermost enter, modulo 2^32 (an announced
 *                   epoch that is behind blocks the next advance, so aliasing would need 2^32
 *                   advances while the reader sits between its load of the epoch and its store). */
#define EBPF_EPOCH_INSIDE 1ull
#define EBPF_EPOCH_FAST	  2ull
#define EBPF_EPOCH_DEPTH1 4ull
#define EBPF_EPOCH_SHIFT  32
struct ebpf_epoch_reader {
	_Atomic uint64_t state;
	void *rec; /* the thread's record in epoch.c */
};
extern __thread struct ebpf_epoch_reader ebpf_epoch_tls_ __attribute__((tls_model("initial-exec")));
/* hidden: read with one load (not a load of its address first). The global epoch, and what an
 * outermost enter of a fast-path reader stores: EBPF_EPOCH__ANNOUNCE of the global epoch, or of
 * the one before it for a moment after an advance (epoch.c). */
extern _Atomic uint64_t ebpf_epoch_global_ __attribute__((visibility("hidden")));
extern _Atomic uint64_t ebpf_epoch_announce_ __attribute__((visibility("hidden")));
#define EBPF_EPOCH__ANNOUNCE(e)                                                                    \
	((uint64_t)(e) << EBPF_EPOCH_SHIFT | EBPF_EPOCH_DEPTH1 | EBPF_EPOCH_FAST |                 \
	 EBPF_EPOCH_INSIDE)

/* The state word is named directly, never through a pointer to the TLS block: UBSan checks a
 * pointer for NULL with the flags of the initial-exec TLS sequence's add, which the linker may
 * relax into a lea that sets no flags (a spurious "member access within null pointer" in
 * sanitizer builds, depending on the code around the call). */
#define EBPF_EPOCH_STATE (&ebpf_epoch_tls_.state)

/* The outermost enter of a registered fast-path thread (state EBPF_EPOCH_FAST). */
static inline void ebpf_epoch__enter_outer(void)
{
	/* Release so that a reclaimer reading this state also sees everything this thread did in
	 * its previous section (the exit store alone may be overwritten). */
	atomic_store_explicit(EBPF_EPOCH_STATE,
			      atomic_load_explicit(&ebpf_epoch_announce_, memory_order_relaxed),
			      memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
}

/* For a hot path that must not call out of line: enters a section only when that takes no
 * call (the thread is registered on the fast path and not inside a section) and returns 1;
 * else enters nothing and returns 0 (use ebpf_epoch_enter). Leave with ebpf_epoch_exit_outer. */
static inline int ebpf_epoch_try_enter_outer(void)
{
	if (__builtin_expect(
		atomic_load_explicit(EBPF_EPOCH_STATE, memory_order_relaxed) != EBPF_EPOCH_FAST, 0))
		return 0;
	ebpf_epoch__enter_outer();
	return 1;
}

/* Leaves an outermost section of a fast-path thread (ebpf_epoch_try_enter_outer's; the common
 * case of ebpf_epoch_exit). Only the thread itself writes its state. */
static inline void ebpf_epoch_exit_outer(void)
{
	atomic_store_explicit(EBPF_EPOCH_STATE, EBPF_EPOCH_FAST, memory_order_release);
}

static inline void ebpf_epoch_enter(void)
{
	uint64_t s = atomic_load_explicit(EBPF_EPOCH_STATE, memory_order_relaxed);

	if (__builtin_expect(s == EBPF_EPOCH_FAST, 1)) {
		ebpf_epoch__enter_outer();
	} else if ((s & (EBPF_EPOCH_FAST | EBPF_EPOCH_INSIDE)) ==
		   (EBPF_EPOCH_FAST | EBPF_EPOCH_INSIDE)) {
		/* nested: the outermost section already protects */
		atomic_store_explicit(EBPF_EPOCH_STATE, s + EBPF_EPOCH_DEPTH1,
				      memory_order_relaxed);
	} else {
		ebpf_epoch_enter_slow();
	}
}

static inline void ebpf_epoch_exit(void)
{
	uint64_t s = atomic_load_explicit(EBPF_EPOCH_STATE, memory_order_relaxed);

	if (__builtin_expect(
		(uint32_t)s == (EBPF_EPOCH_DEPTH1 | EBPF_EPOCH_FAST | EBPF_EPOCH_INSIDE), 1)) {
		ebpf_epoch_exit_outer();
	} else if ((s & (EBPF_EPOCH_FAST | EBPF_EPOCH_INSIDE)) ==
		       (EBPF_EPOCH_FAST | EBPF_EPOCH_INSIDE) &&
		   (uint32_t)s > (EBPF_EPOCH_DEPTH1 | EBPF_EPOCH_FAST | EBPF_EPOCH_INSIDE)) {
		atomic_store_explicit(EBPF_EPOCH_STATE, s - EBPF_EPOCH_DEPTH1,
				      memory_order_relaxed);
	} else {
		ebpf_epoch_exit_slow();
	}
}

#endif
/* Non-zero when the calling thread is inside an epoch section. */
int ebpf_epoch_in_section(void);

/* Hands ptr to free_fn once no reader that might hold it remains. Callable inside or outside a
 * section, from any thread. free_fn runs on some thread that calls retire/reclaim/synchronize. */
void ebpf_epoch_retire(void *ptr, ebpf_epoch_free_fn free_fn);

/* Frees what is safe to free now without waiting; returns the number of objects freed. */
uint64_t ebpf_epoch_reclaim(void);

/* Waits until every reader that was inside a section when it was called has left, then frees
 * everything retired before the call (by any thread). Returns 0, or -EDEADLK when called from
 * inside a section (it would wait for itself). */
int ebpf_epoch_synchronize(void);

struct ebpf_epoch_stats {
	uint64_t epoch;	  /* current global epoch */
	uint64_t retired; /* objects ever retired */
	uint64_t freed;	  /* objects ever freed */
	uint64_t threads; /* thread records in use */
};
void ebpf_epoch_get_stats(struct ebpf_epoch_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
