/* Hot path of the net plugin's hooks: one SEC("net/<op>") program per operation, run on a
 * read-only context. Same protocol as the tuner hooks (runtime.c): one epoch section per call,
 * the active policy read once, no lock, no allocation. */
#include <errno.h>
#include <time.h>

#include "ebpf/epoch.h"
#include "net.h"

/* Duration since a TSC-tagged posting stamp (ncclbpf_rt_net_stamp); 0 if the counter went
 * backwards (it cannot where the kernel keeps time with it). */
static inline uint64_t tsc_duration(uint64_t t0)
{
	uint64_t c = rt_tsc_read() & ~RT_TSC_TAG, c0 = t0 & ~RT_TSC_TAG;
	return c > c0 ? rt_tsc_ticks_to_ns(c - c0) : 0;
}

/* Fills x->time_ns and x->duration_ns as the program of slot may read them (p->net_clock);
 * returns the CLOCK_MONOTONIC time read, or 0 when none was. *stamp_after as for
 * ncclbpf_rt_net_event. */
static uint64_t event_clock(const struct rt_policy *p, uint32_t slot, struct ncclbpf_net_ctx *x,
			    uint64_t t0, int *stamp_after)
{
	uint8_t clk = p->net_clock[slot];
	if ((clk & RT_NET_CLOCK_AFTER) && !(clk & RT_NET_CLOCK_NOW) && stamp_after) {
		/* the caller stamps the post once it is handed over, one post in this many */
		*stamp_after = p->net_time_every > 1 ? (int)p->net_time_every : 1;
		return 0;
	}
	/* A completion whose program reads only duration_ns, of a request stamped with TSC ticks
	 * (ncclbpf_rt_net_stamp): one rdtsc, no CLOCK_MONOTONIC read; of an unstamped one
	 * (sampled timing, or posted while no program needed a time): nothing to measure. */
	if (clk == RT_NET_CLOCK_DUR && (t0 & RT_TSC_TAG)) {
		x->duration_ns = tsc_duration(t0);
		return 0;
	}
	if (clk == RT_NET_CLOCK_DUR && !t0)
		return 0;
	if (!clk)
		return 0;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	x->time_ns = t;
	/* TSC-tagged t0 and a program that also reads time_ns: both clocks */
	if ((clk & RT_NET_CLOCK_DUR) && t0)
		x->duration_ns = (t0 & RT_TSC_TAG) ? tsc_duration(t0) : (t > t0 ? t - t0 : 0);
	return t;
}

int ncclbpf_rt_net_event(struct ncclbpf_net_ctx *x, uint64_t t0, uint64_t *now, uint64_t *ret,
			 int *stamp_after)
{
	uint32_t slot = rt_net_slot(x->op);
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
		/* Only when a program may read the time (the verifier saw its context reads). */
		t = event_clock(p, slot, x, t0, stamp_after);
		err = rt_net_run_hook(&p->net[slot], x, ret);
	}
	ebpf_epoch_exit();
	*now = t; /* from a local: nothing the program does can change it */
	return err;
}

int ncclbpf_rt_net_complete(struct ncclbpf_net_queue *q, struct ncclbpf_net_ctx *x, uint64_t t0)
{
	const uint32_t slot = NCCLBPF_NET_COMPLETE - 1;
	x->time_ns = 0;
	x->duration_ns = 0;
	if (x->op != NCCLBPF_NET_COMPLETE && x->op != NCCLBPF_NET_COMPLETE_RECV)
		return -EINVAL;
	ebpf_epoch_enter();
	struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE);
	int err = -ENOENT;
	if (p && (p->net[slot].fn || p->net[slot].prog)) {
		/* The time is the completion's own, whenever the program runs. */
		event_clock(p, slot, x, t0, NULL);
		uint64_t ignored;
		err = rt_net_defer(q, x) ? 0 : rt_net_run_hook(&p->net[slot], x, &ignored);
	}
	ebpf_epoch_exit();
	return err;
}

int ncclbpf_rt_net_replay(const struct ncclbpf_net_ctx *x, uint64_t *ret)
{
	uint32_t slot = rt_net_slot(x->op);
	if (slot >= RT_NET_HOOKS)
		return -EINVAL;
	struct ncclbpf_net_ctx c = *x; /* the program's own copy, as the hooks give it */
	ebpf_epoch_enter();
	struct rt_policy *p = __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE);
	int err = p ? rt_net_run_hook(&p->net[slot], &c, ret) : -ENOENT;
	ebpf_epoch_exit();
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
