/* NCCL net adapter: the exported ncclNetPlugin_v11 and ncclNetPlugin_v12 tables.
 *
 * The tables wrap one of two back-ends, chosen once per process: our TCP transport
 * (net_tcp.h), or with NCCLBPF_NET_INNER another net plugin that every call is forwarded to
 * (net_inner.h). Around either, the glue runs the SEC("net/...") hooks (net_hooks.h): connect
 * and accept may refuse a peer, isend may ask for pacing, irecv and completions observe. Every
 * comm and request NCCL sees is a small wrapper of ours, so the hooks know the communicator,
 * device, peer and posting time of each request.
 *
 * Every entry returns a defined ncclResult_t on every input (NULL pointers, foreign objects
 * detected by a magic number, finalize(NULL) after NCCL disabled us). Calls for one comm come
 * from one NCCL thread at a time (§6.10), so the per-comm state below needs no lock. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "ncclbpf/runtime.h"
#include "nccl_net.h"
#include "net_hooks.h"
#include "net_inner.h"
#include "net_log.h"
#include "net_tcp.h"

#define EXPORT __attribute__((visibility("default")))

#define CTX_MAGIC  0x58425046u
#define NB_MAGIC   0x57425046u
#define NB_MAXREQS 128 /* outstanding requests per comm; NCCL keeps at most 32 */

enum { NB_LISTEN = 1, NB_SEND, NB_RECV };
enum { RQ_SEND = 1, RQ_RECV, RQ_FLUSH };

struct net_ctx {
	uint32_t magic;
	uint32_t serial; /* c= of its trace records */
	uint64_t comm_id;
	void *inner_ctx;
	/* Completions waiting for their program, shared by the communicator's connections (one
	 * proxy progress thread tests them all). */
	struct ncclbpf_net_queue *q;
};

struct nb_comm;
struct nb_req {
	struct nb_comm *c;
	void *b; /* the back-end's request */
	uint64_t t0;
	uint64_t bytes;
	int32_t tag;
	uint8_t op;
	uint8_t used;
	uint8_t n; /* buffers of a receive */
};

struct nb_comm {
	uint32_t magic;
	int kind;
	void *b; /* the back-end's comm */
	struct net_who who;
	struct ncclbpf_net_queue *q; /* completions waiting for their program (send/recv) */
	int consumed_frees; /* inner UNPACK device: NCCL hands requests back via irecvConsumed */
	/* A message whose hook already ran but which the back-end (or pacing) has not taken
	 * yet: NCCL repeats the same isend/irecv until it gets a request, and the program must
	 * see each message once. */
	int pend;
	const void *pend_data;
	size_t pend_size;
	int pend_tag, pend_n;
	int pend_paced;		      /* the isend program asked for a rate */
	int pend_stamp;		      /* N: take t0 once the transport has it, one post in N */
	uint32_t stamp_left;	      /* posts until the next stamp (sampled timing) */
	uint64_t pend_t0, pend_start; /* t0: posting time, 0 when no program needed it */
	uint64_t pace_vt;
	unsigned hint;
	struct nb_req reqs[NB_MAXREQS];
};

/* Sampled timing: of the posts that need a stamp only for their completion, one in every
 * (ncclbpf_rt_net_event's *stamp_after) gets one; 0: none. A countdown, not a division. */
static int stamp_this(struct nb_comm *c, int every)
{
	if (every <= 1)
		return every == 1;
	if (!c->stamp_left || c->stamp_left > (uint32_t)every)
		c->stamp_left = (uint32_t)every; /* first, or the policy's stride shrank */
	return --c->stamp_left == 0;
}

static int inner_on(void)
{
	return net_inner.t != NULL;
}

/* --- wrappers ----------------------------------------------------------------------------- */

