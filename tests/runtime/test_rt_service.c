/* A background service of the runtime (runtime/src/base/rt_service.h), the shape of the
 * inspection server and the telemetry exporter, with a toy service of its own: a thread that
 * answers each byte written to its request pipe with one byte on its reply pipe.
 * - Started twice: one start, one thread.
 * - A forked child that stops it stops nothing of the parent's (no wake-up through the shared
 *   eventfd, no join of a thread it does not have, the owner's clean-up not run); the parent
 *   still serves after the child exits. A child that starts it drops its copy and serves with
 *   a service of its own.
 * - Stop: the thread has returned before the owner's clean-up; a second stop does nothing.
 * - The destructor path: nothing while another thread holds the lock; at process exit it stops
 *   the service (the clean-up runs after the thread returned). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "rt_service.h"

static int req[2] = {-1, -1}, rep[2] = {-1, -1};
static atomic_int threads_started, threads_returned;
static atomic_int returned; /* the thread of the last start has returned */
static int starts, finishes_mine, finishes_child, finish_after_return;
static int report_fd = -1; /* the exiting child's destructor reports here */

static void *toy_main(void *arg)
{
	const struct rt_service *s = arg;
	atomic_fetch_add(&threads_started, 1);
	for (;;) {
		struct pollfd p[2] = {{.fd = s->stop_fd, .events = POLLIN},
				      {.fd = req[0], .events = POLLIN}};
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents)
			break;
		char c;
		if (read(req[0], &c, 1) == 1 && write(rep[1], &c, 1) != 1)
			break;
	}
	atomic_fetch_add(&threads_returned, 1);
	atomic_store(&returned, 1);
	return NULL;
}

static int toy_start(struct rt_service *s)
{
	starts++;
	atomic_store(&returned, 0);
	if (pipe(req) != 0 || pipe(rep) != 0)
		return -1;
	return rt_service_spawn(s, toy_main, s);
}

static void close_pipes(void)
{
	for (int i = 0; i < 2; i++) {
		close(req[i]);
		close(rep[i]);
		req[i] = rep[i] = -1;
	}
}

static void toy_finish(int mine)
{
	if (mine) {
		finishes_mine++;
		finish_after_return = atomic_load(&returned);
		if (report_fd >= 0) {
			char r = finish_after_return ? 'F' : 'f';
			if (write(report_fd, &r, 1) != 1)
				_exit(3);
		}
	} else {
		finishes_child++;
	}
	close_pipes();
}

static struct rt_service toy = RT_SERVICE_INIT(toy_start, toy_finish);

/* The process exits with the service running: the destructor stops it. */
__attribute__((destructor)) static void toy_fini(void)
{
	rt_service_fini(&toy);
}

/* One request answered within 5 s (a hang guard, not a timing). */
static int serves(char c)
{
	if (write(req[1], &c, 1) != 1)
		return 0;
	struct pollfd p = {.fd = rep[0], .events = POLLIN};
	char r = 0;
	return poll(&p, 1, 5000) == 1 && read(rep[0], &r, 1) == 1 && r == c;
}

/* The child's exit status, or -1 when it did not exit within 10 s (killed). */
static int wait_child(pid_t pid)
{
	for (int i = 0; i < 1000; i++) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

int main(void)
{
	/* Started twice: one start, one thread. */
	rt_service_start(&toy);
	rt_service_start(&toy);
	CHECK_EQ_U64(starts, 1);
	CHECK(toy.running);
	CHECK(serves('a'));
	CHECK_EQ_U64(atomic_load(&threads_started), 1);

	/* A forked child's stop leaves the parent's service alone. */
	pid_t pid = fork();
	if (pid == 0) {
		rt_service_stop(&toy);
		/* not the owner: only its copies closed, nothing joined */
		_exit(finishes_child == 1 && finishes_mine == 0 && !toy.running ? 0 : 2);
	}
	int st = wait_child(pid);
	CHECKF(st == 0, "child that stopped the service: status %d", st);
	CHECKF(serves('b'), "the parent's service no longer answers after a child stopped it");
	CHECK_EQ_U64(finishes_mine, 0);

	/* A forked child's start drops its copy and starts a service of its own. */
	pid = fork();
	if (pid == 0) {
		rt_service_start(&toy);
		int ok = starts == 2 && finishes_child == 1 && serves('c');
		rt_service_stop(&toy);
		_exit(ok && finishes_mine == 1 && finish_after_return ? 0 : 2);
	}
	st = wait_child(pid);
	CHECKF(st == 0, "child that started its own service: status %d", st);
	CHECKF(serves('d'), "the parent's service no longer answers after a child started one");

	/* The destructor path while another thread holds the lock: nothing (that one stops it). */
	pthread_mutex_lock(&toy.lock);
	rt_service_fini(&toy);
	pthread_mutex_unlock(&toy.lock);
	CHECK(toy.running);
	CHECK_EQ_U64(finishes_mine, 0);

	/* Stop: the thread returned before the owner's clean-up; twice is once. */
	rt_service_stop(&toy);
	CHECK(!toy.running);
	CHECK_EQ_U64(finishes_mine, 1);
	CHECK(finish_after_return);
	CHECK_EQ_U64(atomic_load(&threads_returned), 1);
	rt_service_stop(&toy);
	CHECK_EQ_U64(finishes_mine, 1);

	/* Exit with the service running: the destructor stops it in the owner. */
	int rp[2];
	CHECK(pipe(rp) == 0);
	pid = fork();
	if (pid == 0) {
		close(rp[0]);
		report_fd = rp[1];
		rt_service_start(&toy);
		exit(serves('e') ? 0 : 2); /* destructors run */
	}
	close(rp[1]);
	st = wait_child(pid);
	char r = 0;
	CHECKF(st == 0 && read(rp[0], &r, 1) == 1 && r == 'F',
	       "exit with the service running: status %d, report '%c' (F: stopped, joined)", st,
	       r ? r : '-');
	close(rp[0]);
	return check_summary("test_rt_service");
}
