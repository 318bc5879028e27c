/* Hot path of the net plugin's hooks: one SEC("net/<op>") program per operation, run on a
 * read-only context. Same protocol as the tuner hooks (runtime.c): one epoch section per call,
 * the active policy read once, no lock, no allocation. */
#include <errno.h>
#include <time.h>

#include "ncclbpf/epoch.h"
#include "rt_internal.h"

int ncclbpf_rt_run_net(const struct ncclbpf_net_ctx *ctx, uint64_t *ret)
{
	uint32_t op = ctx->op;
	/* Both completions (send, receive) are served by SEC("net/complete"). */
	uint32_t slot = op == NCCLBPF_NET_COMPLETE_RECV ? NCCLBPF_NET_COMPLETE - 1 : op - 1;
	if (slot >= RT_NET_HOOKS)
		return -EINVAL;
	ebpf_epoch_enter();
	struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE);
	int err = -ENOENT;
	if (p) {
		const struct rt_hook *h = &p->net[slot];
		/* Programs get a private copy: the context is read-only for them anyway, and
		 * the caller's struct stays untouched whatever the engine does. */
		struct ncclbpf_net_ctx x = *ctx;
		if (h->fn) {
			*ret = h->fn((uint64_t)(uintptr_t)&x, h->arg);
			err = 0;
		} else if (h->prog) {
			err = rt_bundle_run_interp_r0(h->prog, &x, ret);
		}
	}
	ebpf_epoch_exit();
	return err;
}

/* Duration since a TSC-tagged posting stamp (ncclbpf_rt_net_stamp); 0 if the counter went
 * backwards (it cannot where the kernel keeps time with it). */
static inline uint64_t tsc_duration(uint64_t t0)
{
	uint64_t c = rt_tsc_read() & ~RT_TSC_TAG, c0 = t0 & ~RT_TSC_TAG;
	return c > c0 ? rt_tsc_ticks_to_ns(c - c0) : 0;
}

int ncclbpf_rt_net_event(struct ncclbpf_net_ctx *x, uint64_t t0, uint64_t *now, uint64_t *ret,
			 int *stamp_after)
{
	uint32_t op = x->op;
	uint32_t slot = op == NCCLBPF_NET_COMPLETE_RECV ? NCCLBPF_NET_COMPLETE - 1 : op - 1;
	uint64_t t = 0;
	x->time_ns = 0;
	x->duration_ns = 0;
	*now = 0;
	if (stamp_after)
		*stamp_after = 0;
	if (slot >= RT_NET_HOOKS)
		return -EINVAL;
	ebpf_epoch_enter();
	struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE);
	int err = -ENOENT;
	if (p) {
		const struct rt_hook *h = &p->net[slot];
		/* Only when a program may read the time (the verifier saw its context reads). */
		uint8_t clk = p->net_clock[slot];
		if ((clk & RT_NET_CLOCK_AFTER) && !(clk & RT_NET_CLOCK_NOW) && stamp_after) {
			*stamp_after = 1; /* the caller stamps the post once it is handed over */
			clk = 0;
		}
		/* A completion whose program reads only duration_ns, of a request stamped with
		 * TSC ticks (ncclbpf_rt_net_stamp): one rdtsc, no CLOCK_MONOTONIC read. */
		if (clk == RT_NET_CLOCK_DUR && (t0 & RT_TSC_TAG)) {
			x->duration_ns = tsc_duration(t0);
			clk = 0;
		}
		if (clk) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
			x->time_ns = t;
			/* TSC-tagged t0 and a program that also reads time_ns: both clocks */
			if ((clk & RT_NET_CLOCK_DUR) && t0)
				x->duration_ns =
				    (t0 & RT_TSC_TAG) ? tsc_duration(t0) : (t > t0 ? t - t0 : 0);
		}
		if (h->fn) {
			*ret = h->fn((uint64_t)(uintptr_t)x, h->arg);
			err = 0;
		} else if (h->prog) {
			err = rt_bundle_run_interp_r0(h->prog, x, ret);
		}
	}
	ebpf_epoch_exit();
	*now = t; /* from a local: nothing the program does can change it */
	return err;
}

int ncclbpf_rt_net_active(void)
{
	ebpf_epoch_enter();
	struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE);
	int any = 0;
	for (int i = 0; p && i < RT_NET_HOOKS; i++)
		any |= p->net[i].fn || p->net[i].prog;
	ebpf_epoch_exit();
	return any;
}
