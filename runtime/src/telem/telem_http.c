/* The optional HTTP endpoint: GET /metrics on 127.0.0.1 (NCCLBPF_PROM_PORT plus the local
 * rank), served by the exporter thread between its other work. Bounded in every way: at most
 * HTTP_CONNS connections (more are answered 503 and closed), a request of at most 1 KiB read
 * within HTTP_DEADLINE_MS of the connection, the answer sent within the same deadline (a
 * client that stops reading is dropped), one response per connection. Nothing is allocated
 * per request: the answer is the exporter's one render buffer. */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "telem_http.h"

#define HTTP_DEADLINE_MS 2000

void telem_http_init(struct telem_http *h)
{
	h->listen_fd = -1;
	for (int i = 0; i < HTTP_CONNS; i++)
		h->c[i].fd = -1;
}

int telem_http_open(struct telem_http *h, uint32_t port, telem_http_body_fn body, void *body_arg,
		    char *why, size_t why_len)
{
	telem_http_init(h);
	h->body = body;
	h->body_arg = body_arg;
	h->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1;
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (h->listen_fd < 0 ||
	    setsockopt(h->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(h->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(h->listen_fd, 16) != 0) {
		snprintf(why, why_len, "127.0.0.1:%u: %s", port, strerror(errno));
		if (h->listen_fd >= 0)
			close(h->listen_fd);
		h->listen_fd = -1;
		return -1;
	}
	return 0;
}

void telem_http_close(struct telem_http *h)
{
	for (int i = 0; i < HTTP_CONNS; i++)
		if (h->c[i].fd >= 0) {
			close(h->c[i].fd);
			h->c[i].fd = -1;
		}
	if (h->listen_fd >= 0)
		close(h->listen_fd);
	h->listen_fd = -1;
}

int telem_http_pollfds(const struct telem_http *h, struct pollfd *pfd)
{
	int n = 0;
	if (h->listen_fd < 0)
		return 0;
	pfd[n++] = (struct pollfd){.fd = h->listen_fd, .events = POLLIN};
	for (int i = 0; i < HTTP_CONNS; i++)
		if (h->c[i].fd >= 0)
			pfd[n++] = (struct pollfd){.fd = h->c[i].fd, .events = POLLIN};
	return n;
}

uint64_t telem_http_next_deadline(const struct telem_http *h)
{
	uint64_t d = UINT64_MAX;
	for (int i = 0; i < HTTP_CONNS; i++)
		if (h->c[i].fd >= 0 && h->c[i].deadline_ns < d)
			d = h->c[i].deadline_ns;
	return d;
}

static void drop(struct http_conn *c)
{
	close(c->fd);
	c->fd = -1;
}

/* Sends all of data before the connection's deadline; 0, or -1 (dropped by the caller). */
static int send_all(struct http_conn *c, const char *data, size_t len)
{
	while (len) {
		ssize_t k = send(c->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0) {
			data += k;
			len -= (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		uint64_t now = rt_now_ns();
		if (now >= c->deadline_ns)
			return -1;
		struct pollfd p = {.fd = c->fd, .events = POLLOUT};
		int ms = (int)((c->deadline_ns - now) / 1000000) + 1;
		if (poll(&p, 1, ms) < 0 && errno != EINTR)
			return -1;
	}
	return 0;
}

/* Answers and closes the connection; 0, or -1 when the answer could not be sent in time. */
static int respond(struct http_conn *c, int status, const char *reason, const char *body,
		   size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 status, reason,
			 status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain",
			 len);
	int rc = send_all(c, head, (size_t)n) != 0 || send_all(c, body, len) != 0 ? -1 : 0;
	drop(c);
	return rc;
}

/* A complete request head is in c->req: answer it (respond's result). */
static int serve(const struct telem_http *h, struct http_conn *c)
{
	static const char nf[] = "only GET /metrics is served here\n";
	if (strncmp(c->req, "GET ", 4))
		return respond(c, 405, "Method Not Allowed", nf, sizeof(nf) - 1);
	const char *path = c->req + 4;
	size_t plen = strcspn(path, " ?\r\n");
	if (plen != 8 || strncmp(path, "/metrics", 8))
		return respond(c, 404, "Not Found", nf, sizeof(nf) - 1);
	const struct tbuf *b = h->body(h->body_arg);
	return respond(c, 200, "OK", b->p, b->len);
}

/* Reads what came; answers once the request head is complete or too large (respond's result,
 * else 0). */
static int on_readable(const struct telem_http *h, struct http_conn *c)
{
	ssize_t k = recv(c->fd, c->req + c->len, sizeof(c->req) - 1 - c->len, MSG_DONTWAIT);
	if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		drop(c);
		return 0;
	}
	if (k < 0)
		return 0;
	c->len += (size_t)k;
	c->req[c->len] = 0;
	if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
		return serve(h, c);
	if (c->len == sizeof(c->req) - 1) {
		static const char big[] = "request too large\n";
		return respond(c, 431, "Request Header Fields Too Large", big, sizeof(big) - 1);
	}
	return 0;
}

static void on_accept(struct telem_http *h, uint64_t now)
{
	for (int tries = 0; tries < 16; tries++) {
		int fd = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		struct http_conn *c = NULL;
		for (int i = 0; i < HTTP_CONNS && !c; i++)
			if (h->c[i].fd < 0)
				c = &h->c[i];
		if (!c) {
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
						   "Content-Length: 0\r\nConnection: close\r\n\r\n";
			(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->len = 0;
		c->req[0] = 0;
		c->deadline_ns = now + HTTP_DEADLINE_MS * 1000000ull;
	}
}

int telem_http_handle(struct telem_http *h, const struct pollfd *pfd, int n)
{
	uint64_t now = rt_now_ns();
	int failed = 0;
	for (int i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		if (pfd[i].fd == h->listen_fd) {
			on_accept(h, now);
			continue;
		}
		for (int j = 0; j < HTTP_CONNS; j++)
			if (h->c[j].fd == pfd[i].fd && on_readable(h, &h->c[j]) != 0)
				failed++;
	}
	for (int j = 0; j < HTTP_CONNS; j++)
		if (h->c[j].fd >= 0 && now >= h->c[j].deadline_ns)
			drop(&h->c[j]); /* the request did not come in time */
	return failed;
}
