/* Connection set-up of the TCP transport: listen, non-blocking connect and accept.
 *
 * connect (called again by NCCL until it returns a comm): asks the admit callback about the
 * listener, starts a non-blocking connect() per socket, sends a hello on each (connection id,
 * socket index, socket count, split rule), then waits for the acceptor's one answer on the
 * control socket. accept (also called again until done): takes pending sockets into a bounded
 * queue (net_tcp_pending.h: deadline, per-address cap, oldest idle out when full), reads
 * hellos, groups sockets by connection id and, once a connection is complete,
 * asks the admit callback about the connector and answers OK or DENIED. A refusal on either
 * side reaches the other one, so both calls fail instead of one side waiting forever. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net_log.h"
#include "net_tcp_internal.h"
#include "net_tcp_pending.h"

/* Sockets one accept call takes from the kernel's backlog: a peer connecting as fast as we
 * accept cannot keep the call from returning. */
#define ACCEPT_BURST (2 * TCP_PENDING_MAX)

struct tcp_connecting {
	int nsocks;
	int fds[TCP_MAX_SOCKS];
	int connected[TCP_MAX_SOCKS];
	int stage; /* 1 connecting, 2 waiting for the answer */
	int refused;
	uint64_t conn_id;
	struct tcp_ack ack;
	size_t ack_off;
	struct tcp_peer peer;
	size_t min_chunk;
};

struct tcp_listen {
	uint32_t magic;
	int fd;
	int dev;
	uint64_t listen_id;
	struct tcp_pending_queue pend;
};

#define LISTEN_MAGIC 0x4c425046u

static uint64_t random_id(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		v = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
	}
	return v | 1; /* never 0 */
}

/* Small control messages on a fresh socket: the send buffer is empty, so a short blocking
 * write cannot stall; MSG_NOSIGNAL keeps a dead peer from raising SIGPIPE. */
