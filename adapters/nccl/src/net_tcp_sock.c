/* Socket utilities of the TCP transport that connection set-up (net_tcp_conn.c), handles
 * (net_tcp_handle.c) and data transfer (net_tcp_data.c) all use: a file of its own, below all
 * three, so that none of them depends on another for these. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "net_tcp_internal.h"

int tcp_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

void tcp_peer_from_sockaddr(const void *sa, struct tcp_peer *out)
{
	memset(out, 0, sizeof(*out));
	const struct sockaddr *s = sa;
	if (s->sa_family == AF_INET) {
		const struct sockaddr_in *a = sa;
		out->family = AF_INET;
		memcpy(&out->addr[0], &a->sin_addr, 4);
		out->port = ntohs(a->sin_port);
	} else if (s->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = sa;
		out->family = AF_INET6;
		memcpy(out->addr, &a->sin6_addr, 16);
		out->port = ntohs(a->sin6_port);
	}
}
