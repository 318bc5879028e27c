/* State shared by the TCP transport's files (net_tcp.h describes the design). */
#ifndef NCCLBPF_NET_TCP_INTERNAL_H
#define NCCLBPF_NET_TCP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net_tcp.h"

#define TCP_MAGIC	0x4e425046u /* "NBPF" on the wire and in handles */
#define TCP_MAX_SOCKS	17	    /* control socket + 16 data sockets */
#define TCP_MAX_THREADS 16
#define TCP_MAX_SUBS	NCCL_NET_MAX_REQUESTS /* buffers of one multi-receive */
#define TCP_MAX_REQS	64		      /* outstanding requests per comm (NCCL: <= 32) */
#define TCP_QCAP	1024		      /* chunk tasks queued per helper thread */

/* Hello, sent by the connector on every socket right after connecting. */
#define TCP_HELLO_REFUSED 0x1 /* the connector's policy refused this peer */
struct tcp_hello {
	uint32_t magic;
	uint16_t idx;	 /* which socket of the connection this is */
	uint16_t nsocks; /* sockets in the connection (1 + data sockets) */
	uint32_t flags;
	uint32_t min_chunk; /* split rule: chunk floor, bytes */
	uint64_t conn_id;   /* random, groups the sockets of one connection */
	uint64_t listen_id; /* from the handle: the listener this was meant for */
};

/* The acceptor's answer on the control socket. */
#define TCP_ACK_OK     1
#define TCP_ACK_DENIED 2
struct tcp_ack {
	uint32_t magic;
	uint32_t status;
};

/* Per message on the control socket, followed by the payload when it is not split. */
struct tcp_msg_hdr {
	uint64_t size;
	int32_t tag;
	uint32_t magic;
};

/* What listen writes into NCCL's handle (<= NCCL_NET_HANDLE_MAXSIZE). stage belongs to the
 * connecting side: NCCL calls connect again with the same handle memory until it returns a
 * comm, so the connection attempt in progress lives there (listen writes NULL). */
struct tcp_handle {
	uint32_t magic;
	uint16_t family;
	uint16_t port; /* network order */
	uint8_t addr[16];
	uint64_t listen_id;
	struct tcp_connecting *stage;
};
_Static_assert(sizeof(struct tcp_handle) <= NCCL_NET_HANDLE_MAXSIZE, "handle fits NCCL's");

struct tcp_comm;

struct tcp_req {
	struct tcp_comm *comm;
	int used;
	int is_send;
	int n;		    /* buffers (1 for a send) */
	int matched;	    /* messages whose header has been processed */
	int queued;	    /* still in the comm's FIFO (control socket not done with it) */
	_Atomic int chunks; /* helper chunks not yet moved */
	_Atomic int error;  /* a helper failed on this request */
	void *data[TCP_MAX_SUBS];
	size_t cap[TCP_MAX_SUBS]; /* send: size; recv: posted size */
	size_t got[TCP_MAX_SUBS]; /* recv: size the sender sent */
	int tags[TCP_MAX_SUBS];
	uint8_t filled[TCP_MAX_SUBS];
	/* send: header of this message (written with the payload in one sendmsg) */
	struct tcp_msg_hdr hdr;
	size_t off; /* send: bytes of header + inline payload written */
};

struct tcp_task {
	int fd;
	int is_send;
	char *buf;
	size_t len;
	struct tcp_req *req;
};

struct tcp_worker {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct tcp_task q[TCP_QCAP];
	unsigned head, tail; /* under mu */
	int stop;
	int started;
	struct tcp_comm *comm;
};

struct tcp_comm {
	uint32_t magic;
	int is_send;
	int dev;
	int nsocks; /* 1 + data sockets */
	int fds[TCP_MAX_SOCKS];
	size_t min_chunk;
	struct tcp_peer peer;
	_Atomic int error; /* sticky ncclResult_t of the first failure, 0 none */
	int warned;
	/* FIFO of requests the control socket still has to serve, in posting order. */
	struct tcp_req *fifo[TCP_MAX_REQS];
	unsigned fhead, ftail;
	/* receive side: header being read, payload being read inline */
	struct tcp_msg_hdr rhdr;
	size_t rhdr_off;
	int r_inline; /* 1 while the payload of rreq->data[ridx] is read inline */
	struct tcp_req *rreq;
	int ridx;
	size_t roff;
	int nthreads;
	struct tcp_worker *workers;
	struct tcp_req reqs[TCP_MAX_REQS];
};

/* Number of chunks a message of size bytes is cut into (0: inline on the control socket) and
 * the chunk size. Depends only on values both ends agree on. */
static inline int tcp_split(const struct tcp_comm *c, size_t size, size_t *chunk)
{
	int ndata = c->nsocks - 1;
	if (ndata <= 0 || size < c->min_chunk)
		return 0;
	size_t k = size / c->min_chunk;
	if (k > (size_t)ndata)
		k = (size_t)ndata;
	if (k < 1)
		k = 1;
	size_t cs = (size + k - 1) / k;
	cs = (cs + 4095) & ~(size_t)4095; /* page-sized chunks */
	*chunk = cs;
	return (int)((size + cs - 1) / cs);
}

/* Environment, read once (net_tcp_if.c). */
struct tcp_config {
	int nsocks;	  /* total sockets per connection */
	int nthreads;	  /* helper threads per connection */
	size_t min_chunk; /* split floor */
	int maxrecvs;	  /* multi-receive width advertised */
	int hello_ms;	  /* an accepted socket's time to complete its connection's set-up */
};
const struct tcp_config *tcp_config(void);

/* The handle (net_tcp_handle.c): the listener's address in *ss after every check that can be
 * made; -1 with *why (may be NULL) saying which failed. */
int tcp_handle_parse(const struct tcp_handle *h, struct sockaddr_storage *ss, unsigned *len,
		     const char **why);
/* Connection attempts in progress (a handle's stage): only a known one is ever dereferenced. */
int tcp_stage_add(const void *stage); /* 0 or -ENOMEM */
int tcp_stage_known(const void *stage);
void tcp_stage_remove(const void *stage);

/* Connection set-up finished: builds the comm around the sockets (takes ownership of fds). */
struct tcp_comm *tcp_comm_new(int is_send, int dev, const int *fds, int nsocks, size_t min_chunk,
			      const struct tcp_peer *peer);
void tcp_peer_from_sockaddr(const void *sa, struct tcp_peer *out);
int tcp_set_nonblock(int fd, int on);

#endif
