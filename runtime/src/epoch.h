/* Read-side epochs for the runtime: a hook call runs between rt_epoch_enter and rt_epoch_exit;
 * rt_epoch_synchronize returns once every call that was inside an epoch when it started has
 * left. That is what lets a reload free the old policy without a lock on the hot path.
 *
 * Each thread owns one cache-line slot (claimed at its first call, released by a thread-exit
 * destructor). enter publishes the current global epoch in the slot; synchronize advances the
 * global epoch and waits until no slot holds an older one. The reader needs a full barrier
 * between publishing its slot and reading the policy pointer; with membarrier(2) that barrier
 * is moved to the (rare) writer, so readers pay only plain stores.
 *
 * This is the runtime's own implementation until the engine's epoch API (engine/include/ncclbpf/
 * epoch.h, shared with map value reclamation) is merged; rt_epoch_* then forwards to it. */
#ifndef NCCLBPF_RT_EPOCH_H
#define NCCLBPF_RT_EPOCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RT_EPOCH_SLOTS 4096

struct rt_epoch_slot {
	_Atomic uint64_t epoch; /* 0: quiescent */
	_Atomic int used;
	char pad[64 - sizeof(uint64_t) - sizeof(int)];
} __attribute__((aligned(64)));

extern _Atomic uint64_t rt_epoch_global;
extern int rt_epoch_readers_fence; /* 1 when membarrier is unavailable */
/* initial-exec: the plugin is dlopened, but 8 bytes of static TLS are always available, and
 * the hot path then reads the slot without a __tls_get_addr call. */
extern __thread struct rt_epoch_slot *rt_epoch_self __attribute__((tls_model("initial-exec")));

struct rt_epoch_slot *rt_epoch_claim(void);

/* Returns the slot to pass to rt_epoch_exit, or NULL when no slot is left (the caller must then
 * not touch shared policy state). */
static inline struct rt_epoch_slot *rt_epoch_enter(void)
{
	struct rt_epoch_slot *s = rt_epoch_self;
	if (__builtin_expect(!s, 0)) {
		s = rt_epoch_claim();
		if (!s)
			return NULL;
	}
#if defined(__SANITIZE_THREAD__)
	/* TSan models neither fences nor membarrier: use a seq_cst store it understands. */
	atomic_store(&s->epoch, atomic_load(&rt_epoch_global));
#else
	atomic_store_explicit(&s->epoch,
			      atomic_load_explicit(&rt_epoch_global, memory_order_relaxed),
			      memory_order_relaxed);
	if (__builtin_expect(rt_epoch_readers_fence, 0))
		atomic_thread_fence(memory_order_seq_cst);
	else
		atomic_signal_fence(memory_order_seq_cst);
#endif
	return s;
}

static inline void rt_epoch_exit(struct rt_epoch_slot *s)
{
	atomic_store_explicit(&s->epoch, 0, memory_order_release);
}

/* Waits for every reader that may have seen state unpublished before the call. */
void rt_epoch_synchronize(void);

#endif
