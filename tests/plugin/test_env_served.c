/* Provenance of what the env plugin serves (env_served_foreach), with a bundle that asks for
 * the net plugin (tests/plugin/policies/with_net.c). The env plugin's sources are linked in,
 * since the listing is internal to the library (only `ncclbpf stat` reads it); "this library"
 * is then this executable, which is what dladdr reports for env.c's code.
 *
 * Checks: NCCL_NET_PLUGIN resolves to this library because the bundle asks, and the user's
 * value still wins; the bundle's plain and enforced values; the tuner/profiler defaults;
 * every served (name, value, source) listed exactly once with the right source, newest first;
 * nothing unset is listed; repeats add nothing; listing while 4 threads serve new names.
 *
 * usage: test_env_served BUNDLE */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "env_settings.h"
#include "nccl_env.h"

extern const ncclEnv_v2_t ncclEnvPlugin_v2;

#define MAX_SEEN 256

struct entry {
	const char *name, *value, *source;
};

struct listing {
	struct entry e[MAX_SEEN];
	unsigned n, overflow;
};

static void collect(const char *name, const char *value, const char *source, void *arg)
{
	struct listing *l = arg;
	if (l->n < MAX_SEEN)
		l->e[l->n++] = (struct entry){name, value, source};
	else
		l->overflow++;
}

static unsigned count(const struct listing *l, const char *name, const char *value,
		      const char *source)
{
	unsigned c = 0;
	for (unsigned i = 0; i < l->n; i++)
		if (!strcmp(l->e[i].name, name) && !strcmp(l->e[i].value, value) &&
		    !strcmp(l->e[i].source, source))
			c++;
	return c;
}

