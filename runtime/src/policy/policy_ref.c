/* A policy's identity and references. Its hash (of the ELF image, or of a native policy's name)
 * is what members of the control plane compare. A policy is referenced by the process default
 * (rt_active) and by every communicator bound to it through the control plane; the last
 * reference retires it to the epoch reclaimer, which frees it once no call that could still see
 * it remains. */
#include <stdlib.h>

#include "ncclbpf/control.h"
#include "ebpf/epoch.h"
#include "policy.h"

uint64_t ncclbpf_cp_hash(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void rt_policy_free(struct rt_policy *p)
{
	if (!p)
		return;
	rt_bundle_free(p);
	if (p->release)
		p->release(p->release_arg);
	free(p->image);
	free(p);
}

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
