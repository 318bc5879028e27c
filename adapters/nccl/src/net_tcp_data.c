/* Data path of the TCP transport: tagged isend/irecv with multi-receive, test, helper threads,
 * memory registration and close (net_tcp.h describes the design). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "net_log.h"
#include "net_tcp_internal.h"

#define COMM_MAGIC 0x43425046u
#define MR_MAGIC   0x4d425046u

struct tcp_mr {
	uint32_t magic;
	void *base;
	size_t size;
};

/* --- failures ---------------------------------------------------------------------------- */

/* Records the first failure of a connection (sticky: every later test reports it). */
static void comm_fail(struct tcp_comm *c, ncclResult_t r, const char *what, int err)
{
	int expected = 0;
	if (atomic_compare_exchange_strong(&c->error, &expected, (int)r)) {
		/* Once per connection: the first failure names the cause. */
		net_warn("NET/NCCLbpf: %s connection (device %d): %s%s%s",
			 c->is_send ? "send" : "receive", c->dev, what, err ? ": " : "",
			 err ? strerror(err) : "");
	}
}

/* EOF or reset: the peer is gone (killed, or closed early). */
static ncclResult_t io_error(int err)
{
	return (err == 0 || err == ECONNRESET || err == EPIPE || err == ETIMEDOUT ||
		err == ENOTCONN || err == ESHUTDOWN)
		   ? ncclRemoteError
		   : ncclSystemError;
}

/* --- helper threads ---------------------------------------------------------------------- */

