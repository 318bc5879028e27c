/* In-job policy switch for ncclbpf-gpubench --ab (ab_swap.h). */
#define _GNU_SOURCE
#include "ab_swap.h"
#include "install_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void gb_swap_init(struct gb_swap *s, const char *live)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->live, sizeof(s->live), "%s", live);
	s->conn.fd = -1;
}

struct proc_state {
	uint64_t version, reloads;
	char bundle[4096], last[16];
};

static void on_rec(const struct insp_rec *r, void *arg)
{
	struct proc_state *st = arg;
	if (strcmp(r->word, "process"))
		return;
	st->version = insp_getu(r, "version");
	st->reloads = insp_getu(r, "reloads");
	const char *b = insp_get(r, "bundle"), *l = insp_get(r, "last_result");
	snprintf(st->bundle, sizeof(st->bundle), "%s", b ? b : "");
	snprintf(st->last, sizeof(st->last), "%s", l ? l : "");
}

static int query(struct gb_swap *s, struct proc_state *st, char *err, size_t err_len)
{
	if (!s->connected) {
		char dir[4200];
		struct insp_proc p;
		insp_default_dir(dir, sizeof(dir));
		if (insp_find(dir, (int)getpid(), &p, "gpubench --ab") != 0) {
			snprintf(err, err_len,
				 "this process is not registered for inspection under %s", dir);
			return -1;
		}
		if (insp_connect(&p, &s->conn) != 0) {
			snprintf(err, err_len, "cannot reach the plugin's inspection socket %s: %s",
				 p.sock, s->conn.msg[0] ? s->conn.msg : strerror(errno));
			return -1;
		}
		s->connected = 1;
	}
	memset(st, 0, sizeof(*st));
	return insp_request(&s->conn, "info", on_rec, st, err, err_len);
}

int gb_swap_to(struct gb_swap *s, const char *bundle, int timeout_ms, char *err, size_t err_len)
{
	struct proc_state before, now;
	if (query(s, &before, err, err_len) != 0)
		return -1;
	if (install_file(bundle, s->live, err, err_len) != 0)
		return -1;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (query(s, &now, err, err_len) != 0)
			return -1;
		if (now.reloads > before.reloads) {
			if (strcmp(now.last, "ok") || now.version <= before.version) {
				snprintf(
				    err, err_len,
				    "the plugin rejected %s (installed at %s); NCCL's log says why",
				    bundle, s->live);
				return -1;
			}
			s->version = now.version;
			return 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms > timeout_ms) {
			snprintf(err, err_len,
				 "no reload of %s within %d ms (is the plugin watching it? "
				 "NCCLBPF_WATCH=0 and NCCLBPF_CP_DIR turn that off)",
				 s->live, timeout_ms);
			return -1;
		}
		usleep(500);
	}
}

void gb_swap_close(struct gb_swap *s)
{
	if (s->connected)
		insp_close(&s->conn);
	s->connected = 0;
}
