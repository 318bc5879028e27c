/* The optional GET /metrics endpoint (telem_http.c). The exporter thread (telem_export.c) polls
 * its descriptors beside its own and calls telem_http_handle when one is ready; the endpoint
 * asks the exporter for the text to answer with through the body function given at open, so
 * it knows nothing of the exporter's state. */
#ifndef NCCLBPF_TELEM_HTTP_H
#define NCCLBPF_TELEM_HTTP_H

#include <poll.h>

#include "telem_internal.h"

#define HTTP_CONNS 4

struct http_conn {
	int fd; /* -1: unused */
	size_t len;
	uint64_t deadline_ns; /* the request and the answer must be done by then */
	char req[1024];
};

/* The Prometheus text a scrape is answered with. */
typedef const struct tbuf *(*telem_http_body_fn)(void *arg);

struct telem_http {
	int listen_fd; /* -1: off */
	struct http_conn c[HTTP_CONNS];
	telem_http_body_fn body;
	void *body_arg;
};

/* Every descriptor -1: what telem_http_close and telem_http_pollfds expect when open is never
 * called (no port) or fails. */
void telem_http_init(struct telem_http *h);
int telem_http_open(struct telem_http *h, uint32_t port, telem_http_body_fn body, void *body_arg,
		    char *why, size_t why_len);
void telem_http_close(struct telem_http *h);
/* The descriptors to poll (listener and connections) into pfd (1 + HTTP_CONNS at most). */
int telem_http_pollfds(const struct telem_http *h, struct pollfd *pfd);
uint64_t telem_http_next_deadline(const struct telem_http *h);
/* Serves the descriptors poll found ready. Returns how many answers could not be sent before
 * their deadline (the exporter counts each as a failed HTTP write). */
int telem_http_handle(struct telem_http *h, const struct pollfd *pfd, int n);

#endif
