/* Hot reload on file change: one thread watches the bundle's directory with inotify and
 * reloads when the bundle file is written, replaced by rename (how `ncclbpf reload` and most
 * deployment tools install files atomically) or touched. Watching the directory rather than
 * the file survives the file being replaced. The thread is started at the first acquire and
 * stopped (woken through an eventfd, then joined) at the last release. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "rt_internal.h"

static struct {
	pthread_t thread;
	int running;
	int ino_fd;
	int stop_fd;
	char path[4096];
	char base[NAME_MAX + 1];
} w = {.ino_fd = -1, .stop_fd = -1};

static void reload_now(void)
{
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	if (ncclbpf_rt_reload(w.path, &r) != 0)
		rt_log(NCCLBPF_LOG_WARN,
		       "NCCLbpf: reload of %s rejected (%s); version %llu stays active", w.path,
		       r.msg, (unsigned long long)r.version);
}

static void *watch_main(void *arg)
{
	(void)arg;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd pfd[2] = {{.fd = w.ino_fd, .events = POLLIN},
				{.fd = w.stop_fd, .events = POLLIN}};
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;
		ssize_t n = read(w.ino_fd, buf, sizeof(buf));
		if (n <= 0)
			continue;
		int hit = 0;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			if (ev->len && !strcmp(ev->name, w.base))
				hit = 1;
			p += sizeof(*ev) + ev->len;
		}
		/* Several events for one replacement (write, close, attrib) give one reload. */
		if (hit)
			reload_now();
	}
	return NULL;
}

int rt_watch_start(const char *path)
{
	if (w.running)
		return 0;
	snprintf(w.path, sizeof(w.path), "%s", path);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : dir;
	if (!*base)
		return -EINVAL;
	if (strlen(base) >= sizeof(w.base))
		return -ENAMETOOLONG;
	memcpy(w.base, base, strlen(base) + 1);
	if (slash == dir)
		dir[1] = 0;
	else if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	w.ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (w.ino_fd < 0)
		return -errno;
	if (inotify_add_watch(w.ino_fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_ATTRIB) < 0)
		goto fail;
	w.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (w.stop_fd < 0)
		goto fail;
	/* The watcher must never receive the application's signals. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&w.thread, NULL, watch_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		errno = err;
		goto fail;
	}
	__atomic_store_n(&w.running, 1, __ATOMIC_RELEASE);
	return 0;
fail:
	err = -errno;
	if (w.ino_fd >= 0)
		close(w.ino_fd);
	if (w.stop_fd >= 0)
		close(w.stop_fd);
	w.ino_fd = w.stop_fd = -1;
	return err;
}

void rt_watch_stop(void)
{
	if (!w.running)
		return;
	uint64_t one = 1;
	if (write(w.stop_fd, &one, sizeof(one)) != sizeof(one))
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: cannot wake the watcher thread");
	pthread_join(w.thread, NULL);
	close(w.ino_fd);
	close(w.stop_fd);
	w.ino_fd = w.stop_fd = -1;
	__atomic_store_n(&w.running, 0, __ATOMIC_RELEASE);
}

int rt_watch_running(void)
{
	return __atomic_load_n(&w.running, __ATOMIC_ACQUIRE);
}
