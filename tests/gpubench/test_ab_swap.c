/* gpubench --ab's in-job policy switch (tools/gpubench/ab_swap.c) against the shipped plugin
 * loaded as NCCL loads a tuner: each switch must be active (a newer version, from the live
 * file) when gb_swap_to returns; a bundle the plugin rejects and a missing file are errors that
 * leave the running version in place.
 * usage: test_ab_swap PLUGIN.so POLICY-DIR */
#include <stdlib.h>
#include <unistd.h>

#include "ab_swap.h"
#include "check.h"
#include "harness.h"

static void quiet(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		  const char *fmt, ...)
{
	(void)level;
	(void)flags;
	(void)file;
	(void)line;
	(void)fmt;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s PLUGIN.so POLICY-DIR\n", argv[0]);
		return 2;
	}
	char dir[] = "/tmp/ncclbpf-ab-XXXXXX", live[256], noop[4200], sa[4200], bad[4200];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(live, sizeof(live), "%s/live.o", dir);
	snprintf(noop, sizeof(noop), "%s/noop.o", argv[2]);
	snprintf(sa, sizeof(sa), "%s/size_aware.o", argv[2]);
	snprintf(bad, sizeof(bad), "%s/unsafe/null_deref.o", argv[2]);
	/* Registered for inspection in the default place; NCCLBPF_CP_DIR would also turn on the
	 * control plane, which disables the file watcher. */
	unsetenv("NCCLBPF_CP_DIR");
	setenv("NCCLBPF_POLICY", live, 1);
	unsetenv("NCCLBPF_WATCH");
	unsetenv("NCCLBPF_INSPECT");

	struct gb_swap s;
	char err[512];
	gb_swap_init(&s, live);
	/* Before the plugin runs nobody answers. */
	CHECK(gb_swap_to(&s, noop, 100, err, sizeof(err)) == -1);
	CHECK(strstr(err, "not registered") != NULL);

	char cmd[9000];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", noop, live);
	CHECK(system(cmd) == 0);
	struct harness_plugin P;
	CHECK(harness_open(&P, argv[1]) == 0 && P.v5);
	void *ctx = NULL;
	CHECK(P.v5->init(&ctx, 77, 8, 1, quiet, NULL, NULL) == ncclSuccess && ctx);

	uint64_t last = 0;
	const char *seq[] = {sa, noop, sa, noop};
	for (int i = 0; i < 4; i++) {
		int rc = gb_swap_to(&s, seq[i], 5000, err, sizeof(err));
		if (rc)
			fprintf(stderr, "swap %d: %s\n", i, err);
		CHECK(rc == 0);
		CHECK(s.version > last);
		last = s.version;
	}
	/* Rejected by the verifier: an error, the version stays. */
	CHECK(gb_swap_to(&s, bad, 5000, err, sizeof(err)) == -1);
	CHECK(strstr(err, "rejected") != NULL);
	CHECK(gb_swap_to(&s, sa, 5000, err, sizeof(err)) == 0 && s.version == last + 1);
	/* Missing file: nothing installed, nothing waited for. */
	CHECK(gb_swap_to(&s, "/nonexistent/x.o", 5000, err, sizeof(err)) == -1);
	CHECK(strstr(err, "No such file") != NULL);
	gb_swap_close(&s);

	P.v5->finalize(ctx);
	harness_close(&P);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	printf("test_ab_swap: last version %llu\n", (unsigned long long)last);
	return check_summary("test_ab_swap");
}
