/* The control plane's state that the member side (cp_member.c) and the control thread
 * (cp_thread.c) share: the configuration read once from the environment, the list of members,
 * the decision log, and the pends, which the control thread creates and learns decisions for
 * and the calling thread resolves at its fences. Both call down into this file; it calls
 * neither. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cp_internal.h"
#include "ncclbpf/envvars.h"
#include "ncclbpf/trusted_path.h"

struct cp_global cp = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static struct cp_config cfg = {.log_fd = -1};
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

static void cfg_init(void)
{
	const char *d = ncclbpf_env_str("NCCLBPF_CP_DIR"); /* its length: the table's */
	if (!d)
		return;
	snprintf(cfg.dir, sizeof(cfg.dir), "%s", d);
	/* Whoever can write D can propose bundles to this job and hold its calls at fences: D
	 * and every directory above it must be ours or root's and writable by no one else. */
	char why[600];
	int fd = ncclbpf_path_open_dir(cfg.dir, NCCLBPF_PATH_CREATE, why, sizeof(why));
	if (fd < 0) {
		cfg.refused = 1;
		rt_log(
		    NCCLBPF_LOG_WARN,
		    "NCCLbpf: NCCLBPF_CP_DIR refused (%s); the control plane and live inspection "
		    "are off",
		    why);
		return;
	}
	close(fd);
	cfg.on = 1;
	cfg.poll_ms = (unsigned)ncclbpf_env_uint("NCCLBPF_CP_POLL_MS");
	cfg.wait_ms = (unsigned)ncclbpf_env_uint("NCCLBPF_CP_WAIT_MS");
	cfg.lead = ncclbpf_env_uint("NCCLBPF_CP_LEAD_CALLS"); /* 0: adaptive */
	const char *v = ncclbpf_env_str("NCCLBPF_CP_LOG");
	if (v) {
		cfg.log_fd = ncclbpf_path_open_append(v, why, sizeof(why));
		if (cfg.log_fd < 0)
			rt_log(NCCLBPF_LOG_WARN,
			       "NCCLbpf: cannot open the decision log (NCCLBPF_CP_LOG): %s", why);
	}
	cfg.have_reject = ncclbpf_env_hex64("NCCLBPF_CP_REJECT_HASH", &cfg.reject_hash);
}

const struct cp_config *cp_cfg(void)
{
	pthread_once(&cfg_once, cfg_init);
	return &cfg;
}

int cp_enabled(void)
{
	return cp_cfg()->on;
}

int cp_dir_refused(void)
{
	return cp_cfg()->refused;
}

void cp_log_line(const char *fmt, ...)
{
	int fd = __atomic_load_n(&cfg.log_fd, __ATOMIC_ACQUIRE);
	if (fd < 0)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	errno = 0;
	if (n > 0 && n < (int)sizeof(buf) && write(fd, buf, (size_t)n) != n) {
		/* A full disk or a failing file: one WARN, then no more log lines (a WARN per
		 * decision would flood NCCL's log). The descriptor stays open: another thread may
		 * still be writing through it. */
		int err = errno;
		if (__atomic_exchange_n(&cfg.log_fd, -1, __ATOMIC_ACQ_REL) == fd)
			rt_log(NCCLBPF_LOG_WARN,
			       "NCCLbpf: NCCLBPF_CP_LOG write failed (%s); decisions are no longer "
			       "logged",
			       err ? strerror(err) : "short write");
	}
}

/* --- Pends -------------------------------------------------------------------------------- */

void cp_pend_free(struct cp_pend *p)
{
	if (!p)
		return;
	rt_policy_put(p->P);
	for (struct cp_update *u = p->updates, *n; u; u = n) {
		n = u->next;
		free(u->key);
		free(u->val);
		free(u);
	}
	free(p);
}

void cp_recompute_next(struct ncclbpf_cp_member *m)
{
	uint64_t next = UINT64_MAX;
	for (struct cp_pend *p = m->pends; p; p = p->next) {
		if (p->state == CP_ACKED && p->B < next)
			next = p->B;
		else if (p->state == CP_COMMITTED && p->S < next)
			next = p->S;
	}
	__atomic_store_n(&m->c->cp_next, next, __ATOMIC_SEQ_CST);
}

void cp_resolve(struct ncclbpf_cp_member *m, struct cp_pend *p, const char *d)
{
	if (p->state != CP_ACKED)
		return;
	unsigned long long S;
	if (sscanf(d, "commit %llu", &S) == 1) {
		if (S < p->B) {
			/* Cannot happen with a correct controller (S = max of all fences); refuse
			 * rather than switch at a seq this member may already have passed. */
			snprintf(p->msg, sizeof(p->msg),
				 "commit %llu below this member's fence %llu", S,
				 (unsigned long long)p->B);
			rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: reload %s of %s: %s", p->R, m->comm,
			       p->msg);
			p->state = CP_FAILED;
		} else {
			p->S = S;
			p->state = CP_COMMITTED;
		}
	} else {
		p->state = CP_ABORTED;
		snprintf(p->msg, sizeof(p->msg), "%.250s", d);
	}
}

int cp_read_decision(const struct ncclbpf_cp_member *m, const char *R, char *out, size_t len)
{
	char path[CP_PATH + 512];
	snprintf(path, sizeof(path), "%s/reloads/%s/decision", m->cdir, R);
	char *buf;
	int e = cp_read(path, &buf, NULL, 4096);
	if (e)
		return e;
	snprintf(out, len, "%s", buf);
	out[strcspn(out, "\n")] = 0;
	free(buf);
	return 0;
}
