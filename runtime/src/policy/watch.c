/* Hot reload on file change: one thread watches the bundle's directory with inotify and
 * reloads when the bundle file is written, replaced by rename (how `ncclbpf reload` and most
 * deployment tools install files atomically) or touched. Watching the directory rather than
 * the file survives the file being replaced. The thread is started at the first acquire and
 * stopped (woken through an eventfd, then joined) at the last release.
 *
 * Stopping never waits long: the thread reads the bundle outside reload_lock (a FIFO or a
 * directory is refused at once, trusted_path.h), but a read can still hang on a stalled
 * filesystem. After STOP_WAIT_MS the thread is left behind with a WARN: it owns its state (freed
 * by whichever of the two lets go last), activates nothing once told to stop, and exits when its
 * read returns; the library's code stays mapped (-z nodelete). */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "base/rt_service.h"
#include "policy.h"

#define STOP_WAIT_MS 2000

struct watcher {
	pthread_t thread;
	int ino_fd, stop_fd;
	int stopping;  /* set before the thread is woken: nothing is activated after it */
	int reloading; /* 1 while a reload runs (read, then load under reload_lock) */
	int refs;      /* the thread's and the owner's */
	char path[4096];
	char base[NAME_MAX + 1];
};

/* Started and stopped under the runtime's init_lock (first acquire, last release). */
static struct watcher *cur;

static void watcher_put(struct watcher *w)
{
	if (__atomic_sub_fetch(&w->refs, 1, __ATOMIC_ACQ_REL))
		return;
	close(w->ino_fd);
	close(w->stop_fd);
	free(w);
}

static void reload_now(struct watcher *w)
{
	struct ncclbpf_reload_report r = {.sz = sizeof(r)};
	__atomic_store_n(&w->reloading, 1, __ATOMIC_RELEASE);
	int e = rt_reload(w->path, &r, &w->stopping);
	__atomic_store_n(&w->reloading, 0, __ATOMIC_RELEASE);
	if (e && e != -ECANCELED)
		rt_log(NCCLBPF_LOG_WARN,
		       "NCCLbpf: reload of %s rejected (%s); version %llu stays active", w->path,
		       r.msg, (unsigned long long)r.version);
}

static void *watch_main(void *arg)
{
	struct watcher *w = arg;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd pfd[2] = {{.fd = w->ino_fd, .events = POLLIN},
				{.fd = w->stop_fd, .events = POLLIN}};
	while (!__atomic_load_n(&w->stopping, __ATOMIC_ACQUIRE)) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;
		ssize_t n = read(w->ino_fd, buf, sizeof(buf));
		if (n <= 0)
			continue;
		int hit = 0;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			if (ev->len && !strcmp(ev->name, w->base))
				hit = 1;
			p += sizeof(*ev) + ev->len;
		}
		/* Several events for one replacement (write, close, attrib) give one reload. */
		if (hit)
			reload_now(w);
	}
	watcher_put(w);
	return NULL;
}

int rt_watch_start(const char *path)
{
	if (cur)
		return 0;
	struct watcher *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ino_fd = w->stop_fd = -1;
	snprintf(w->path, sizeof(w->path), "%s", path);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : dir;
	int err = 0;
	if (!*base)
		err = -EINVAL;
	else if (strlen(base) >= sizeof(w->base))
		err = -ENAMETOOLONG;
	if (err) {
		free(w);
		return err;
	}
	memcpy(w->base, base, strlen(base) + 1);
	if (slash == dir)
		dir[1] = 0;
	else if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	w->ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (w->ino_fd < 0 ||
	    inotify_add_watch(w->ino_fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_ATTRIB) < 0)
		goto fail;
	w->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (w->stop_fd < 0)
		goto fail;
	w->refs = 2;
	err = rt_thread_start(&w->thread, watch_main, w);
	if (err) {
		errno = err;
		goto fail;
	}
	__atomic_store_n(&cur, w, __ATOMIC_RELEASE);
	return 0;
fail:
	err = -errno;
	if (w->ino_fd >= 0)
		close(w->ino_fd);
	if (w->stop_fd >= 0)
		close(w->stop_fd);
	free(w);
	return err;
}

void rt_watch_stop(void)
{
	struct watcher *w = cur;
	if (!w)
		return;
	__atomic_store_n(&cur, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&w->stopping, 1, __ATOMIC_RELEASE);
	uint64_t one = 1;
	if (write(w->stop_fd, &one, sizeof(one)) != sizeof(one))
		rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: cannot wake the watcher thread");
	struct timespec until = rt_time_after(CLOCK_REALTIME, STOP_WAIT_MS * 1000000ull);
	if (pthread_timedjoin_np(w->thread, NULL, &until) != 0) {
		rt_log(NCCLBPF_LOG_WARN,
		       "NCCLbpf: the policy watcher did not stop within %d ms (%s %s: a stalled "
		       "filesystem?); it is left behind and exits when that returns, activating "
		       "nothing",
		       STOP_WAIT_MS,
		       __atomic_load_n(&w->reloading, __ATOMIC_ACQUIRE) ? "reloading" : "watching",
		       w->path);
		pthread_detach(w->thread);
	}
	watcher_put(w);
}

int rt_watch_running(void)
{
	return __atomic_load_n(&cur, __ATOMIC_ACQUIRE) != NULL;
}
