/* The exporter thread: one thread of ours (never NCCL's) that writes the node_exporter
 * textfile every NCCLBPF_PROM_INTERVAL_MS, appends the queued JSON lines every 20 ms and serves
 * GET /metrics (telem_http.c) in between. Started at the runtime's first acquire when an output
 * is configured, stopped at the last release (or library unload / exit), which writes the last
 * JSON lines and removes the textfile: the series of a process that is gone must not live on.
 *
 * Files: the textfile is written whole under a temporary name in the same directory (a hidden
 * name node_exporter does not read: it reads *.prom), then renamed over the real one, so a
 * reader sees the old file or the new one, never a part. Both files are created O_EXCL |
 * O_NOFOLLOW (a link planted at the name is never followed), mode 0644 (node_exporter and log
 * shippers run as other users), named after the host and pid (one file per process). A failed
 * write (full disk, directory gone or not writable) is one WARN per output, INFO when it works
 * again, never an error to NCCL; the data of that round is dropped and counted. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/rt_service.h"
#include "ncclbpf/trusted_path.h"
#include "telem_http.h"

#define JSONL_PERIOD_NS (20ull * 1000000ull)
#define JSONL_BUF	(256u * 1024u)
#define REWARN_NS	(600ull * 1000000000ull) /* a new failure WARNs again after 10 min */

static int start(struct rt_service *s);
static void finish(int mine);
/* The exporter thread: started once, stopped only by the process that started it. */
static struct rt_service svc = RT_SERVICE_INIT(start, finish);

/* The exporter thread's state. */
struct telem_export {
	struct tbuf prom;	  /* the one render buffer (textfile and /metrics) */
	uint64_t rendered_ns;	  /* when prom was last rendered */
	struct tbuf jsonl;	  /* JSON lines waiting to be written */
	int prom_dirfd, jsonl_fd; /* -1: not open (yet) */
	char prom_name[256], prom_tmp[272];
	struct telem_fail fail[3]; /* per output: TELEM_OUT_* */
	struct telem_http http;
};
static struct telem_export ex;

/* A scrape is answered with a render at most this old (several scrapers at once share one);
 * the textfile always renders anew. */
#define TELEM_SCRAPE_AGE_NS (250ull * 1000000ull)

/* --- Failures ------------------------------------------------------------------------------- */

int telem_fail_note(struct telem_fail *f, const char *what, int err, const char *why)
{
	f->errors++;
	if (f->failing)
		return 0;
	f->failing = 1;
	uint64_t now = rt_now_ns();
	if (f->warned_ns && now - f->warned_ns < REWARN_NS)
		return 0;
	f->warned_ns = now;
	rt_log(NCCLBPF_LOG_WARN,
	       "NCCLbpf telemetry: %s: %s; its data is dropped (and counted) until it works "
	       "again, NCCL is not affected",
	       what, why ? why : strerror(err));
	return 1;
}

void telem_fail_ok(struct telem_fail *f, const char *what)
{
	if (!f->failing)
		return;
	f->failing = 0;
	rt_log(NCCLBPF_LOG_INFO, "NCCLbpf telemetry: %s works again", what);
}

static char fail_what[3][4400];

/* A failed write on an output: counted, WARNed as telem_fail_note says (why: the reason, when
 * the error number alone does not say it; NULL: strerror(err)). */
static void export_error_why(struct telem_export *x, int out, int err, const char *why)
{
	atomic_fetch_add(&telem_stats.errors[out], 1);
	telem_fail_note(&x->fail[out], fail_what[out], err, why);
}

static void export_error(struct telem_export *x, int out, int err)
{
	export_error_why(x, out, err, NULL);
}

static void export_ok(struct telem_export *x, int out)
{
	telem_fail_ok(&x->fail[out], fail_what[out]);
}

/* --- Prometheus text ------------------------------------------------------------------------ */

