/* The exporter thread's state, shared by telem_export.c (the thread, the textfile and the JSON
 * lines) and telem_http.c (the /metrics endpoint it serves between them). */
#ifndef NCCLBPF_TELEM_EXPORT_H
#define NCCLBPF_TELEM_EXPORT_H

#include <poll.h>

#include "telem_internal.h"

#define HTTP_CONNS 4

struct http_conn {
	int fd; /* -1: unused */
	size_t len;
	uint64_t deadline_ns; /* the request and the answer must be done by then */
	char req[1024];
};

struct telem_http {
	int listen_fd; /* -1: off */
	struct http_conn c[HTTP_CONNS];
};

struct telem_export {
	struct tbuf prom;	  /* the one render buffer (textfile and /metrics) */
	uint64_t rendered_ns;	  /* when prom was last rendered */
	struct tbuf jsonl;	  /* JSON lines waiting to be written */
	int prom_dirfd, jsonl_fd; /* -1: not open (yet) */
	char prom_name[256], prom_tmp[272];
	struct telem_fail fail[3]; /* per output: TELEM_OUT_* */
	struct telem_http http;
};

/* The Prometheus text, rendered now unless a render younger than max_age_ns is at hand (several
 * scrapers at once share one: TELEM_SCRAPE_AGE_NS). The textfile always renders anew. */
#define TELEM_SCRAPE_AGE_NS (250ull * 1000000ull)
const struct tbuf *telem_export_render(struct telem_export *x, uint64_t max_age_ns);
/* A failed write on an output: counted, WARNed as telem_fail_note says. */
void telem_export_error(struct telem_export *x, int out, int err);

int telem_http_open(struct telem_http *h, uint32_t port, char *why, size_t why_len);
void telem_http_close(struct telem_http *h);
/* The descriptors to poll (listener and connections) into pfd (1 + HTTP_CONNS at most). */
int telem_http_pollfds(const struct telem_http *h, struct pollfd *pfd);
uint64_t telem_http_next_deadline(const struct telem_http *h);
void telem_http_handle(struct telem_export *x, const struct pollfd *pfd, int n);

#endif