/* Closes the back end's comm b of this kind: the inner plugin's or our transport's. */
static ncclResult_t back_close(void *b, int kind)
{
	if (inner_on())
		return kind == NB_SEND	 ? net_inner.t->closeSend(b)
		       : kind == NB_RECV ? net_inner.t->closeRecv(b)
					 : net_inner.t->closeListen(b);
	return kind == NB_LISTEN ? tcp_close_listen(b) : tcp_close_comm(b);
}

/* Wraps the back end's comm b; without memory for the wrapper, b is closed and NULL returned. */
static struct nb_comm *nb_new(int kind, void *b, const struct net_who *who,
			      struct ncclbpf_net_queue *q)
{
	/* The request pool makes a comm ~5 KiB; a listen comm has the same (unused) pool so
	 * that every nb_comm is a complete object. */
	struct nb_comm *c = calloc(1, sizeof(*c));
	if (!c) {
		back_close(b, kind);
		return NULL;
	}
	c->magic = NB_MAGIC;
	c->kind = kind;
	c->b = b;
	c->who = *who;
	c->q = ncclbpf_rt_net_queue_get(q); /* NULL: completions run inline */
	return c;
}

static struct nb_comm *nb_get(void *p, int kind)
{
	struct nb_comm *c = p;
	if (!c || c->magic != NB_MAGIC || (kind && c->kind != kind))
		return NULL;
	return c;
}

static struct nb_req *req_get(struct nb_comm *c)
{
	for (unsigned k = 0; k < NB_MAXREQS; k++) {
		unsigned i = (c->hint + k) % NB_MAXREQS;
		if (!c->reqs[i].used) {
			c->hint = i + 1;
			struct nb_req *r = &c->reqs[i];
			memset(r, 0, sizeof(*r));
			r->used = 1;
			r->c = c;
			return r;
		}
	}
	return NULL;
}

static struct nb_req *req_valid(void *p)
{
	struct nb_req *r = p;
	if (!r || !r->used || !r->c || r->c->magic != NB_MAGIC)
		return NULL;
	/* r must be one of its comm's slots (not an arbitrary pointer that happens to pass). */
	if (r < r->c->reqs || r >= r->c->reqs + NB_MAXREQS)
		return NULL;
	return r;
}

/* --- admission hooks ---------------------------------------------------------------------- */

struct admit_arg {
	uint32_t op;
	struct net_who who;
};

/* Called by the TCP transport once per connection with the peer it is about to talk to. */
static int tcp_admit(void *arg, const struct tcp_peer *peer)
{
	struct admit_arg *a = arg;
	a->who.peer = *peer;
	uint64_t ret = NCCLBPF_NET_ALLOW;
	if (net_hook(a->op, &a->who, 0, 0, 0, NULL, &ret, NULL) && ret == NCCLBPF_NET_DENY) {
		net_log_refusal(a->op, &a->who);
		return 0;
	}
	return 1;
}

/* --- lifetime ----------------------------------------------------------------------------- */

__attribute__((constructor)) static void net_plugin_load(void);

/* Once per process, at INFO: the transport (ours or the delegated one) works without hooks
 * when no policy is active or the active one has no SEC("net/...") program. Nothing here is
 * about tuning: a net-only user sees only this. */