/* Moves one chunk with blocking I/O; returns 0 or the errno (0 for EOF mapped to ECONNRESET). */
static int move_chunk(const struct tcp_task *t)
{
	char *p = t->buf;
	size_t left = t->len;
	while (left) {
		ssize_t n = t->is_send ? send(t->fd, p, left, MSG_NOSIGNAL)
				       : recv(t->fd, p, left, MSG_WAITALL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno ? errno : EIO;
		if (n == 0)
			return ECONNRESET;
		p += n;
		left -= (size_t)n;
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct tcp_worker *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (w->head == w->tail && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->head == w->tail) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		struct tcp_task t = w->q[w->head % TCP_QCAP];
		pthread_mutex_unlock(&w->mu);
		int stopping = __atomic_load_n(&w->stop, __ATOMIC_RELAXED);
		int err = stopping ? ESHUTDOWN : move_chunk(&t);
		if (err) {
			atomic_store(&t.req->error, 1);
			if (!stopping && !__atomic_load_n(&w->stop, __ATOMIC_RELAXED))
				comm_fail(w->comm, io_error(err == ECONNRESET ? 0 : err),
					  err == ECONNRESET ? "peer closed the connection"
							    : "data socket failed",
					  err == ECONNRESET ? 0 : err);
		}
		pthread_mutex_lock(&w->mu);
		w->head++;
		pthread_mutex_unlock(&w->mu);
		/* Release: the payload (receive) is in the buffer before the count drops. */
		atomic_fetch_sub_explicit(&t.req->chunks, 1, memory_order_release);
	}
	return NULL;
}

static void worker_push(struct tcp_worker *w, const struct tcp_task *t)
{
	pthread_mutex_lock(&w->mu);
	while (w->tail - w->head >= TCP_QCAP) {
		/* Full (far beyond what NCCL keeps in flight): the thread drains it. */
		pthread_mutex_unlock(&w->mu);
		sched_yield();
		pthread_mutex_lock(&w->mu);
	}
	w->q[w->tail % TCP_QCAP] = *t;
	w->tail++;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Cuts a message into its chunks and hands chunk i to the thread of data socket i + 1. */
static void queue_chunks(struct tcp_comm *c, struct tcp_req *r, char *buf, size_t size)
{
	size_t cs;
	int k = tcp_split(c, size, &cs);
	atomic_fetch_add_explicit(&r->chunks, k, memory_order_relaxed);
	for (int i = 0; i < k; i++) {
		size_t off = (size_t)i * cs;
		struct tcp_task t = {.fd = c->fds[1 + i],
				     .is_send = c->is_send,
				     .buf = buf + off,
				     .len = size - off < cs ? size - off : cs,
				     .req = r};
		worker_push(&c->workers[i % c->nthreads], &t);
	}
}

/* --- comm lifetime ----------------------------------------------------------------------- */

struct tcp_comm *tcp_comm_new(int is_send, int dev, const int *fds, int nsocks, size_t min_chunk,
			      const struct tcp_peer *peer)
{
	struct tcp_comm *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->magic = COMM_MAGIC;
	c->is_send = is_send;
	c->dev = dev;
	c->nsocks = nsocks;
	c->min_chunk = min_chunk;
	c->peer = *peer;
	for (int i = 0; i < TCP_MAX_SOCKS; i++)
		c->fds[i] = i < nsocks ? fds[i] : -1;
	tcp_set_nonblock(fds[0], 1);
	for (int i = 1; i < nsocks; i++)
		tcp_set_nonblock(fds[i], 0); /* helper threads block */
	if (nsocks > 1) {
		int nt = tcp_config()->nthreads;
		c->nthreads = nt < 1 ? 1 : nt > nsocks - 1 ? nsocks - 1 : nt;
		c->workers = calloc((size_t)c->nthreads, sizeof(*c->workers));
		if (!c->workers) {
			free(c);
			return NULL;
		}
		for (int i = 0; i < c->nthreads; i++) {
			struct tcp_worker *w = &c->workers[i];
			pthread_mutex_init(&w->mu, NULL);
			pthread_cond_init(&w->cv, NULL);
			w->comm = c;
			w->started = pthread_create(&w->thread, NULL, worker_main, w) == 0;
			if (!w->started) {
				c->nthreads = i; /* fewer threads still serve every socket */
				break;
			}
		}
		if (!c->nthreads) {
			free(c->workers);
			free(c);
			return NULL;
		}
	}
	return c;
}

ncclResult_t tcp_close_comm(void *comm)
{
	struct tcp_comm *c = comm;
	if (!c)
		return ncclSuccess;
	if (c->magic != COMM_MAGIC)
		return ncclInvalidArgument;
	/* Wake helpers blocked in I/O (a hung or dead peer), then stop and join them. */
	for (int i = 1; i < c->nsocks; i++)
		shutdown(c->fds[i], SHUT_RDWR);
	for (int i = 0; i < c->nthreads; i++) {
		struct tcp_worker *w = &c->workers[i];
		pthread_mutex_lock(&w->mu);
		__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	for (int i = 0; i < c->nthreads; i++) {
		pthread_join(c->workers[i].thread, NULL);
		pthread_mutex_destroy(&c->workers[i].mu);
		pthread_cond_destroy(&c->workers[i].cv);
	}
	for (int i = 0; i < c->nsocks; i++)
		close(c->fds[i]);
	free(c->workers);
	c->magic = 0;
	free(c);
	return ncclSuccess;
}

void tcp_comm_peer(const void *comm, struct tcp_peer *out)
{
	const struct tcp_comm *c = comm;
	if (c && c->magic == COMM_MAGIC)
		*out = c->peer;
	else
		memset(out, 0, sizeof(*out));
}

/* --- memory registration ----------------------------------------------------------------- */

ncclResult_t tcp_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	if (!mhandle)
		return ncclInvalidArgument;
	*mhandle = NULL;
	if (type != NCCL_PTR_HOST) {
		/* ptrSupport says host only; NCCL stages device memory through host buffers. */
		static int warned;
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			net_warn("NET/NCCLbpf: regMr of non-host memory (type %d) refused: this "
				 "transport moves host memory only",
				 type);
		return ncclInternalError;
	}
	(void)comm;
	struct tcp_mr *m = malloc(sizeof(*m));
	if (!m)
		return ncclSystemError;
	*m = (struct tcp_mr){.magic = MR_MAGIC, .base = data, .size = size};
	*mhandle = m;
	return ncclSuccess;
}

ncclResult_t tcp_dereg_mr(void *comm, void *mhandle)
{
	(void)comm;
	struct tcp_mr *m = mhandle;
	if (!m)
		return ncclSuccess;
	if (m->magic != MR_MAGIC)
		return ncclInvalidArgument;
	m->magic = 0;
	free(m);
	return ncclSuccess;
}

/* --- requests ---------------------------------------------------------------------------- */

static struct tcp_req *req_get(struct tcp_comm *c)
{
	for (int i = 0; i < TCP_MAX_REQS; i++) {
		struct tcp_req *r = &c->reqs[i];
		if (!r->used) {
			memset(r, 0, offsetof(struct tcp_req, data));
			r->used = 1;
			r->comm = c;
			return r;
		}
	}
	return NULL;
}

static int fifo_push(struct tcp_comm *c, struct tcp_req *r)
{
	if (c->ftail - c->fhead >= TCP_MAX_REQS)
		return -1;
	c->fifo[c->ftail++ % TCP_MAX_REQS] = r;
	r->queued = 1;
	return 0;
}

/* Drives the control socket of a send comm: header (+ inline payload) of each queued message
 * in order; a split message's chunks go to the helpers once its header is out. */
static void progress_send(struct tcp_comm *c)
{
	while (c->fhead != c->ftail && !atomic_load_explicit(&c->error, memory_order_relaxed)) {
		struct tcp_req *r = c->fifo[c->fhead % TCP_MAX_REQS];
		size_t size = r->cap[0], cs;
		int split = tcp_split(c, size, &cs) > 0;
		size_t total = sizeof(r->hdr) + (split ? 0 : size);
		while (r->off < total) {
			struct iovec iov[2];
			int n = 0;
			if (r->off < sizeof(r->hdr))
				iov[n++] = (struct iovec){(char *)&r->hdr + r->off,
							  sizeof(r->hdr) - r->off};
			size_t poff = r->off > sizeof(r->hdr) ? r->off - sizeof(r->hdr) : 0;
			if (!split && size > poff)
				iov[n++] = (struct iovec){(char *)r->data[0] + poff, size - poff};
			struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
			ssize_t w = sendmsg(c->fds[0], &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
				return;
			if (w <= 0) {
				int e = w < 0 ? errno : 0;
				comm_fail(c, io_error(e), "send failed", e);
				return;
			}
			r->off += (size_t)w;
		}
		if (split)
			queue_chunks(c, r, r->data[0], size);
		r->matched = 1;
		r->queued = 0;
		c->fhead++;
	}
}

/* Reads into buf without blocking: >0 bytes, 0 would block, -1 failed (recorded). */
static ssize_t read_some(struct tcp_comm *c, void *buf, size_t len)
{
	ssize_t n = recv(c->fds[0], buf, len, MSG_DONTWAIT);
	if (n > 0)
		return n;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	int e = n < 0 ? errno : 0;
	comm_fail(c, io_error(e), e ? "receive failed" : "peer closed the connection", e);
	return -1;
}

/* Drives the control socket of a receive comm: next header, match it to a buffer of the oldest
 * posted receive (by tag when it has several), then the inline payload or the chunks. */
static void progress_recv(struct tcp_comm *c)
{
	while (c->fhead != c->ftail && !atomic_load_explicit(&c->error, memory_order_relaxed)) {
		struct tcp_req *r = c->fifo[c->fhead % TCP_MAX_REQS];
		if (c->r_inline) {
			size_t want = r->got[c->ridx] - c->roff;
			ssize_t n = read_some(c, (char *)r->data[c->ridx] + c->roff, want);
			if (n <= 0)
				return;
			c->roff += (size_t)n;
			if (c->roff < r->got[c->ridx])
				continue;
			c->r_inline = 0;
		} else {
			ssize_t n = read_some(c, (char *)&c->rhdr + c->rhdr_off,
					      sizeof(c->rhdr) - c->rhdr_off);
			if (n <= 0)
				return;
			c->rhdr_off += (size_t)n;
			if (c->rhdr_off < sizeof(c->rhdr))
				continue;
			c->rhdr_off = 0;
			if (c->rhdr.magic != TCP_MAGIC) {
				comm_fail(c, ncclInternalError, "corrupt message header", 0);
				return;
			}
			int idx = -1;
			for (int i = 0; i < r->n && idx < 0; i++)
				if (!r->filled[i] && (r->n == 1 || r->tags[i] == c->rhdr.tag))
					idx = i;
			if (idx < 0) {
				comm_fail(c, ncclInternalError,
					  "message tag matches no posted buffer", 0);
				return;
			}
			if (c->rhdr.size > r->cap[idx]) {
				comm_fail(c, ncclInternalError,
					  "message larger than the posted buffer (truncated)", 0);
				return;
			}
			r->filled[idx] = 1;
			r->got[idx] = c->rhdr.size;
			size_t cs;
			if (tcp_split(c, c->rhdr.size, &cs) > 0) {
				queue_chunks(c, r, r->data[idx], c->rhdr.size);
			} else if (c->rhdr.size > 0) {
				c->r_inline = 1;
				c->ridx = idx;
				c->roff = 0;
				continue;
			}
		}
		if (++r->matched == r->n) {
			r->queued = 0;
			c->fhead++;
		}
	}
}

static void progress(struct tcp_comm *c)
{
	if (c->is_send)
		progress_send(c);
	else
		progress_recv(c);
}

/* The start of a post, send or receive: a free request slot of a healthy comm, or NULL with *rc
 * the comm's error, or ncclSuccess when every slot is busy (NCCL calls again). */
static struct tcp_req *post_begin(struct tcp_comm *c, ncclResult_t *rc)
{
	int e = atomic_load(&c->error);
	*rc = (ncclResult_t)e;
	return e ? NULL : req_get(c);
}

/* The end of a post: the request is queued in order and progressed at once; a full queue gives
 * the slot back with *request still NULL (NCCL calls again). */
static ncclResult_t post_end(struct tcp_comm *c, struct tcp_req *r, void **request)
{
	if (fifo_push(c, r)) {
		r->used = 0;
		return ncclSuccess;
	}
	progress(c);
	*request = r;
	return ncclSuccess;
}

ncclResult_t tcp_isend(void *send_comm, void *data, size_t size, int tag, void **request)
{
	struct tcp_comm *c = send_comm;
	if (!request)
		return ncclInvalidArgument;
	*request = NULL;
	if (!c || c->magic != COMM_MAGIC || !c->is_send || (size && !data))
		return ncclInvalidArgument;
	ncclResult_t rc;
	struct tcp_req *r = post_begin(c, &rc);
	if (!r)
		return rc;
	r->is_send = 1;
	r->n = 1;
	r->data[0] = data;
	r->cap[0] = size;
	r->tags[0] = tag;
	r->hdr = (struct tcp_msg_hdr){.size = size, .tag = tag, .magic = TCP_MAGIC};
	r->off = 0;
	return post_end(c, r, request);
}

ncclResult_t tcp_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
		       void **request)
{
	struct tcp_comm *c = recv_comm;
	if (!request)
		return ncclInvalidArgument;
	*request = NULL;
	if (!c || c->magic != COMM_MAGIC || c->is_send || n < 1 || n > TCP_MAX_SUBS || !data ||
	    !sizes || (n > 1 && !tags))
		return ncclInvalidArgument;
	ncclResult_t rc;
	struct tcp_req *r = post_begin(c, &rc);
	if (!r)
		return rc;
	r->is_send = 0;
	r->n = n;
	for (int i = 0; i < n; i++) {
		r->data[i] = data[i];
		r->cap[i] = data[i] ? sizes[i] : 0;
		r->tags[i] = tags ? tags[i] : 0;
		r->got[i] = 0;
		r->filled[i] = 0;
	}
	return post_end(c, r, request);
}

ncclResult_t tcp_test(void *request, int *done, int *sizes)
{
	struct tcp_req *r = request;
	if (!done)
		return ncclInvalidArgument;
	*done = 0;
	if (!r || !r->used || !r->comm || r->comm->magic != COMM_MAGIC)
		return ncclInvalidArgument;
	struct tcp_comm *c = r->comm;
	progress(c);
	int e = atomic_load(&c->error);
	if (e)
		return (ncclResult_t)e;
	if (r->queued || atomic_load_explicit(&r->chunks, memory_order_acquire) > 0)
		return ncclSuccess;
	if (atomic_load(&r->error))
		return ncclRemoteError;
	if (sizes)
		for (int i = 0; i < r->n; i++)
			sizes[i] = (int)(r->is_send ? r->cap[i] : r->got[i]);
	*done = 1;
	r->used = 0;
	return ncclSuccess;
}
