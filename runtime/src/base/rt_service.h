/* A background service of the process (runtime/src/base/rt_service.c): one thread of ours and
 * what it serves (sockets, files), started once, stopped by the process that started it. The
 * inspection server and the telemetry exporter are two.
 *
 * A forked child inherits the record but not the thread: stopping there stops nothing of the
 * parent's (no wake-up, no join, no file removed), it only closes the child's copies; the child
 * may then start a service of its own. The library's destructor stops it with a trylock: if a
 * release is stopping it right now on another thread, that one finishes the job. */
#ifndef NCCLBPF_RT_SERVICE_H
#define NCCLBPF_RT_SERVICE_H

#include <pthread.h>
#include <sys/types.h>

struct rt_service {
	/* Sets the service up and starts its thread with rt_service_spawn; 0 once it runs, else
	 * it has undone its work (and said why). Called under the lock when it does not run. */
	int (*start)(struct rt_service *s);
	/* After a stop. mine: the process that started it (its thread has returned): remove
	 * what it made; 0: a forked child, close the inherited copies only. */
	void (*finish)(int mine);
	pthread_mutex_t lock; /* start and stop */
	int running;
	pid_t owner; /* the process that started the thread */
	pthread_t thread;
	int stop_fd; /* an eventfd: the thread returns once it is readable */
};

#define RT_SERVICE_INIT(start_fn, finish_fn)                                                       \
	{                                                                                          \
		.start = (start_fn), .finish = (finish_fn), .lock = PTHREAD_MUTEX_INITIALIZER,     \
		.stop_fd = -1                                                                      \
	}

/* From s->start: makes s->stop_fd and starts s->thread running main(arg). 0, or the error
 * (errno value); on error nothing is left of either. */
int rt_service_spawn(struct rt_service *s, void *(*main)(void *), void *arg);
/* Starts s unless it runs (a copy inherited by a forked child is dropped first). */
void rt_service_start(struct rt_service *s);
void rt_service_stop(struct rt_service *s);
/* For a library destructor: stops s unless another thread holds its lock. */
void rt_service_fini(struct rt_service *s);

/* Starts a thread of ours with every signal blocked: it never takes the application's. 0 or the
 * error of pthread_create. */
int rt_thread_start(pthread_t *t, void *(*main)(void *), void *arg);

#endif
