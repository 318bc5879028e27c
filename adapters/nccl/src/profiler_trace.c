/* profiler_trace.h */
#include "profiler_trace.h"

#include <time.h>
#include <unistd.h>

#include "ncclbpf/trace.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct ncclbpf_trace_rec rec(const struct prof_comm *c, int kind, const void *h)
{
	return (struct ncclbpf_trace_rec){.kind = kind,
					  .pid = (uint32_t)getpid(),
					  .ctx = c->serial,
					  .handle = (uint64_t)(uintptr_t)h,
					  .t_ns = now_ns()};
}

void prof_trace_comm(const struct prof_comm *c, int kind)
{
	struct ncclbpf_trace_rec r = rec(c, kind, NULL);
	r.comm_id = c->comm_id;
	r.n_ranks = c->n_ranks;
	r.n_nodes = c->n_nodes;
	r.rank = c->rank;
	r.api = c->api;
	ncclbpf_trace_emit(&r);
}

void prof_trace_coll(const struct prof_comm *c, const void *h, uint64_t seq, const char *func,
		     uint64_t count, const char *dtype, uint8_t n_channels, const char *algo,
		     const char *proto)
{
	struct ncclbpf_trace_rec r = rec(c, NCCLBPF_TRACE_PCOLL, h);
	r.seq = seq;
	r.n_bytes = count;
	r.channels = n_channels;
	ncclbpf_trace_name(r.func, func);
	ncclbpf_trace_name(r.dtype, dtype);
	ncclbpf_trace_name(r.alg, algo);
	ncclbpf_trace_name(r.prot, proto);
	ncclbpf_trace_emit(&r);
}

void prof_trace_kch(const struct prof_comm *c, const void *h, const void *parent, uint8_t channel,
		    uint64_t gpu_start)
{
	struct ncclbpf_trace_rec r = rec(c, NCCLBPF_TRACE_PKCH, h);
	r.parent = (uint64_t)(uintptr_t)parent;
	r.channels = channel;
	r.timer = gpu_start;
	ncclbpf_trace_emit(&r);
}

void prof_trace_proxy(const struct prof_comm *c, const void *h, const void *parent, pid_t pid,
		      uint8_t channel, int peer, int n_steps, int chunk_size)
{
	struct ncclbpf_trace_rec r = rec(c, NCCLBPF_TRACE_PPROXY, h);
	r.parent = (uint64_t)(uintptr_t)parent;
	r.proxy_pid = (uint32_t)pid;
	r.channels = channel;
	r.peer = peer;
	r.steps = n_steps;
	r.chunk = chunk_size;
	ncclbpf_trace_emit(&r);
}

void prof_trace_stop(const void *h)
{
	const struct prof_comm *c = prof_comm_of_handle(h);
	if (!c)
		return;
	struct ncclbpf_trace_rec r = rec(c, NCCLBPF_TRACE_PSTOP, h);
	ncclbpf_trace_emit(&r);
}

void prof_trace_kch_end(const void *h, uint64_t gpu_end)
{
	const struct prof_comm *c = prof_comm_of_handle(h);
	if (!c)
		return;
	struct ncclbpf_trace_rec r = rec(c, NCCLBPF_TRACE_PKCH_END, h);
	r.timer = gpu_end;
	ncclbpf_trace_emit(&r);
}