static int send_small(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			if (poll(&pfd, 1, 1000) <= 0)
				return -1;
			continue;
		}
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void tune_socket(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* --- listen ------------------------------------------------------------------------------ */

ncclResult_t tcp_listen(int dev, void *handle, void **listen_comm)
{
	if (!listen_comm)
		return ncclInvalidArgument;
	*listen_comm = NULL;
	struct sockaddr_storage ss;
	unsigned len = 0;
	if (!handle || tcp_dev_addr(dev, &ss, &len))
		return ncclInvalidArgument;
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = 0;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ncclSystemError;
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 256) ||
	    getsockname(fd, (struct sockaddr *)&ss, &(socklen_t){sizeof(ss)})) {
		net_warn("NET/NCCLbpf: listen on device %d failed: %s", dev, strerror(errno));
		close(fd);
		return ncclSystemError;
	}
	struct tcp_listen *l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return ncclSystemError;
	}
	l->magic = LISTEN_MAGIC;
	l->fd = fd;
	l->dev = dev;
	l->listen_id = random_id();
	struct tcp_handle *h = handle;
	memset(h, 0, NCCL_NET_HANDLE_MAXSIZE);
	h->magic = TCP_MAGIC;
	h->family = ss.ss_family;
	if (ss.ss_family == AF_INET) {
		h->port = ((struct sockaddr_in *)&ss)->sin_port;
		memcpy(h->addr, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else {
		h->port = ((struct sockaddr_in6 *)&ss)->sin6_port;
		memcpy(h->addr, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	}
	h->listen_id = l->listen_id;
	h->stage = NULL;
	*listen_comm = l;
	return ncclSuccess;
}

/* --- connect ----------------------------------------------------------------------------- */

/* The attempt is over; its sockets are closed unless a comm took them (keep_fds). */
static void connecting_free(struct tcp_connecting *s, int keep_fds)
{
	tcp_stage_remove(s);
	for (int i = 0; i < s->nsocks && !keep_fds; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	free(s);
}

static ncclResult_t connect_fail(struct tcp_handle *h, ncclResult_t r)
{
	connecting_free(h->stage, 0);
	h->stage = NULL;
	return r;
}

ncclResult_t tcp_connect(int dev, void *handle, void **send_comm, tcp_admit_fn admit, void *arg)
{
	if (!send_comm)
		return ncclInvalidArgument;
	*send_comm = NULL;
	struct tcp_handle *h = handle;
	struct sockaddr_storage ss;
	unsigned len;
	const char *why = "none";
	if (!h || tcp_handle_parse(h, &ss, &len, &why)) {
		net_warn("NET/NCCLbpf: connect: invalid handle: %s", why);
		return ncclInvalidArgument;
	}
	if (dev < 0 || dev >= tcp_devices()) {
		net_warn("NET/NCCLbpf: connect: invalid device %d", dev);
		return ncclInvalidArgument;
	}
	struct tcp_connecting *s = h->stage;
	if (!s) {
		const struct tcp_config *cfg = tcp_config();
		s = calloc(1, sizeof(*s));
		if (!s || tcp_stage_add(s)) {
			free(s);
			return ncclSystemError;
		}
		for (int i = 0; i < TCP_MAX_SOCKS; i++)
			s->fds[i] = -1;
		h->stage = s;
		tcp_peer_from_sockaddr(&ss, &s->peer);
		s->refused = admit && !admit(arg, &s->peer);
		/* A refusal still reaches the listener (one socket, flagged hello). */
		s->nsocks = s->refused ? 1 : cfg->nsocks;
		s->min_chunk = cfg->min_chunk;
		s->conn_id = random_id();
		for (int i = 0; i < s->nsocks; i++) {
			s->fds[i] =
			    socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			if (s->fds[i] < 0)
				return connect_fail(h, ncclSystemError);
			tune_socket(s->fds[i]);
			if (connect(s->fds[i], (struct sockaddr *)&ss, len) &&
			    errno != EINPROGRESS) {
				net_warn("NET/NCCLbpf: connect failed: %s", strerror(errno));
				return connect_fail(h, ncclRemoteError);
			}
		}
		s->stage = 1;
	}
	if (s->stage == 1) {
		for (int i = 0; i < s->nsocks; i++) {
			if (s->connected[i])
				continue;
			struct pollfd pfd = {.fd = s->fds[i], .events = POLLOUT};
			if (poll(&pfd, 1, 0) <= 0)
				return ncclSuccess; /* not yet: NCCL calls again */
			int err = 0;
			getsockopt(s->fds[i], SOL_SOCKET, SO_ERROR, &err,
				   &(socklen_t){sizeof(err)});
			if (err) {
				net_warn("NET/NCCLbpf: connect failed: %s", strerror(err));
				return connect_fail(h, ncclRemoteError);
			}
			s->connected[i] = 1;
		}
		for (int i = 0; i < s->nsocks; i++) {
			struct tcp_hello hello = {
			    .magic = TCP_MAGIC,
			    .idx = (uint16_t)i,
			    .nsocks = (uint16_t)s->nsocks,
			    .flags = s->refused ? TCP_HELLO_REFUSED : 0,
			    .min_chunk = (uint32_t)s->min_chunk,
			    .conn_id = s->conn_id,
			    .listen_id = h->listen_id,
			};
			if (send_small(s->fds[i], &hello, sizeof(hello)))
				return connect_fail(h, ncclRemoteError);
		}
		if (s->refused)
			return connect_fail(h, ncclSystemError);
		s->stage = 2;
	}
	/* stage 2: the acceptor's answer */
	while (s->ack_off < sizeof(s->ack)) {
		ssize_t n = recv(s->fds[0], (char *)&s->ack + s->ack_off,
				 sizeof(s->ack) - s->ack_off, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return ncclSuccess;
		if (n <= 0) {
			net_warn("NET/NCCLbpf: connect: peer closed the connection during set-up");
			return connect_fail(h, ncclRemoteError);
		}
		s->ack_off += (size_t)n;
	}
	if (s->ack.magic != TCP_MAGIC || s->ack.status != TCP_ACK_OK) {
		if (s->ack.status == TCP_ACK_DENIED)
			net_warn("NET/NCCLbpf: connect: the peer's policy refused this connection");
		return connect_fail(h, s->ack.status == TCP_ACK_DENIED ? ncclRemoteError
								       : ncclInternalError);
	}
	struct tcp_comm *c = tcp_comm_new(1, dev, s->fds, s->nsocks, s->min_chunk, &s->peer);
	if (!c)
		return connect_fail(h, ncclSystemError);
	connecting_free(s, 1); /* the comm owns the sockets now */
	h->stage = NULL;
	*send_comm = c;
	return ncclSuccess;
}

/* --- accept ------------------------------------------------------------------------------ */

/* A hello this listener can accept: ours, for this listener, a socket count and index that
 * make sense, known flags and a split rule within what a connector may announce. */
static int hello_valid(const struct tcp_hello *h, uint64_t listen_id)
{
	return h->magic == TCP_MAGIC && h->listen_id == listen_id && h->nsocks >= 1 &&
	       h->nsocks <= TCP_MAX_SOCKS && h->idx < h->nsocks &&
	       !(h->flags & ~(uint32_t)TCP_HELLO_REFUSED) && h->min_chunk >= 4096 &&
	       h->min_chunk <= (1u << 30) && h->conn_id != 0;
}

/* Reads what has arrived of each pending socket's hello; drops sockets that failed or sent
 * one that is not valid for this listener. */
static void read_hellos(struct tcp_listen *l)
{
	struct tcp_pending_queue *q = &l->pend;
	for (int i = 0; i < q->n; i++) {
		struct tcp_pending *p = &q->e[i];
		while (p->off < sizeof(p->h)) {
			ssize_t n = recv(p->fd, (char *)&p->h + p->off, sizeof(p->h) - p->off,
					 MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
				break;
			if (n <= 0) {
				p->off = (size_t)-1;
				break;
			}
			p->off += (size_t)n;
		}
		if (p->off == (size_t)-1 ||
		    (p->off == sizeof(p->h) && !hello_valid(&p->h, l->listen_id)))
			tcp_pending_drop(q, i--, TCP_DROP_BAD);
	}
}

ncclResult_t tcp_accept(void *listen_comm, void **recv_comm, tcp_admit_fn admit, void *arg)
{
	if (!recv_comm)
		return ncclInvalidArgument;
	*recv_comm = NULL;
	struct tcp_listen *l = listen_comm;
	if (!l || l->magic != LISTEN_MAGIC)
		return ncclInvalidArgument;
	struct tcp_pending_queue *q = &l->pend;
	uint64_t now = tcp_now_ns();
	tcp_pending_expire(q, now, tcp_config()->hello_ms);
	for (int k = 0; k < ACCEPT_BURST; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			break;
		struct tcp_peer from;
		tcp_peer_from_sockaddr(&ss, &from);
		tune_socket(fd);
		tcp_pending_add(q, fd, &from, now);
	}
	read_hellos(l);
	/* A complete connection: every index 0..nsocks-1 of one conn_id present. */
	for (int i = 0; i < q->n; i++) {
		struct tcp_pending *p = &q->e[i];
		if (p->off != sizeof(p->h) || p->h.idx != 0)
			continue;
		int nsocks = p->h.nsocks, fds[TCP_MAX_SOCKS], have = 0, slots[TCP_MAX_SOCKS];
		for (int k = 0; k < nsocks; k++)
			fds[k] = -1;
		for (int j = 0; j < q->n; j++) {
			struct tcp_pending *o = &q->e[j];
			if (o->off == sizeof(o->h) && o->h.conn_id == p->h.conn_id &&
			    o->h.nsocks == nsocks && fds[o->h.idx] < 0) {
				fds[o->h.idx] = o->fd;
				slots[have++] = j;
			}
		}
		if (have < nsocks)
			continue;
		struct tcp_peer peer;
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		memset(&peer, 0, sizeof(peer));
		if (!getpeername(fds[0], (struct sockaddr *)&ss, &sl))
			tcp_peer_from_sockaddr(&ss, &peer);
		int refused_by_peer = p->h.flags & TCP_HELLO_REFUSED;
		int denied = !refused_by_peer && admit && !admit(arg, &peer);
		size_t min_chunk = p->h.min_chunk;
		struct tcp_ack ack = {.magic = TCP_MAGIC,
				      .status = denied ? TCP_ACK_DENIED : TCP_ACK_OK};
		int sent = refused_by_peer ? 0 : send_small(fds[0], &ack, sizeof(ack)) == 0;
		/* Remove the group from the pending queue (highest slot first keeps indices). */
		for (int a = 0; a < have; a++)
			for (int b = a + 1; b < have; b++)
				if (slots[b] > slots[a]) {
					int t = slots[a];
					slots[a] = slots[b];
					slots[b] = t;
				}
		for (int a = 0; a < have; a++)
			tcp_pending_take(q, slots[a]);
		if (refused_by_peer || denied || !sent) {
			for (int k = 0; k < nsocks; k++)
				close(fds[k]);
			if (refused_by_peer)
				net_warn(
				    "NET/NCCLbpf: accept: the connecting peer's policy refused "
				    "this connection");
			return refused_by_peer ? ncclRemoteError
			       : denied	       ? ncclSystemError
					       : ncclRemoteError;
		}
		struct tcp_comm *c = tcp_comm_new(0, l->dev, fds, nsocks, min_chunk, &peer);
		if (!c) {
			for (int k = 0; k < nsocks; k++)
				close(fds[k]);
			return ncclSystemError;
		}
		*recv_comm = c;
		return ncclSuccess;
	}
	return ncclSuccess;
}

ncclResult_t tcp_close_listen(void *listen_comm)
{
	struct tcp_listen *l = listen_comm;
	if (!l || l->magic != LISTEN_MAGIC)
		return l ? ncclInvalidArgument : ncclSuccess;
	tcp_pending_close_all(&l->pend);
	close(l->fd);
	l->magic = 0;
	free(l);
	return ncclSuccess;
}
