/* The live-inspection server: at the first acquire the process registers itself as
 * <dir>/procs/<host>.<pid> (a key=value record) and serves requests (inspect.h) on the unix
 * socket <dir>/procs/<host>.<pid>.sock from one thread; the last release (or unloading the
 * library, or exit) stops the thread and removes both files.
 *
 * <dir> is $NCCLBPF_CP_DIR (the control plane's shared directory, docs/operating.md) or
 * /dev/shm/ncclbpf-<uid>; NCCLBPF_INSPECT=0 turns the server off; it answers at most one
 * request per NCCLBPF_INSPECT_INTERVAL_US (default 1000, see pace()). Only the owner can attach:
 * the procs directory is the owner's and mode 0700, the socket 0600, and every connection's
 * peer credentials (SO_PEERCRED) must name our effective uid or root, else it is refused and
 * logged. Nothing here may fail the host: an unusable directory logs one line and leaves the
 * feature off. Descriptors are close-on-exec; the thread blocks every signal, so it never
 * takes the application's, and it never keeps the process alive (exit does not wait for it;
 * the destructor stops it when it can). A forked child inherits none of it: it neither stops
 * its parent's server nor removes its parent's files. */
#define _GNU_SOURCE /* accept4, struct ucred */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/rt_service.h"
#include "cp/cp.h"
#include "inspect.h"
#include "ncclbpf/envvars.h"
#include "ncclbpf/proc_registry.h"
#include "ncclbpf/trusted_path.h"

#define MAX_CLIENTS    8
#define IDLE_CLOSE_NS  (60ull * 1000000000ull) /* an idle client is dropped after a minute */
#define SEND_TIMEOUT_S 2		       /* a client that stops reading is dropped */

struct insp_ident insp_ident;

static int start(struct rt_service *s);
static void finish(int mine);
/* The server's thread: started once, stopped only by the process that started it. */
static struct rt_service svc = RT_SERVICE_INIT(start, finish);

static struct {
	int listen_fd;
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char rec_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	unsigned refused_logged;
	uint64_t min_interval_ns; /* pace(): NCCLBPF_INSPECT_INTERVAL_US, default 1000 */
} srv = {.listen_fd = -1};

struct client {
	int fd;
	size_t len;
	uint64_t last_ns;
	char buf[1024];
};

/* --- Directory and record -------------------------------------------------------------- */

/* Written to a temporary name and renamed, so a reader sees a whole record or none. */
static int write_record(const char *path)
{
	char tmp[sizeof(srv.rec_path) + 8];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp); /* left by an earlier process with our pid */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return -ENOMEM;
	}
	const struct insp_ident *id = &insp_ident;
	char bundle[4096];
	rt_clean_token(bundle, sizeof(bundle), rt.have_policy_path ? rt.policy_path : "-");
	fprintf(f,
		"pid=%d\nproc_start=%llu\nhost=%s\nuid=%u\njob=%s\nrank=%s\nlocal_rank=%s\n"
		"start_ns=%llu\nbundle=%s\nsock=%s\ncp=%d\n",
		id->id.pid, ncclbpf_rt_proc_start(id->id.pid), id->id.host, id->id.uid, id->id.job,
		id->id.rank, id->id.local_rank, (unsigned long long)id->id.start_unix_ns, bundle,
		srv.sock_path, id->cp);
	int err = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) != 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* --- Connections ----------------------------------------------------------------------- */

static uint64_t mono_ns(void)
{
	return rt_now_ns();
}

/* Peer credentials: our effective uid or root may attach. */
static int peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
		return 0;
	if (cr.uid == geteuid() || cr.uid == 0)
		return 1;
	/* Logged, but not without bound: a hostile loop must not fill the host's log. */
	if (srv.refused_logged < 16) {
		srv.refused_logged++;
		rt_log(NCCLBPF_LOG_WARN,
		       "NCCLbpf: inspection connection from uid %u (pid %d) refused: only uid %u "
		       "or root may inspect this process",
		       (unsigned)cr.uid, (int)cr.pid, (unsigned)geteuid());
	}
	return 0;
}

static void say(int fd, const char *line)
{
	ssize_t n = send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)n; /* best effort: the connection is closed next anyway */
}