static void note_hooks(void)
{
	static int said, clock_said;
	if (ncclbpf_rt_net_active() && !__atomic_exchange_n(&clock_said, 1, __ATOMIC_RELAXED))
		net_info("NET/NCCLbpf: request durations timed with %s",
			 ncclbpf_rt_net_tsc() ? "the TSC (the kernel's clocksource)"
					      : "CLOCK_MONOTONIC");
	if (ncclbpf_rt_net_active() || __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	enum ncclbpf_policy_state st = ncclbpf_rt_policy_state();
	net_info("NET/NCCLbpf: %s; the transport runs without hooks",
		 st == NCCLBPF_POLICY_UNSET ? "NCCLBPF_POLICY is not set, no policy loaded"
		 : st == NCCLBPF_POLICY_FAILED
		     ? "no policy active (the policy did not load)"
		     : "the active policy has no SEC(\"net/...\") program");
}

static ncclResult_t net_init(void **ctx, uint64_t comm_id, ncclNetCommConfig_v11_t *config,
			     ncclDebugLogger_t log, ncclProfilerCallback_t prof)
{
	if (!ctx)
		return ncclInvalidArgument;
	*ctx = NULL;
	net_log_set(log);
	adapter_set_logger(log);
	adapter_net_in_use();
	if (net_inner.wanted && net_inner.failed) {
		/* NCCL then falls back to its own transports; the reason is shown once. */
		static int warned;
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			net_warn("NET/NCCLbpf: NCCLBPF_NET_INNER: %s", net_inner.why);
		return ncclInternalError;
	}
	struct net_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	c->magic = CTX_MAGIC;
	c->comm_id = comm_id;
	c->serial = net_next_serial();
	if (inner_on()) {
		ncclResult_t r = net_inner.t->init(&c->inner_ctx, comm_id, config, log, prof);
		if (r != ncclSuccess) {
			free(c);
			return r;
		}
	}
	ncclbpf_rt_acquire(); /* loads the bundle with the first communicator */
	note_hooks();
	c->q = ncclbpf_rt_net_queue_new();
	*ctx = c;
	return ncclSuccess;
}

static ncclResult_t net_finalize(void *ctx)
{
	struct net_ctx *c = ctx;
	if (!c)
		return ncclSuccess; /* NCCL may finalize a context whose init failed (§6.10) */
	if (c->magic != CTX_MAGIC)
		return ncclInvalidArgument;
	ncclResult_t r = ncclSuccess;
	if (inner_on() && net_inner.t->finalize)
		r = net_inner.t->finalize(c->inner_ctx);
	ncclbpf_rt_net_queue_put(c->q);
	c->magic = 0;
	free(c);
	ncclbpf_rt_release();
	return r;
}

static struct net_ctx *ctx_get(void *ctx)
{
	struct net_ctx *c = ctx;
	return c && c->magic == CTX_MAGIC ? c : NULL;
}

static ncclResult_t net_devices(int *ndev)
{
	if (!ndev)
		return ncclInvalidArgument;
	*ndev = 0;
	if (net_inner.wanted)
		return inner_on() ? net_inner.t->devices(ndev) : ncclInternalError;
	*ndev = tcp_devices();
	return ncclSuccess;
}

static ncclResult_t props_v12(int dev, ncclNetProperties_v12_t *p)
{
	if (!p)
		return ncclInvalidArgument;
	if (net_inner.wanted)
		return inner_on() ? net_inner_props_v12(dev, p) : ncclInternalError;
	return tcp_get_properties(dev, p);
}

static ncclResult_t props_v11(int dev, ncclNetProperties_v11_t *p)
{
	if (!p)
		return ncclInvalidArgument;
	if (net_inner.wanted)
		return inner_on() ? net_inner_props_v11(dev, p) : ncclInternalError;
	ncclNetProperties_v12_t q;
	ncclResult_t r = tcp_get_properties(dev, &q);
	if (r == ncclSuccess)
		net_props_12_to_11(&q, p);
	return r;
}

/* --- connection set-up -------------------------------------------------------------------- */

static ncclResult_t net_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
	if (!listen_comm || !handle)
		return ncclInvalidArgument;
	*listen_comm = NULL;
	struct net_ctx *x = ctx_get(ctx);
	struct net_who who = {
	    .comm_id = x ? x->comm_id : 0, .dev = (uint32_t)dev, .serial = x ? x->serial : 0};
	void *b = NULL;
	ncclResult_t r = inner_on() ? net_inner.t->listen(x ? x->inner_ctx : NULL, dev, handle, &b)
				    : tcp_listen(dev, handle, &b);
	if (r != ncclSuccess || !b)
		return r;
	struct nb_comm *c = nb_new(NB_LISTEN, b, &who, x ? x->q : NULL);
	if (!c)
		return ncclSystemError;
	*listen_comm = c;
	return ncclSuccess;
}