static int same_str(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* Concurrency: servers add new names while listers walk the list. */
#define N_SERVERS  4
#define N_LISTERS  2
#define PER_SERVER 50
static atomic_int bad, servers_done;
static char src_bundle[PATH_MAX + 16], src_enforced[PATH_MAX + 32];

static int known_source(const char *s)
{
	return !strcmp(s, "process environment") || !strcmp(s, "ncclbpf default") ||
	       !strcmp(s, src_bundle) || !strcmp(s, src_enforced);
}

static void check_entry(const char *name, const char *value, const char *source, void *arg)
{
	(void)arg;
	if (!name || !value || !source || strncmp(name, "NCCL_", 5) || !known_source(source))
		atomic_fetch_add(&bad, 1);
}

static void *server(void *arg)
{
	int id = (int)(long)arg;
	char name[64], want[64];
	for (int i = 0; i < PER_SERVER; i++) {
		snprintf(name, sizeof(name), "NCCL_SERVEDTEST_T%d_%d", id, i);
		snprintf(want, sizeof(want), "v%d.%d", id, i);
		if (!same_str(ncclEnvPlugin_v2.getEnv(name), want))
			atomic_fetch_add(&bad, 1);
	}
	atomic_fetch_add(&servers_done, 1);
	return NULL;
}

static void *lister(void *arg)
{
	(void)arg;
	while (atomic_load(&servers_done) < N_SERVERS)
		env_served_foreach(check_entry, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s BUNDLE\n", argv[0]);
		return 2;
	}
	const char *bundle = argv[1];
	snprintf(src_bundle, sizeof(src_bundle), "bundle %s", bundle);
	snprintf(src_enforced, sizeof(src_enforced), "bundle %s (enforced)", bundle);
	char self[PATH_MAX];
	CHECK(realpath("/proc/self/exe", self) != NULL);

	setenv("NCCLBPF_POLICY", bundle, 1);
	unsetenv("NCCL_NET_PLUGIN");
	unsetenv("NCCL_TUNER_PLUGIN");
	unsetenv("NCCL_PROFILER_PLUGIN");
	unsetenv("NCCL_ALGO");
	unsetenv("NCCL_SERVEDTEST_UNSET");
	setenv("NCCL_DEBUG", "INFO", 1); /* the bundle enforces WARN */
	setenv("NCCL_SERVEDTEST_X", "abc", 1);
	for (int t = 0; t < N_SERVERS; t++)
		for (int i = 0; i < PER_SERVER; i++) {
			char name[64], val[64];
			snprintf(name, sizeof(name), "NCCL_SERVEDTEST_T%d_%d", t, i);
			snprintf(val, sizeof(val), "v%d.%d", t, i);
			setenv(name, val, 1); /* before any thread: setenv is not thread-safe */
		}

	CHECK(ncclEnvPlugin_v2.init(2, 28, 9, "", NULL) == ncclSuccess);
	static struct listing l;
	env_served_foreach(collect, &l);
	CHECK_EQ_U64(l.n, 0); /* init reads the bundle but serves nothing */

	/* Net plugin: the bundle asks, so an unset variable names this library... */
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_NET_PLUGIN"), self));
	/* ...but the bundle's line is not enforced: the user's choice wins. */
	setenv("NCCL_NET_PLUGIN", "ib", 1);
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_NET_PLUGIN"), "ib"));
	/* A plain bundle value, then the environment overriding it. */
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_ALGO"), "Ring"));
	setenv("NCCL_ALGO", "Tree", 1);
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_ALGO"), "Tree"));
	/* Enforced beats the environment. */
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_DEBUG"), "WARN"));
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_TUNER_PLUGIN"), self));
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_PROFILER_PLUGIN"), self));
	CHECK(ncclEnvPlugin_v2.getEnv("NCCL_SERVEDTEST_UNSET") == NULL);
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_SERVEDTEST_X"), "abc"));

	memset(&l, 0, sizeof(l));
	env_served_foreach(collect, &l);
	CHECK_EQ_U64(l.n, 8);
	CHECK_EQ_U64(count(&l, "NCCL_NET_PLUGIN", self, src_bundle), 1);
	CHECK_EQ_U64(count(&l, "NCCL_NET_PLUGIN", "ib", "process environment"), 1);
	CHECK_EQ_U64(count(&l, "NCCL_ALGO", "Ring", src_bundle), 1);
	CHECK_EQ_U64(count(&l, "NCCL_ALGO", "Tree", "process environment"), 1);
	CHECK_EQ_U64(count(&l, "NCCL_DEBUG", "WARN", src_enforced), 1);
	CHECK_EQ_U64(count(&l, "NCCL_TUNER_PLUGIN", self, "ncclbpf default"), 1);
	CHECK_EQ_U64(count(&l, "NCCL_PROFILER_PLUGIN", self, "ncclbpf default"), 1);
	CHECK_EQ_U64(count(&l, "NCCL_SERVEDTEST_X", "abc", "process environment"), 1);
	/* Newest first: the last new value served heads the list, the first ends it. */
	if (l.n == 8) {
		CHECK(!strcmp(l.e[0].name, "NCCL_SERVEDTEST_X"));
		CHECK(!strcmp(l.e[7].name, "NCCL_NET_PLUGIN") && !strcmp(l.e[7].value, self));
	}

	/* Serving the same values again (same sources) adds nothing. */
	unsetenv("NCCL_ALGO");
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_ALGO"), "Ring"));
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_DEBUG"), "WARN"));
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_SERVEDTEST_X"), "abc"));
	/* The same text from another source is a new entry: "Ring" from the environment. */
	setenv("NCCL_ALGO", "Ring", 1);
	CHECK(same_str(ncclEnvPlugin_v2.getEnv("NCCL_ALGO"), "Ring"));
	memset(&l, 0, sizeof(l));
	env_served_foreach(collect, &l);
	CHECK_EQ_U64(l.n, 9);
	CHECK_EQ_U64(count(&l, "NCCL_ALGO", "Ring", "process environment"), 1);
	CHECK_EQ_U64(count(&l, "NCCL_ALGO", "Ring", src_bundle), 1);

	/* Listing concurrently with getEnv adding entries: every entry seen is whole. */
	pthread_t t[N_SERVERS + N_LISTERS];
	for (long i = 0; i < N_LISTERS; i++)
		CHECK(pthread_create(&t[N_SERVERS + i], NULL, lister, NULL) == 0);
	for (long i = 0; i < N_SERVERS; i++)
		CHECK(pthread_create(&t[i], NULL, server, (void *)i) == 0);
	for (int i = 0; i < N_SERVERS + N_LISTERS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ_U64(atomic_load(&bad), 0);
	memset(&l, 0, sizeof(l));
	env_served_foreach(collect, &l);
	CHECK_EQ_U64(l.n, 9 + N_SERVERS * PER_SERVER);
	CHECK_EQ_U64(count(&l, "NCCL_SERVEDTEST_T3_49", "v3.49", "process environment"), 1);
	return check_summary("test_env_served");
}
