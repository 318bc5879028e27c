/* Read-side epochs (epoch.h explains the protocol). */
#include "epoch.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

_Atomic uint64_t rt_epoch_global = 1;
int rt_epoch_readers_fence = 1;
__thread struct rt_epoch_slot *rt_epoch_self __attribute__((tls_model("initial-exec")));

static struct rt_epoch_slot slots[RT_EPOCH_SLOTS];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t slot_key;

static void release_slot(void *p)
{
	struct rt_epoch_slot *s = p;
	atomic_store_explicit(&s->epoch, 0, memory_order_release);
	atomic_store_explicit(&s->used, 0, memory_order_release);
}

static void init_once(void)
{
	pthread_key_create(&slot_key, release_slot);
	/* ThreadSanitizer cannot see the barrier membarrier issues on other threads; keep the
	 * reader fence there so that TSan reasons about a protocol it understands. */
#if !defined(__SANITIZE_THREAD__)
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		rt_epoch_readers_fence = 0;
#endif
}

struct rt_epoch_slot *rt_epoch_claim(void)
{
	pthread_once(&once, init_once);
	for (unsigned i = 0; i < RT_EPOCH_SLOTS; i++) {
		int expect = 0;
		if (atomic_load_explicit(&slots[i].used, memory_order_relaxed))
			continue;
		if (atomic_compare_exchange_strong(&slots[i].used, &expect, 1)) {
			rt_epoch_self = &slots[i];
			pthread_setspecific(slot_key, &slots[i]);
			return &slots[i];
		}
	}
	return NULL;
}

void rt_epoch_synchronize(void)
{
	pthread_once(&once, init_once);
	/* Make every reader's slot store visible before we read the slots (the reader side
	 * skipped its fence when membarrier is in use). */
#if !defined(__SANITIZE_THREAD__)
	atomic_thread_fence(memory_order_seq_cst);
#endif
	if (!rt_epoch_readers_fence)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	uint64_t target = atomic_fetch_add(&rt_epoch_global, 1) + 1;
	for (unsigned i = 0; i < RT_EPOCH_SLOTS; i++) {
		if (!atomic_load_explicit(&slots[i].used, memory_order_acquire))
			continue;
		for (unsigned spins = 0;; spins++) {
			uint64_t e = atomic_load(&slots[i].epoch);
			if (e == 0 || e >= target)
				break;
			if (spins > 64)
				sched_yield();
		}
	}
}