/* A delegated comm is complete: the admission hook runs now (the inner plugin's handle is
 * opaque, so the context has no peer address). */
static int inner_admit(uint32_t op, const struct net_who *who)
{
	uint64_t ret = NCCLBPF_NET_ALLOW;
	if (net_hook(op, who, 0, 0, 0, NULL, &ret, NULL) && ret == NCCLBPF_NET_DENY) {
		net_log_refusal(op, who);
		return 0;
	}
	return 1;
}

static ncclResult_t net_connect(void *ctx, int dev, void *handle, void **send_comm,
				ncclNetDeviceHandle_v11_t **dev_comm)
{
	if (!send_comm || !handle)
		return ncclInvalidArgument;
	*send_comm = NULL;
	struct net_ctx *x = ctx_get(ctx);
	struct admit_arg a = {.op = NCCLBPF_NET_CONNECT,
			      .who = {.comm_id = x ? x->comm_id : 0,
				      .dev = (uint32_t)dev,
				      .serial = x ? x->serial : 0}};
	void *b = NULL;
	ncclResult_t r;
	if (inner_on()) {
		r = net_inner.t->connect(x ? x->inner_ctx : NULL, dev, handle, &b, dev_comm);
		if (r == ncclSuccess && b && !inner_admit(NCCLBPF_NET_CONNECT, &a.who)) {
			back_close(b, NB_SEND);
			return ncclSystemError;
		}
	} else {
		if (dev_comm)
			*dev_comm = NULL;
		r = tcp_connect(dev, handle, &b, tcp_admit, &a);
		if (b)
			tcp_comm_peer(b, &a.who.peer);
	}
	if (r != ncclSuccess || !b)
		return r;
	struct nb_comm *c = nb_new(NB_SEND, b, &a.who, x ? x->q : NULL);
	if (!c)
		return ncclSystemError;
	*send_comm = c;
	return ncclSuccess;
}

static ncclResult_t net_accept(void *listen_comm, void **recv_comm,
			       ncclNetDeviceHandle_v11_t **dev_comm)
{
	if (!recv_comm)
		return ncclInvalidArgument;
	*recv_comm = NULL;
	struct nb_comm *l = nb_get(listen_comm, NB_LISTEN);
	if (!l)
		return ncclInvalidArgument;
	struct admit_arg a = {.op = NCCLBPF_NET_ACCEPT, .who = l->who};
	void *b = NULL;
	ncclResult_t r;
	int unpack = 0;
	if (inner_on()) {
		r = net_inner.t->accept(l->b, &b, dev_comm);
		if (r == ncclSuccess && b && !inner_admit(NCCLBPF_NET_ACCEPT, &a.who)) {
			back_close(b, NB_RECV);
			return ncclSystemError;
		}
		unpack = b && dev_comm && *dev_comm &&
			 (*dev_comm)->netDeviceType == NCCL_NET_DEVICE_UNPACK &&
			 net_inner.t->irecvConsumed;
	} else {
		if (dev_comm)
			*dev_comm = NULL;
		r = tcp_accept(l->b, &b, tcp_admit, &a);
		if (b)
			tcp_comm_peer(b, &a.who.peer);
	}
	if (r != ncclSuccess || !b)
		return r;
	struct nb_comm *c = nb_new(NB_RECV, b, &a.who, l->q);
	if (!c)
		return ncclSystemError;
	c->consumed_frees = unpack;
	*recv_comm = c;
	return ncclSuccess;
}

static ncclResult_t close_comm(void *comm, int kind)
{
	struct nb_comm *c = nb_get(comm, kind);
	if (!comm)
		return ncclSuccess;
	if (!c)
		return ncclInvalidArgument;
	ncclResult_t r = back_close(c->b, kind);
	ncclbpf_rt_net_queue_put(c->q); /* runs what is still queued */
	c->magic = 0;
	free(c);
	return r;
}

static ncclResult_t net_close_send(void *comm)
{
	return close_comm(comm, NB_SEND);
}