/* The Prometheus text, rendered now unless a render younger than max_age_ns is at hand. */
static const struct tbuf *render(struct telem_export *x, uint64_t max_age_ns)
{
	uint64_t now = rt_now_ns();
	if (x->rendered_ns && now - x->rendered_ns < max_age_ns)
		return &x->prom;
	x->prom.len = x->prom.line = 0;
	x->prom.full = 0;
	telem_prom_render(&x->prom);
	x->rendered_ns = now;
	if (x->prom.full) {
		static int said;
		atomic_fetch_add(&telem_stats.truncated, 1);
		if (!said++)
			rt_log(NCCLBPF_LOG_WARN,
			       "NCCLbpf telemetry: the Prometheus text is larger than "
			       "NCCLBPF_PROM_MAX_BYTES=%llu; series are left out (raise it)",
			       (unsigned long long)telem_cfg.max_bytes);
	}
	return &x->prom;
}

/* telem_http's body function */
static const struct tbuf *scrape_body(void *x)
{
	return render(x, TELEM_SCRAPE_AGE_NS);
}

/* --- Files ---------------------------------------------------------------------------------- */

int ncclbpf_telem_open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t k = write(fd, p, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -ENOSPC;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

static void textfile_write(struct telem_export *x)
{
	if (x->prom_dirfd < 0) {
		int fd = ncclbpf_telem_open_dir(telem_cfg.prom_dir);
		if (fd < 0) {
			export_error(x, TELEM_OUT_TEXTFILE, -fd);
			return;
		}
		x->prom_dirfd = fd;
	}
	const struct tbuf *b = render(x, 0);
	unlinkat(x->prom_dirfd, x->prom_tmp, 0); /* left by a crash of a process with our pid */
	int fd = openat(x->prom_dirfd, x->prom_tmp,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	int err = fd < 0 ? -errno : 0;
	if (!err && fchmod(fd, 0644) != 0)
		err = -errno;
	if (!err)
		err = write_all(fd, b->p, b->len);
	if (fd >= 0 && close(fd) != 0 && !err)
		err = -errno;
	if (!err && renameat(x->prom_dirfd, x->prom_tmp, x->prom_dirfd, x->prom_name) != 0)
		err = -errno;
	if (err) {
		unlinkat(x->prom_dirfd, x->prom_tmp, 0);
		export_error(x, TELEM_OUT_TEXTFILE, -err);
		if (err == -ENOENT || err == -ESTALE) { /* the directory went: reopen next time */
			close(x->prom_dirfd);
			x->prom_dirfd = -1;
		}
		return;
	}
	export_ok(x, TELEM_OUT_TEXTFILE);
}

static void textfile_remove(struct telem_export *x)
{
	if (x->prom_dirfd < 0)
		return;
	unlinkat(x->prom_dirfd, x->prom_name, 0);
	unlinkat(x->prom_dirfd, x->prom_tmp, 0);
	close(x->prom_dirfd);
	x->prom_dirfd = -1;
}

/* The directory is meant to be shared (log shippers read it), so another user may have created
 * our file's name first (host and pid are predictable): only a regular file of ours is
 * appended to, and a FIFO is refused instead of waited on (it held this thread, and with it
 * the finalize that stops it, for good). */
static void jsonl_open(struct telem_export *x)
{
	int dfd = ncclbpf_telem_open_dir(telem_cfg.jsonl_dir);
	int err = dfd < 0 ? -dfd : 0;
	char why[600] = "";
	if (!err) {
		char name[256];
		snprintf(name, sizeof(name), "ncclbpf_%.128s_%d.jsonl", telem_cfg.id.host,
			 telem_cfg.id.pid);
		x->jsonl_fd = ncclbpf_path_append_at(dfd, name, NULL, 0644, why, sizeof(why));
		err = x->jsonl_fd < 0 ? -x->jsonl_fd : 0;
		close(dfd);
	}
	if (err)
		export_error_why(x, TELEM_OUT_JSONL, err, why[0] ? why : NULL);
}

/* Writes the buffered lines (n of them). */
static void jsonl_flush(struct telem_export *x, uint64_t *n)
{
	if (!*n)
		return;
	if (x->jsonl_fd < 0)
		jsonl_open(x);
	int err = x->jsonl_fd < 0 ? -EBADF : write_all(x->jsonl_fd, x->jsonl.p, x->jsonl.len);
	if (err) {
		if (x->jsonl_fd >= 0)
			export_error(x, TELEM_OUT_JSONL, -err);
		atomic_fetch_add(&telem_jsonl_dropped, *n);
	} else {
		atomic_fetch_add(&telem_stats.jsonl_records, *n);
		export_ok(x, TELEM_OUT_JSONL);
	}
	x->jsonl.len = x->jsonl.line = 0;
	x->jsonl.full = 0;
	*n = 0;
}

static void jsonl_drain(struct telem_export *x)
{
	struct telem_jrec r;
	uint64_t n = 0;
	while (telem_jsonl_pop(&r)) {
		telem_json_record(&x->jsonl, &r);
		n++;
		if (x->jsonl.cap - x->jsonl.len < 2048 || x->jsonl.full)
			jsonl_flush(x, &n);
	}
	jsonl_flush(x, &n);
}

/* --- The thread ----------------------------------------------------------------------------- */

/* Communicators closed at two ticks in a row are freed: they were exported at least once
 * after their last collective (textfile written, or a scrape interval passed). */
static void release_closed(void)
{
	static uint8_t seen[NCCLBPF_TELEM_COMMS];
	for (int i = 0; i < NCCLBPF_TELEM_COMMS; i++) {
		int closed = atomic_load(&telem_slots[i].state) == NCCLBPF_TELEM_CLOSED;
		if (closed && seen[i]) {
			telem_release_closed();
			memset(seen, 0, sizeof(seen));
			return;
		}
		seen[i] = (uint8_t)closed;
	}
}

static void *exporter_main(void *arg)
{
	(void)arg;
	struct telem_export *x = &ex;
	uint64_t period = telem_cfg.prom_interval_ms * 1000000ull;
	uint64_t next_tick = rt_now_ns(), next_jsonl = next_tick;
	for (;;) {
		uint64_t now = rt_now_ns();
		if (now >= next_tick) {
			if (telem_cfg.prom_dir[0])
				textfile_write(x);
			release_closed();
			next_tick = now + period;
		}
		if (telem_cfg.jsonl_dir[0] && now >= next_jsonl) {
			jsonl_drain(x);
			next_jsonl = now + JSONL_PERIOD_NS;
		}
		uint64_t wake = next_tick;
		if (telem_cfg.jsonl_dir[0] && next_jsonl < wake)
			wake = next_jsonl;
		uint64_t hd = telem_http_next_deadline(&x->http);
		wake = hd < wake ? hd : wake;
		now = rt_now_ns();
		int ms = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
		struct pollfd pfd[2 + HTTP_CONNS];
		pfd[0] = (struct pollfd){.fd = svc.stop_fd, .events = POLLIN};
		int n = 1 + telem_http_pollfds(&x->http, pfd + 1);
		if (poll(pfd, (nfds_t)n, ms) < 0 && errno != EINTR)
			continue;
		if (pfd[0].revents)
			break;
		for (int failed = telem_http_handle(&x->http, pfd + 1, n - 1); failed > 0; failed--)
			export_error(x, TELEM_OUT_HTTP, ETIMEDOUT);
	}
	atomic_store(&telem_jsonl_on, 0);
	if (telem_cfg.jsonl_dir[0])
		jsonl_drain(x);
	return NULL;
}

static void free_buffers(struct telem_export *x)
{
	free(x->prom.p);
	free(x->jsonl.p);
	x->prom.p = x->jsonl.p = NULL;
}

static int start(struct rt_service *s)
{
	telem_config_read();
	const struct telem_config *c = &telem_cfg;
	if (!c->enabled || !(c->prom_dir[0] || c->prom_port || c->jsonl_dir[0]))
		return -1;
	struct telem_export *x = &ex;
	memset(x, 0, sizeof(*x));
	x->prom_dirfd = x->jsonl_fd = -1;
	telem_http_init(&x->http);
	snprintf(x->prom_name, sizeof(x->prom_name), "ncclbpf_%.128s_%d.prom", c->id.host,
		 c->id.pid);
	snprintf(x->prom_tmp, sizeof(x->prom_tmp), ".%.200s.tmp", x->prom_name);
	snprintf(fail_what[TELEM_OUT_TEXTFILE], sizeof(fail_what[0]), "textfile %.4000s/%.200s",
		 c->prom_dir, x->prom_name);
	snprintf(fail_what[TELEM_OUT_JSONL], sizeof(fail_what[0]), "JSON lines in %.4000s",
		 c->jsonl_dir);
	snprintf(fail_what[TELEM_OUT_HTTP], sizeof(fail_what[0]), "HTTP /metrics");
	/* The one render buffer: allocated once, its pages touched only as far as used. */
	if (c->prom_dir[0] || c->prom_port) {
		x->prom.p = malloc(c->max_bytes);
		x->prom.cap = c->max_bytes;
	}
	if (c->jsonl_dir[0]) {
		x->jsonl.p = malloc(JSONL_BUF);
		x->jsonl.cap = JSONL_BUF;
	}
	if ((x->prom.cap && !x->prom.p) || (x->jsonl.cap && !x->jsonl.p)) {
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf telemetry: out of memory; no exports");
		free_buffers(x);
		return -1;
	}
	char why[256];
	uint32_t port = telem_config_port();
	if (port && telem_http_open(&x->http, port, scrape_body, x, why, sizeof(why)) != 0)
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf telemetry: no HTTP /metrics (%s)", why);
	if (c->jsonl_dir[0])
		atomic_store(&telem_jsonl_on, 1);
	int e = rt_service_spawn(s, exporter_main, NULL);
	if (e) {
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf telemetry: cannot start its thread: %s",
		       strerror(e));
		atomic_store(&telem_jsonl_on, 0);
		telem_http_close(&x->http);
		free_buffers(x);
		return -1;
	}
	char outs[9000] = "";
	size_t n = 0;
	if (c->prom_dir[0])
		n += (size_t)snprintf(outs + n, sizeof(outs) - n, "; textfile %.4000s/%.200s",
				      c->prom_dir, x->prom_name);
	if (x->http.listen_fd >= 0 && n < sizeof(outs))
		n += (size_t)snprintf(outs + n, sizeof(outs) - n, "; HTTP /metrics on 127.0.0.1:%u",
				      port);
	if (c->jsonl_dir[0] && n < sizeof(outs))
		snprintf(outs + n, sizeof(outs) - n, "; JSON lines in %.4000s", c->jsonl_dir);
	rt_log(NCCLBPF_LOG_INFO, "NCCLbpf telemetry: on%s", outs);
	return 0;
}

/* mine: the thread has returned (its last JSON lines written); the textfile of a process that
 * stops must not live on. A forked child closes its copies and leaves the parent's file. */
static void finish(int mine)
{
	struct telem_export *x = &ex;
	if (mine)
		textfile_remove(x);
	else if (x->prom_dirfd >= 0)
		close(x->prom_dirfd);
	x->prom_dirfd = -1;
	telem_http_close(&x->http);
	if (x->jsonl_fd >= 0)
		close(x->jsonl_fd);
	x->jsonl_fd = -1;
	free_buffers(x);
}

void rt_telem_start(void)
{
	rt_service_start(&svc);
}

void rt_telem_stop(void)
{
	rt_service_stop(&svc);
}

__attribute__((destructor)) static void telem_fini(void)
{
	rt_service_fini(&svc);
}

size_t ncclbpf_telem_prometheus(char *buf, size_t cap)
{
	struct tbuf b = {.p = buf, .cap = cap};
	telem_prom_render(&b);
	return b.full ? 0 : b.len;
}
