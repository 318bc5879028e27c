/* Background services: start once, stop by the owner only, trylock in the destructor
 * (rt_service.h). */
#include "rt_service.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rt_internal.h"

int rt_thread_start(pthread_t *t, void *(*main)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int e = pthread_create(t, NULL, main, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return e;
}

int rt_service_spawn(struct rt_service *s, void *(*main)(void *), void *arg)
{
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (s->stop_fd < 0)
		return errno;
	int e = rt_thread_start(&s->thread, main, arg);
	if (e) {
		close(s->stop_fd);
		s->stop_fd = -1;
	}
	return e;
}

static void stop_locked(struct rt_service *s)
{
	if (!s->running)
		return;
	s->running = 0;
	int mine = s->owner == getpid();
	if (mine) {
		uint64_t one = 1;
		if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one)) {
			/* Not joined (it would wait for ever) and nothing it uses is freed. */
			rt_log(NCCLBPF_LOG_WARN,
			       "NCCLbpf: cannot wake a service thread to stop it");
			return;
		}
		pthread_join(s->thread, NULL);
	}
	s->finish(mine);
	close(s->stop_fd);
	s->stop_fd = -1;
}

void rt_service_start(struct rt_service *s)
{
	pthread_mutex_lock(&s->lock);
	if (s->running && s->owner != getpid())
		stop_locked(s); /* a forked child: drop the parent's copy, start its own */
	if (!s->running && s->start(s) == 0) {
		s->running = 1;
		s->owner = getpid();
	}
	pthread_mutex_unlock(&s->lock);
}

void rt_service_stop(struct rt_service *s)
{
	pthread_mutex_lock(&s->lock);
	stop_locked(s);
	pthread_mutex_unlock(&s->lock);
}

void rt_service_fini(struct rt_service *s)
{
	if (pthread_mutex_trylock(&s->lock) != 0)
		return;
	stop_locked(s);
	pthread_mutex_unlock(&s->lock);
}