static ncclResult_t net_close_recv(void *comm)
{
	return close_comm(comm, NB_RECV);
}

static ncclResult_t net_close_listen(void *comm)
{
	return close_comm(comm, NB_LISTEN);
}

/* --- memory registration ------------------------------------------------------------------ */

static ncclResult_t net_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	if (!mhandle)
		return ncclInvalidArgument;
	*mhandle = NULL;
	struct nb_comm *c = nb_get(comm, 0);
	if (!c || c->kind == NB_LISTEN)
		return ncclInvalidArgument;
	return inner_on() ? net_inner.t->regMr(c->b, data, size, type, mhandle)
			  : tcp_reg_mr(c->b, data, size, type, mhandle);
}

static ncclResult_t net_reg_mr_dmabuf(void *comm, void *data, size_t size, int type,
				      uint64_t offset, int fd, void **mhandle)
{
	if (!mhandle)
		return ncclInvalidArgument;
	*mhandle = NULL;
	struct nb_comm *c = nb_get(comm, 0);
	if (!c || c->kind == NB_LISTEN || !inner_on() || !net_inner.t->regMrDmaBuf)
		return ncclInvalidArgument;
	return net_inner.t->regMrDmaBuf(c->b, data, size, type, offset, fd, mhandle);
}

static ncclResult_t net_dereg_mr(void *comm, void *mhandle)
{
	struct nb_comm *c = nb_get(comm, 0);
	if (!c || c->kind == NB_LISTEN)
		return ncclInvalidArgument;
	return inner_on() ? net_inner.t->deregMr(c->b, mhandle) : tcp_dereg_mr(c->b, mhandle);
}

static ncclResult_t net_get_device_mr(void *comm, void *mhandle, void **dptr)
{
	struct nb_comm *c = nb_get(comm, 0);
	if (!c || !inner_on() || !net_inner.t->getDeviceMr)
		return ncclInvalidArgument;
	return net_inner.t->getDeviceMr(c->b, mhandle, dptr);
}

/* --- data --------------------------------------------------------------------------------- */

/* The back-end's answer (res, its request b) to the post r describes: r becomes the request NCCL
 * tests, or goes back to the pool (the message stays pending while the back-end has no room: b
 * NULL; an error ends it). */
static ncclResult_t posted(struct nb_comm *c, struct nb_req *r, ncclResult_t res, void *b,
			   void **request)
{
	if (res != ncclSuccess || !b) {
		r->used = 0;
		if (res != ncclSuccess)
			c->pend = 0;
		return res;
	}
	c->pend = 0;
	r->b = b;
	/* After the hand-over: the clock read overlaps the transfer instead of preceding it. */
	r->t0 = stamp_this(c, c->pend_stamp) ? ncclbpf_rt_net_stamp() : c->pend_t0;
	*request = r;
	return ncclSuccess;
}

static ncclResult_t net_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
			      void *phandle, void **request)
{
	if (!request)
		return ncclInvalidArgument;
	*request = NULL;
	struct nb_comm *c = nb_get(send_comm, NB_SEND);
	if (!c)
		return ncclInvalidArgument;
	uint64_t now = 0;
	if (!(c->pend && c->pend_data == data && c->pend_size == size && c->pend_tag == tag)) {
		/* now: 0 when no program needs the time (no clock read then). */
		uint64_t rate = 0;
		if (!net_hook(NCCLBPF_NET_ISEND, &c->who, size, tag, 0, &now, &rate,
			      &c->pend_stamp))
			rate = 0;
		c->pend = 1;
		c->pend_data = data;
		c->pend_size = size;
		c->pend_tag = tag;
		/* Unpaced (rate 0) starts at once. A pacing program that reads no time field
		 * ran without a clock read (now 0): read it here. */
		c->pend_paced = rate != 0;
		if (rate && !now)
			now = net_now_ns();
		if (rate)
			c->pend_stamp = 0; /* a paced message's time counts from its first post */
		c->pend_t0 = now;
		c->pend_start = rate ? net_pace(&c->pace_vt, rate, size, now) : 0;
	} else if (c->pend_paced) {
		now = net_now_ns(); /* NCCL calls again while paced */
	}
	if (c->pend_paced && now < c->pend_start)
		return ncclSuccess; /* paced: NCCL calls again */
	struct nb_req *r = req_get(c);
	if (!r)
		return ncclSuccess;
	void *b = NULL;
	ncclResult_t res = inner_on()
			       ? net_inner.t->isend(c->b, data, size, tag, mhandle, phandle, &b)
			       : tcp_isend(c->b, data, size, tag, &b);
	r->bytes = size;
	r->tag = tag;
	r->op = RQ_SEND;
	return posted(c, r, res, b, request);
}

