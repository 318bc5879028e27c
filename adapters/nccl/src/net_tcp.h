/* Our TCP transport for NCCL's net plugin interface (host memory only: NCCL stages GPU data
 * through host buffers for a transport whose ptrSupport is NCCL_PTR_HOST).
 *
 * Each connection has one control socket (message headers, and the payload of messages below
 * the split size, driven inline by the caller's thread with non-blocking I/O, so small messages
 * cost no thread hand-off) and NCCLBPF_NET_NSOCKS - 1 data sockets. A message at or above the
 * split size is cut into one chunk per data socket; helper threads (NCCLBPF_NET_NTHREADS per
 * connection) move the chunks with blocking I/O, in message order on both sides, so the peers
 * never wait on each other in a cycle. The split rule is a function of the message size and of
 * values the connector sends in its hello, hence identical on both ends.
 *
 * Threading (docs/design.md §6.10): listen/connect/accept/regMr run on NCCL's proxy service
 * thread, isend/irecv/test on its progress thread; one connection is used by one thread at a
 * time, helper threads touch only data sockets and atomics. Every function returns a defined
 * ncclResult_t and never blocks indefinitely (connect/accept return with *comm NULL until
 * done). A dead peer turns into ncclRemoteError from test(); SIGPIPE is never raised
 * (MSG_NOSIGNAL). */
#ifndef NCCLBPF_NET_TCP_H
#define NCCLBPF_NET_TCP_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_net.h"

/* Who is at the other end, as far as the transport knows it (hooks' context). */
struct tcp_peer {
	uint32_t addr[4]; /* IPv4 in [0] (network order), or IPv6 */
	uint32_t port;	  /* host order */
	int family;	  /* AF_INET, AF_INET6, 0 unknown */
};

/* Asked once per connection, before any byte of payload moves: connect asks about the
 * listener it is about to reach, accept about the connector that reached it. Returns 1 to
 * admit, 0 to refuse; a refusal is sent to the other side, so both fail cleanly. */
typedef int (*tcp_admit_fn)(void *arg, const struct tcp_peer *peer);

/* Interfaces (net_tcp_if.c). Discovery happens once per process; returns the device count. */
int tcp_devices(void);
ncclResult_t tcp_get_properties(int dev, ncclNetProperties_v12_t *props);
/* The address of device dev; 0 or -1 when there is no such device. */
int tcp_dev_addr(int dev, void *sockaddr_storage_out, unsigned *len);

/* Connections (net_tcp_conn.c). */
ncclResult_t tcp_listen(int dev, void *handle, void **listen_comm);
ncclResult_t tcp_connect(int dev, void *handle, void **send_comm, tcp_admit_fn admit, void *arg);
ncclResult_t tcp_accept(void *listen_comm, void **recv_comm, tcp_admit_fn admit, void *arg);
ncclResult_t tcp_close_listen(void *listen_comm);
/* The peer of a connected comm. */
void tcp_comm_peer(const void *comm, struct tcp_peer *out);
/* The peer a handle points at (before connecting). */
int tcp_handle_peer(const void *handle, struct tcp_peer *out);

/* Data (net_tcp_data.c). *request NULL with ncclSuccess: no request slot free, call again. */
ncclResult_t tcp_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
ncclResult_t tcp_dereg_mr(void *comm, void *mhandle);
ncclResult_t tcp_isend(void *send_comm, void *data, size_t size, int tag, void **request);
ncclResult_t tcp_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
		       void **request);
ncclResult_t tcp_test(void *request, int *done, int *sizes);
ncclResult_t tcp_close_comm(void *comm);

#endif
