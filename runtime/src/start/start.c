/* The runtime's start-up and shutdown, the one place that knows every folder (the top of
 * runtime/src): the first acquire and the last release, and a communicator's creation and end,
 * call each folder's part in order. Nothing below calls up into it, so the calls between the
 * folders go one way (docs/architecture.md). */
#include <stdlib.h>

#include "cp/cp.h"
#include "inspect/inspect.h"
#include "net/net.h"
#include "policy/policy.h"
#include "telem/telem.h"

/* Whole acquire/release under init_lock: a second communicator created while the first one
 * is still loading the bundle must not start deciding without it (ranks of one communicator
 * living in one process would otherwise disagree about their first calls). */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

int ncclbpf_rt_acquire(void)
{
	pthread_mutex_lock(&init_lock);
	/* With the control plane, changes arrive through it at agreed seqs: no file watch. */
	int n = rt_policy_acquire(cp_enabled());
	if (n == 1) {
		rt_tsc_setup();
		rt_telem_start();
		rt_policy_first_load();
		rt_inspect_start();
	}
	pthread_mutex_unlock(&init_lock);
	return n;
}

int ncclbpf_rt_release(void)
{
	pthread_mutex_lock(&init_lock);
	int n = rt_policy_release();
	if (n == 0) {
		rt_telem_stop();
		rt_inspect_stop();
		rt_policy_shutdown();
	}
	pthread_mutex_unlock(&init_lock);
	return n;
}

struct ncclbpf_comm *ncclbpf_comm__new(uint64_t comm_id, uint32_t n_ranks, uint32_t n_nodes,
				       uint32_t api_version)
{
	struct ncclbpf_comm *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->comm_id = comm_id;
	c->n_ranks = n_ranks;
	c->n_nodes = n_nodes;
	c->api_version = api_version;
	c->cp_next = UINT64_MAX;
	ncclbpf_rt_acquire();
	rt_comm_register(c);
	cp_member_attach(c);
	rt_comm_maps_create(c); /* for the policy it runs: bound by the control plane, if on */
	return c;
}

void ncclbpf_comm__free(struct ncclbpf_comm *c)
{
	if (!c)
		return;
	cp_member_detach(c);
	rt_comm_unregister(c);
	free(c);
	ncclbpf_rt_release();
}
