/* Policy references. A policy is referenced by the process default (rt_active) and by every
 * communicator bound to it through the control plane; the last reference retires it to the
 * epoch reclaimer, which frees it once no call that could still see it remains. */
#include "ncclbpf/epoch.h"
#include "base/rt_internal.h"

static void policy_free_cb(void *p)
{
	rt_policy_free(p);
}

void rt_policy_get(struct rt_policy *p)
{
	if (p)
		atomic_fetch_add(&p->refs, 1);
}

void rt_policy_put(struct rt_policy *p)
{
	if (p && atomic_fetch_sub(&p->refs, 1) == 1)
		ebpf_epoch_retire(p, policy_free_cb);
}