static void accept_one(struct client *cl)
{
	int fd = accept4(srv.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (!peer_allowed(fd)) {
		say(fd, "error refused: not the owner of this process\n");
		close(fd);
		return;
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (cl[i].fd < 0) {
			struct timeval tv = {.tv_sec = SEND_TIMEOUT_S};
			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
			cl[i].fd = fd;
			cl[i].len = 0;
			cl[i].last_ns = mono_ns();
			/* The client reads this before it sends anything, so a refusal (sent
			 * instead) never races with a request in flight. */
			say(fd, "hello ncclbpf-inspect 1\n");
			return;
		}
	say(fd, "error busy: too many inspection clients\n");
	close(fd);
}

static void drop(struct client *c)
{
	close(c->fd);
	c->fd = -1;
	c->len = 0;
}

/* Answers at most one request per srv.min_interval_ns, whoever asks. Reading the counters
 * pulls the hot path's cache lines to this thread's CPU, and the next hook call pays to get
 * them back: a few cache misses per answer, which only a client asking tens of thousands of
 * times per second would turn into a measurable slowdown (benchmarks/inspect_bench.c). The
 * pace keeps that cost bounded whatever clients do; a human or a monitoring loop never waits
 * noticeably. */
static void pace(void)
{
	static uint64_t next;
	uint64_t now = mono_ns();
	if (now < next) {
		/* Waits on the stop descriptor: stopping the server (communicator destroy) never
		 * waits for the pace. */
		uint64_t d = next - now;
		struct timespec ts = {.tv_sec = (time_t)(d / 1000000000ull),
				      .tv_nsec = (long)(d % 1000000000ull)};
		struct pollfd p = {.fd = svc.stop_fd, .events = POLLIN};
		ppoll(&p, 1, &ts, NULL);
		now = next;
	}
	next = now + srv.min_interval_ns;
}

/* Reads what arrived and answers every complete line. */
static void serve(struct client *c)
{
	ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		drop(c);
		return;
	}
	c->len += (size_t)n;
	c->last_ns = mono_ns();
	char *start = c->buf, *nl;
	struct insp_out *o = malloc(sizeof(*o));
	if (!o) {
		drop(c);
		return;
	}
	while ((nl = memchr(start, '\n', c->len - (size_t)(start - c->buf)))) {
		*nl = 0;
		pace();
		o->fd = c->fd;
		o->err = 0;
		o->len = 0;
		int quit = insp_handle(o, start);
		start = nl + 1;
		if (quit || o->err) {
			free(o);
			drop(c);
			return;
		}
	}
	free(o);
	size_t rest = c->len - (size_t)(start - c->buf);
	if (rest == sizeof(c->buf) - 1) {
		say(c->fd, "error request line too long\n");
		drop(c);
		return;
	}
	memmove(c->buf, start, rest);
	c->len = rest;
}

static void *server_main(void *arg)
{
	(void)arg;
	struct client cl[MAX_CLIENTS];
	for (int i = 0; i < MAX_CLIENTS; i++)
		cl[i].fd = -1;
	struct pollfd pfd[2 + MAX_CLIENTS];
	int idx[2 + MAX_CLIENTS];
	for (;;) {
		int n = 0, have_clients = 0;
		pfd[n++] = (struct pollfd){.fd = svc.stop_fd, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = srv.listen_fd, .events = POLLIN};
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (cl[i].fd >= 0) {
				idx[n] = i;
				pfd[n++] = (struct pollfd){.fd = cl[i].fd, .events = POLLIN};
				have_clients = 1;
			}
		int r = poll(pfd, (nfds_t)n, have_clients ? 1000 : -1);
		if (r < 0 && errno != EINTR)
			break;
		if (r < 0)
			continue;
		if (pfd[0].revents)
			break;
		for (int k = 2; k < n; k++)
			if (pfd[k].revents)
				serve(&cl[idx[k]]);
		if (pfd[1].revents & POLLIN)
			accept_one(cl);
		uint64_t now = mono_ns();
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (cl[i].fd >= 0 && now - cl[i].last_ns > IDLE_CLOSE_NS)
				drop(&cl[i]);
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (cl[i].fd >= 0)
			close(cl[i].fd);
	return NULL;
}

const char *ncclbpf_rt_user_dir(char *buf, size_t len)
{
	snprintf(buf, len, "/dev/shm/ncclbpf-%u", (unsigned)geteuid());
	return buf;
}

/* --- Start and stop -------------------------------------------------------------------- */

/* A directory that is not ours (refused by the trust rule) is always worth a WARN; the default
 * one being unusable otherwise (no /dev/shm in a container) only an INFO. */
static void off(int warn, const char *why)
{
	rt_log(warn ? NCCLBPF_LOG_WARN : NCCLBPF_LOG_INFO,
	       "NCCLbpf: live inspection off (%s); the plugin works as before", why);
}

static void close_listen(void)
{
	if (srv.listen_fd >= 0)
		close(srv.listen_fd);
	srv.listen_fd = -1;
}

static int start(struct rt_service *s)
{
	if (!ncclbpf_env_bool("NCCLBPF_INSPECT"))
		return -1;
	rt_ident_read(&insp_ident.id);
	/* at most 1 s (the table's range): stopping never waits on it anyway (pace()) */
	srv.min_interval_ns = ncclbpf_env_uint("NCCLBPF_INSPECT_INTERVAL_US") * 1000ull;
	const char *cp = ncclbpf_env_str("NCCLBPF_CP_DIR");
	int explicit_dir = cp != NULL;
	if (explicit_dir && cp_dir_refused()) {
		off(0, "NCCLBPF_CP_DIR refused");
		return -1;
	}
	insp_ident.cp = explicit_dir; /* NCCLBPF_CP_DIR also turns the control plane on */
	char why[4400];
	if (explicit_dir)
		snprintf(insp_ident.dir, sizeof(insp_ident.dir), "%s", cp);
	else
		ncclbpf_rt_user_dir(insp_ident.dir, sizeof(insp_ident.dir));
	char procs[4200];
	snprintf(procs, sizeof(procs), "%s/procs", insp_ident.dir);
	/* The default directory must be ours alone; a shared control-plane directory is the
	 * job's, but it and the procs directory in it must still be trusted (trusted_path.h):
	 * nothing is created in a directory another user made or can write. */
	int fd = ncclbpf_path_open_dir(
	    insp_ident.dir, NCCLBPF_PATH_CREATE | (explicit_dir ? 0 : NCCLBPF_PATH_PRIVATE), why,
	    sizeof(why));
	if (fd >= 0) {
		close(fd);
		fd = ncclbpf_path_open_dir(procs, NCCLBPF_PATH_CREATE, why, sizeof(why));
	}
	if (fd < 0) {
		off(explicit_dir || fd == -EPERM, why);
		return -1;
	}
	close(fd);
	int len = snprintf(srv.sock_path, sizeof(srv.sock_path), "%s/%s.%d.sock", procs,
			   insp_ident.id.host, insp_ident.id.pid);
	if (len < 0 || len >= (int)sizeof(srv.sock_path)) {
		snprintf(why, sizeof(why), "socket path in %s longer than %zu bytes", procs,
			 sizeof(srv.sock_path) - 1);
		off(explicit_dir, why);
		return -1;
	}
	/* The record: the socket's name without ".sock". */
	memcpy(srv.rec_path, srv.sock_path, (size_t)len - 5);
	srv.rec_path[len - 5] = 0;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, srv.sock_path, (size_t)len + 1);
	unlink(srv.sock_path); /* left by an earlier process with our pid */
	srv.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (srv.listen_fd < 0 || bind(srv.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(srv.sock_path, 0600) != 0 || listen(srv.listen_fd, 16) != 0) {
		snprintf(why, sizeof(why), "socket %s: %s", srv.sock_path, strerror(errno));
		close_listen();
		unlink(srv.sock_path);
		off(explicit_dir, why);
		return -1;
	}
	int e = write_record(srv.rec_path);
	if (e) {
		snprintf(why, sizeof(why), "cannot write %s: %s", srv.rec_path, strerror(-e));
		close_listen();
		unlink(srv.sock_path);
		off(explicit_dir, why);
		return -1;
	}
	e = rt_service_spawn(s, server_main, NULL);
	if (e) {
		snprintf(why, sizeof(why), "cannot start its thread: %s", strerror(e));
		finish(1);
		off(explicit_dir, why);
		return -1;
	}
	rt_log(NCCLBPF_LOG_INFO, "NCCLbpf: live inspection on %s (ncclbpf ps, stat, map)",
	       srv.sock_path);
	return 0;
}

static void finish(int mine)
{
	if (mine) {
		unlink(srv.sock_path);
		unlink(srv.rec_path);
	}
	close_listen();
}

void rt_inspect_start(void)
{
	rt_service_start(&svc);
}

void rt_inspect_stop(void)
{
	rt_service_stop(&svc);
}

/* Library unload or process exit with communicators still open: stop the thread (it must not
 * outlive its code) and remove the files. */
__attribute__((destructor)) static void inspect_fini(void)
{
	rt_service_fini(&svc);
}