static ncclResult_t net_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **phandles, void **request)
{
	if (!request)
		return ncclInvalidArgument;
	*request = NULL;
	struct nb_comm *c = nb_get(recv_comm, NB_RECV);
	if (!c || n < 1 || n > NCCL_NET_MAX_REQUESTS || !data || !sizes)
		return ncclInvalidArgument;
	int tag0 = tags ? tags[0] : 0;
	uint64_t total = 0;
	for (int i = 0; i < n; i++)
		total += sizes[i];
	if (!(c->pend && c->pend_data == data[0] && c->pend_n == n && c->pend_tag == tag0 &&
	      c->pend_size == total)) {
		uint64_t ignored, now = 0;
		net_hook(NCCLBPF_NET_IRECV, &c->who, total, tag0, 0, &now, &ignored,
			 &c->pend_stamp);
		c->pend = 1;
		c->pend_data = data[0];
		c->pend_n = n;
		c->pend_tag = tag0;
		c->pend_size = total;
		c->pend_t0 = now;
	}
	struct nb_req *r = req_get(c);
	if (!r)
		return ncclSuccess;
	void *b = NULL;
	ncclResult_t res =
	    inner_on() ? net_inner.t->irecv(c->b, n, data, sizes, tags, mhandles, phandles, &b)
		       : tcp_irecv(c->b, n, data, sizes, tags, &b);
	r->bytes = total;
	r->tag = tag0;
	r->n = (uint8_t)n;
	r->op = RQ_RECV;
	return posted(c, r, res, b, request);
}

static ncclResult_t net_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
			       void **request)
{
	if (!request)
		return ncclInvalidArgument;
	*request = NULL;
	struct nb_comm *c = nb_get(recv_comm, NB_RECV);
	if (!c)
		return ncclInvalidArgument;
	if (!inner_on())
		return ncclSuccess; /* host memory: nothing to flush, no request */
	struct nb_req *r = req_get(c);
	if (!r)
		return ncclInternalError;
	void *b = NULL;
	ncclResult_t res = net_inner.t->iflush(c->b, n, data, sizes, mhandles, &b);
	if (res != ncclSuccess || !b) {
		r->used = 0;
		return res;
	}
	r->b = b;
	r->op = RQ_FLUSH;
	*request = r;
	return ncclSuccess;
}

static ncclResult_t net_test(void *request, int *done, int *sizes)
{
	if (!done)
		return ncclInvalidArgument;
	*done = 0;
	struct nb_req *r = req_valid(request);
	if (!r)
		return ncclInvalidArgument;
	int local[NCCL_NET_MAX_REQUESTS];
	ncclResult_t res = inner_on() ? net_inner.t->test(r->b, done, sizes ? sizes : local)
				      : tcp_test(r->b, done, sizes ? sizes : local);
	if (res != ncclSuccess || !*done)
		return res;
	struct nb_comm *c = r->c;
	if (r->op != RQ_FLUSH) {
		uint64_t bytes = r->bytes;
		uint32_t op = NCCLBPF_NET_COMPLETE;
		if (r->op == RQ_RECV) {
			/* What arrived, not what was posted. */
			const int *s = sizes ? sizes : local;
			op = NCCLBPF_NET_COMPLETE_RECV;
			bytes = 0;
			for (int i = 0; i < r->n; i++)
				bytes += (uint64_t)(s[i] < 0 ? 0 : s[i]);
		}
		/* Once per request: the first test() that sees it done. */
		net_complete(c->q, op, &c->who, bytes, r->tag, r->t0);
	}
	if (!(r->op == RQ_RECV && c->consumed_frees))
		r->used = 0;
	return ncclSuccess;
}

