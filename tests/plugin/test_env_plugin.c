/* The env plugin tables of the shipped library, loaded the way NCCL loads them (dlopen
 * RTLD_NOW|RTLD_LOCAL, dlsym by name): both versions initialise, pass the process environment
 * through unchanged, default NCCL_TUNER_PLUGIN and NCCL_PROFILER_PLUGIN to the library itself
 * unless the user set them, leave NCCL_NET_PLUGIN alone without a bundle asking for it,
 * return pointers that stay valid and stable, never log, and serve 8 threads at once.
 *
 * usage: test_env_plugin LIB */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nccl_env.h"

#define N_THREADS 8
#define N_NAMES	  16
#define N_ITERS	  5000

static atomic_int logger_calls;

static void count_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
			 const char *fmt, ...)
{
	(void)level, (void)flags, (void)file, (void)line, (void)fmt;
	atomic_fetch_add(&logger_calls, 1);
}

static int same_str(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

struct shared {
	const char *(*get_env)(const char *);
	const char *self;
	const char *seen[N_THREADS][N_NAMES]; /* first pointer each thread got per name */
	atomic_int mismatches;
	atomic_int next_id;
	pthread_barrier_t start;
};

static void name_of(char *buf, size_t n, int i)
{
	snprintf(buf, n, "NCCL_ENVTEST_RACE_%d", i);
}

static void *worker(void *arg)
{
	struct shared *s = arg;
	int id = atomic_fetch_add(&s->next_id, 1);
	char name[64], want[64];
	pthread_barrier_wait(&s->start);
	for (int it = 0; it < N_ITERS; it++) {
		int i = (it + id) % N_NAMES;
		name_of(name, sizeof(name), i);
		snprintf(want, sizeof(want), "value-%d", i);
		const char *v = s->get_env(name);
		if (!same_str(v, want))
			atomic_fetch_add(&s->mismatches, 1);
		if (!s->seen[id][i])
			s->seen[id][i] = v;
		else if (s->seen[id][i] != v)
			atomic_fetch_add(&s->mismatches, 1);
		if (s->get_env("NCCL_ENVTEST_NEVER_SET") != NULL)
			atomic_fetch_add(&s->mismatches, 1);
		if (it % 64 == 0 && s->get_env("NCCL_TUNER_PLUGIN") != s->self)
			atomic_fetch_add(&s->mismatches, 1);
	}
	return NULL;
}

static void test_concurrent(const char *(*get_env)(const char *), const char *self)
{
	static struct shared s;
	char name[64], val[64];
	for (int i = 0; i < N_NAMES; i++) {
		name_of(name, sizeof(name), i);
		snprintf(val, sizeof(val), "value-%d", i);
		setenv(name, val, 1); /* all set before the threads: setenv is not thread-safe */
	}
	memset(&s, 0, sizeof(s));
	s.get_env = get_env;
	s.self = self;
	pthread_barrier_init(&s.start, NULL, N_THREADS);
	pthread_t t[N_THREADS];
	for (int i = 0; i < N_THREADS; i++)
		CHECK(pthread_create(&t[i], NULL, worker, &s) == 0);
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&s.start);
	CHECK_EQ_U64(atomic_load(&s.mismatches), 0);
	/* Racing first look-ups of the same name still end up sharing one interned copy. */
	for (int i = 0; i < N_NAMES; i++)
		for (int k = 1; k < N_THREADS; k++)
			CHECK(s.seen[k][i] == s.seen[0][i]);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s LIB\n", argv[0]);
		return 2;
	}
	unsetenv("NCCL_TUNER_PLUGIN");
	unsetenv("NCCL_PROFILER_PLUGIN");
	unsetenv("NCCL_NET_PLUGIN");
	unsetenv("NCCLBPF_POLICY"); /* no bundle: nothing asks for the net plugin */
	unsetenv("NCCL_ENVTEST_NEVER_SET");

	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	const ncclEnv_v1_t *v1 = dlsym(h, "ncclEnvPlugin_v1");
	const ncclEnv_v2_t *v2 = dlsym(h, "ncclEnvPlugin_v2");
	CHECK(v1 && v2);
	if (!v1 || !v2)
		return check_summary("test_env_plugin");
	CHECK(v1->name && v1->name[0] && v2->name && v2->name[0]);
	CHECK(v1->init && v1->getEnv && v1->finalize && v2->init && v2->getEnv && v2->finalize);

	/* init succeeds for the versions NCCL reports, with and without a suffix. */
	CHECK(v1->init(2, 28, 9, "") == ncclSuccess);
	CHECK(v1->init(2, 28, 7, NULL) == ncclSuccess);
	CHECK(v2->init(2, 30, 7, "", count_logger) == ncclSuccess);
	CHECK(v2->init(2, 30, 7, "x", NULL) == ncclSuccess);

	/* Pass-through: set, empty, unset. */
	setenv("NCCL_ENVTEST_A", "hello", 1);
	setenv("NCCL_ENVTEST_EMPTY", "", 1);
	const char *a1 = v1->getEnv("NCCL_ENVTEST_A");
	CHECK(same_str(a1, "hello"));
	CHECK(same_str(v2->getEnv("NCCL_ENVTEST_EMPTY"), ""));
	CHECK(v1->getEnv("NCCL_ENVTEST_NEVER_SET") == NULL);
	CHECK(v2->getEnv("NCCL_ENVTEST_NEVER_SET") == NULL);
	CHECK(v1->getEnv(NULL) == NULL);

	/* Stability: the same pointer for the same value; old pointers stay readable after the
	 * value changes (ASan would flag a freed one); back to the old value, the old pointer. */
	CHECK(v1->getEnv("NCCL_ENVTEST_A") == a1);
	CHECK(v2->getEnv("NCCL_ENVTEST_A") == a1);
	setenv("NCCL_ENVTEST_A", "world", 1);
	const char *a2 = v1->getEnv("NCCL_ENVTEST_A");
	CHECK(same_str(a2, "world"));
	CHECK(same_str(a1, "hello"));
	setenv("NCCL_ENVTEST_A", "hello", 1);
	CHECK(v1->getEnv("NCCL_ENVTEST_A") == a1);
	/* The interned copy is not the environment's own storage: it survives unsetenv. */
	unsetenv("NCCL_ENVTEST_A");
	CHECK(v1->getEnv("NCCL_ENVTEST_A") == NULL);
	CHECK(same_str(a1, "hello"));

	/* One-variable activation: an unset NCCL_TUNER_PLUGIN names this very library. */
	char want[PATH_MAX];
	CHECK(realpath(argv[1], want) != NULL);
	const char *self = v1->getEnv("NCCL_TUNER_PLUGIN");
	CHECK(same_str(self, want));
	CHECK(v2->getEnv("NCCL_TUNER_PLUGIN") == self);
	if (self) {
		/* NCCL's tuner loader dlopens that path: same mapping, and it has tuner tables. */
		void *h2 = dlopen(self, RTLD_NOW | RTLD_LOCAL);
		CHECK(h2 == h);
		CHECK(h2 && dlsym(h2, "ncclTunerPlugin_v5") != NULL);
		if (h2)
			dlclose(h2);
	}
	/* Precedence: the user's value wins, including "none" and the empty string. */
	setenv("NCCL_TUNER_PLUGIN", "none", 1);
	CHECK(same_str(v1->getEnv("NCCL_TUNER_PLUGIN"), "none"));
	setenv("NCCL_TUNER_PLUGIN", "", 1);
	CHECK(same_str(v2->getEnv("NCCL_TUNER_PLUGIN"), ""));
	setenv("NCCL_TUNER_PLUGIN", "/opt/other/libnccl-tuner-x.so", 1);
	CHECK(same_str(v1->getEnv("NCCL_TUNER_PLUGIN"), "/opt/other/libnccl-tuner-x.so"));
	unsetenv("NCCL_TUNER_PLUGIN");
	CHECK(v1->getEnv("NCCL_TUNER_PLUGIN") == self);

	/* The profiler variable follows the same rule, with its own stable pointer. */
	const char *prof = v2->getEnv("NCCL_PROFILER_PLUGIN");
	CHECK(same_str(prof, want));
	CHECK(v1->getEnv("NCCL_PROFILER_PLUGIN") == prof);
	setenv("NCCL_PROFILER_PLUGIN", "none", 1);
	CHECK(same_str(v1->getEnv("NCCL_PROFILER_PLUGIN"), "none"));
	setenv("NCCL_PROFILER_PLUGIN", "", 1);
	CHECK(same_str(v2->getEnv("NCCL_PROFILER_PLUGIN"), ""));
	unsetenv("NCCL_PROFILER_PLUGIN");
	CHECK(v2->getEnv("NCCL_PROFILER_PLUGIN") == prof);
	CHECK(v1->getEnv("NCCL_TUNER_PLUGIN") == self);

	/* The net plugin is never defaulted without a bundle asking (test_env_served: with one);
	 * the user's value passes through. */
	CHECK(v1->getEnv("NCCL_NET_PLUGIN") == NULL);
	CHECK(v2->getEnv("NCCL_NET_PLUGIN") == NULL);
	setenv("NCCL_NET_PLUGIN", "ib", 1);
	CHECK(same_str(v1->getEnv("NCCL_NET_PLUGIN"), "ib"));
	unsetenv("NCCL_NET_PLUGIN");
	CHECK(v1->getEnv("NCCL_NET_PLUGIN") == NULL);

	test_concurrent(v1->getEnv, self);
	test_concurrent(v2->getEnv, self);

	/* finalize succeeds and leaves served strings valid (NCCL may still hold them). */
	CHECK(v1->finalize() == ncclSuccess);
	CHECK(v2->finalize() == ncclSuccess);
	CHECK(same_str(a1, "hello") && same_str(a2, "world"));
	CHECK(same_str(self, want));

	/* getEnv and init never log (the logger can deadlock NCCL, docs/design.md §6.12). */
	CHECK_EQ_U64(atomic_load(&logger_calls), 0);
	dlclose(h);
	return check_summary("test_env_plugin");
}
