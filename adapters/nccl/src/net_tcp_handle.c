/* The handle listen writes and connect reads (net_tcp_internal.h: struct tcp_handle), and what
 * is trusted in it.
 *
 * NCCL carries the handle from the listening rank to the connecting one through its bootstrap,
 * as it does for its own socket and IB transports: the address and port are data the peer
 * chose, and we connect where they say, as NCCL's transports do. Nothing in it is used
 * unchecked: the magic, an address family we speak, a unicast address and a port, the
 * listener id's form (random_id() sets bit 0), zeros where listen wrote zeros. The one field
 * that is not data is `stage`, the connector's attempt in progress, which NCCL hands back on
 * every connect call: a stage this process did not create and has not finished (a peer's
 * pointer, or garbage) is refused, never dereferenced. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "net_tcp_internal.h"

static int unicast4(const uint8_t *a)
{
	static const uint8_t any[4], all[4] = {255, 255, 255, 255};
	return memcmp(a, any, 4) && memcmp(a, all, 4) && (a[0] & 0xf0) != 0xe0;
}

static int unicast6(const uint8_t *a)
{
	static const uint8_t any[16];
	return memcmp(a, any, 16) && a[0] != 0xff;
}

int tcp_handle_parse(const struct tcp_handle *h, struct sockaddr_storage *ss, unsigned *len,
		     const char **why)
{
	static const uint8_t zeros[NCCL_NET_HANDLE_MAXSIZE];
	const char *bad = NULL;
	memset(ss, 0, sizeof(*ss));
	if (h->magic != TCP_MAGIC)
		bad = "not an NCCLbpf handle";
	else if (memcmp((const uint8_t *)h + sizeof(*h), zeros,
			NCCL_NET_HANDLE_MAXSIZE - sizeof(*h)))
		bad = "reserved bytes are not zero";
	else if (!(h->listen_id & 1))
		bad = "malformed listener id";
	else if (h->port == 0)
		bad = "port 0";
	else if (h->family == AF_INET && (memcmp(h->addr + 4, zeros, 12) || !unicast4(h->addr)))
		bad = "not a unicast IPv4 address";
	else if (h->family == AF_INET6 && !unicast6(h->addr))
		bad = "not a unicast IPv6 address";
	else if (h->family != AF_INET && h->family != AF_INET6)
		bad = "unknown address family";
	else if (h->stage && !tcp_stage_known(h->stage))
		bad = "a connection attempt this process does not have";
	if (why)
		*why = bad;
	if (bad)
		return -1;
	if (h->family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = h->port;
		memcpy(&a->sin_addr, h->addr, 4);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = h->port;
		memcpy(&a->sin6_addr, h->addr, 16);
		*len = sizeof(*a);
	}
	return 0;
}

int tcp_handle_peer(const void *handle, struct tcp_peer *out)
{
	struct sockaddr_storage ss;
	unsigned len;
	memset(out, 0, sizeof(*out));
	if (!handle || tcp_handle_parse(handle, &ss, &len, NULL))
		return -1;
	tcp_peer_from_sockaddr(&ss, out);
	return 0;
}

/* --- Stages this process created and has not finished --------------------------------------- */

static pthread_mutex_t stages_lock = PTHREAD_MUTEX_INITIALIZER;
static const void **stages;
static size_t n_stages, cap_stages;

int tcp_stage_add(const void *stage)
{
	int ret = 0;
	pthread_mutex_lock(&stages_lock);
	if (n_stages == cap_stages) {
		size_t cap = cap_stages ? 2 * cap_stages : 64;
		const void **n = realloc(stages, cap * sizeof(*n));
		if (n) {
			stages = n;
			cap_stages = cap;
		}
	}
	if (n_stages < cap_stages)
		stages[n_stages++] = stage;
	else
		ret = -ENOMEM;
	pthread_mutex_unlock(&stages_lock);
	return ret;
}

static size_t find(const void *stage)
{
	size_t i = 0;
	while (i < n_stages && stages[i] != stage)
		i++;
	return i;
}

int tcp_stage_known(const void *stage)
{
	pthread_mutex_lock(&stages_lock);
	int known = find(stage) < n_stages;
	pthread_mutex_unlock(&stages_lock);
	return known;
}

void tcp_stage_remove(const void *stage)
{
	pthread_mutex_lock(&stages_lock);
	size_t i = find(stage);
	if (i < n_stages)
		stages[i] = stages[--n_stages];
	if (!n_stages) { /* the last attempt finished: nothing stays allocated */
		free(stages);
		stages = NULL;
		cap_stages = 0;
	}
	pthread_mutex_unlock(&stages_lock);
}