static ncclResult_t net_irecv_consumed(void *recv_comm, int n, void *request)
{
	struct nb_comm *c = nb_get(recv_comm, NB_RECV);
	struct nb_req *r = req_valid(request);
	if (!c || !r || !inner_on() || !net_inner.t->irecvConsumed)
		return ncclInvalidArgument;
	ncclResult_t res = net_inner.t->irecvConsumed(c->b, n, r->b);
	r->used = 0;
	return res;
}

static ncclResult_t net_set_attr(void *ctx, ncclNetAttr_v11_t *attr)
{
	struct net_ctx *x = ctx_get(ctx);
	if (!x)
		return ctx ? ncclInvalidArgument : ncclSuccess;
	if (inner_on() && net_inner.t->setNetAttr)
		return net_inner.t->setNetAttr(x->inner_ctx, attr);
	return ncclSuccess; /* hints only; our transport has nothing to adapt */
}

static ncclResult_t vdevice_v11(int *d, ncclNetVDeviceProps_v11_t *p)
{
	if (!d || !p || !inner_on() || !net_inner.t->makeVDevice)
		return ncclInvalidArgument;
	return net_inner_vdevice_v11(d, p);
}

static ncclResult_t vdevice_v12(int *d, ncclNetVDeviceProps_v12_t *p)
{
	if (!d || !p || !inner_on() || !net_inner.t->makeVDevice)
		return ncclInvalidArgument;
	return net_inner_vdevice_v12(d, p);
}

/* --- the tables --------------------------------------------------------------------------- */

/* Not const: the constructor fills the optional entries (NULL = "not supported" to NCCL)
 * exactly when a delegated plugin provides them. Our transport needs none of them. */
/* The entries both versions share: they differ in getProperties' layout only (and in
 * makeVDevice's, filled in below). */
#define NET_TABLE_SHARED                                                                           \
	.name = "NCCLbpf", .init = net_init, .devices = net_devices, .listen = net_listen,         \
	.connect = net_connect, .accept = net_accept, .regMr = net_reg_mr,                         \
	.deregMr = net_dereg_mr, .isend = net_isend, .irecv = net_irecv, .iflush = net_iflush,     \
	.test = net_test, .closeSend = net_close_send, .closeRecv = net_close_recv,                \
	.closeListen = net_close_listen, .finalize = net_finalize, .setNetAttr = net_set_attr

EXPORT ncclNet_v11_t ncclNetPlugin_v11 = {NET_TABLE_SHARED, .getProperties = props_v11};
EXPORT ncclNet_v12_t ncclNetPlugin_v12 = {NET_TABLE_SHARED, .getProperties = props_v12};

static void net_plugin_load(void)
{
	net_inner_load();
	const ncclNet_v12_t *t = net_inner.t;
	if (!t)
		return;
	if (t->regMrDmaBuf)
		ncclNetPlugin_v11.regMrDmaBuf = ncclNetPlugin_v12.regMrDmaBuf = net_reg_mr_dmabuf;
	if (t->getDeviceMr)
		ncclNetPlugin_v11.getDeviceMr = ncclNetPlugin_v12.getDeviceMr = net_get_device_mr;
	if (t->irecvConsumed)
		ncclNetPlugin_v11.irecvConsumed = ncclNetPlugin_v12.irecvConsumed =
		    net_irecv_consumed;
	if (t->makeVDevice) {
		ncclNetPlugin_v11.makeVDevice = vdevice_v11;
		ncclNetPlugin_v12.makeVDevice = vdevice_v12;
	}
}
