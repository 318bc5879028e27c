/* Activation: the swap of the active policy, with the retirement of the one it replaces, the
 * drain that runs before every swap and the listeners told after it. Reload (reload.c) and unload
 * (ncclbpf_rt_unload, below) go through here. */
#include <errno.h>
#include <stdlib.h>

#include "ebpf/epoch.h"
#include "policy.h"

/* --- Activation listeners ----------------------------------------------------------------- */
#define MAX_LISTENERS 8
static _Atomic(ncclbpf_activate_fn) listeners[MAX_LISTENERS];

int ncclbpf_rt_add_activate_listener(ncclbpf_activate_fn fn)
{
	for (int i = 0; i < MAX_LISTENERS; i++) {
		ncclbpf_activate_fn cur = NULL;
		if (atomic_compare_exchange_strong(&listeners[i], &cur, fn) || cur == fn)
			return 0;
	}
	return -ENOSPC;
}

void rt_notify_activate(void)
{
	for (int i = 0; i < MAX_LISTENERS; i++) {
		ncclbpf_activate_fn fn = atomic_load(&listeners[i]);
		if (fn)
			fn();
	}
}

/* --- Activation --------------------------------------------------------------------------- */

static _Atomic(void (*)(void)) drain_fn;

void rt_policy_set_drain(void (*drain)(void))
{
	atomic_store(&drain_fn, drain);
}

/* Before a swap: what is queued for the running policy runs under it (rt_policy_set_drain). */
void rt_policy_drain(void)
{
	void (*fn)(void) = atomic_load(&drain_fn);
	if (fn)
		fn();
}

void rt_activate(struct rt_policy *p, int wait, uint64_t *swap_ns, uint64_t *retire_ns)
{
	uint64_t t0 = rt_now_ns();
	struct rt_policy *old = __atomic_exchange_n(&rt_active, p, __ATOMIC_ACQ_REL);
	__atomic_store_n(&ncclbpf_rt_hot_.tuner_keeps, p ? p->hot.tuner_keeps : 0,
			 __ATOMIC_RELAXED);
	uint64_t t1 = rt_now_ns();
	if (old) {
		/* Calls that loaded old before the exchange may still run it: the epoch reclaimer
		 * frees it after they are gone. Reloads never wait for that (a thread preempted
		 * inside a call can hold an epoch for a whole time slice); freeing
		 * opportunistically here keeps at most a few retired policies around. */
		rt_policy_put(old); /* retired once no communicator is bound to it either */
		if (wait)
			ebpf_epoch_synchronize();
		else
			ebpf_epoch_reclaim();
	}
	if (swap_ns)
		*swap_ns = t1 - t0;
	if (retire_ns)
		*retire_ns = rt_now_ns() - t1;
	rt_notify_activate();
}

void ncclbpf_rt_unload(void)
{
	pthread_mutex_lock(&rt.reload_lock);
	rt_policy_drain(); /* queued completions still see the policy they were taken for */
	rt_activate(NULL, 1, NULL, NULL);
	pthread_mutex_unlock(&rt.reload_lock);
}
