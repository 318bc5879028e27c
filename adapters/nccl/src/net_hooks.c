/* Net hook context and pacing (net_hooks.h). */
#include "net_hooks.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ncclbpf/runtime.h"
#include "ncclbpf/trace.h"
#include "net_log.h"

uint64_t net_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fill_ctx(struct ncclbpf_net_ctx *x, uint32_t op, const struct net_who *who,
		     uint64_t bytes, int32_t tag)
{
	*x = (struct ncclbpf_net_ctx){
	    .comm_id = who->comm_id,
	    .bytes = bytes,
	    .op = op,
	    .dev = who->dev,
	    .peer = 0xffffffffu,
	    .tag = tag,
	    .peer_port = who->peer.port,
	    ._pad0 = 0,
	};
	memcpy(x->peer_addr, who->peer.addr, sizeof(x->peer_addr));
}

uint32_t net_next_serial(void)
{
	static uint32_t serial;
	return __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
}

/* One net record of the context x as built (ran: a program returned ret). */
static void trace_event(const struct ncclbpf_net_ctx *x, uint32_t serial, int ran, uint64_t ret)
{
	struct ncclbpf_trace_rec r = {.kind = NCCLBPF_TRACE_NET,
				      .pid = (uint32_t)getpid(),
				      .ctx = serial,
				      .net_op = x->op,
				      .comm_id = x->comm_id,
				      .n_bytes = x->bytes,
				      .t_ns = x->time_ns,
				      .dur_ns = x->duration_ns,
				      .dev = x->dev,
				      .peer = (int32_t)x->peer,
				      .tag = x->tag,
				      .peer_port = x->peer_port,
				      .has_ret = ran,
				      .ret = ran ? ret : 0};
	memcpy(r.peer_addr, x->peer_addr, sizeof(r.peer_addr));
	ncclbpf_trace_emit(&r);
}

int net_hook(uint32_t op, const struct net_who *who, uint64_t bytes, int32_t tag, uint64_t t0,
	     uint64_t *now, uint64_t *ret, int *stamp_after)
{
	struct ncclbpf_net_ctx x;
	fill_ctx(&x, op, who, bytes, tag);
	uint64_t r0 = 0, t = 0;
	int err = ncclbpf_rt_net_event(&x, t0, &t, &r0, stamp_after);
	if (__builtin_expect(ncclbpf_trace_on(), 0)) {
		if (!t)
			t = x.time_ns = net_now_ns();
		trace_event(&x, who->serial, err == 0, r0);
	}
	if (now)
		*now = t;
	if (err != 0)
		return 0;
	*ret = r0;
	return 1;
}

void net_complete(struct ncclbpf_net_queue *q, uint32_t op, const struct net_who *who,
		  uint64_t bytes, int32_t tag, uint64_t t0)
{
	struct ncclbpf_net_ctx x;
	fill_ctx(&x, op, who, bytes, tag);
	ncclbpf_rt_net_complete(q, &x, t0);
	if (__builtin_expect(ncclbpf_trace_on(), 0)) {
		/* The times the program sees, else read for the record: a post recorded carried
		 * its CLOCK_MONOTONIC time as t0 (net_hook); a TSC stamp only when a program
		 * measured the duration itself. */
		if (!x.time_ns)
			x.time_ns = net_now_ns();
		if (!x.duration_ns && t0 && !(t0 >> 63) && x.time_ns > t0)
			x.duration_ns = x.time_ns - t0;
		trace_event(&x, who->serial, 0, 0);
	}
}

uint64_t net_pace(uint64_t *vt, uint64_t rate_mbps, uint64_t bytes, uint64_t now)
{
	if (!rate_mbps)
		return now; /* neither takes from the bucket nor refills it */
	/* bytes / (rate * 1e6 B/s) seconds = bytes * 1000 / rate ns */
	uint64_t cost = bytes > UINT64_MAX / 1000 ? UINT64_MAX / 2 : bytes * 1000 / rate_mbps;
	uint64_t floor = now > NET_PACE_BURST_NS ? now - NET_PACE_BURST_NS : 0;
	uint64_t start = *vt > floor ? *vt : floor;
	*vt = start + cost;
	return start;
}

void net_log_refusal(uint32_t op, const struct net_who *who)
{
	static int logged;
	char host[INET6_ADDRSTRLEN] = "unknown";
	if (who->peer.family)
		inet_ntop(who->peer.family, who->peer.addr, host, sizeof(host));
	const char *what = op == NCCLBPF_NET_CONNECT ? "connect to" : "accept from";
	if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED))
		net_warn("NET/NCCLbpf: policy refused to %s peer %s port %u (device %u, comm "
			 "%016llx); NCCL reports the connection error",
			 what, host, who->peer.port, who->dev, (unsigned long long)who->comm_id);
	else
		net_info("NET/NCCLbpf: policy refused to %s peer %s port %u", what, host,
			 who->peer.port);
}
