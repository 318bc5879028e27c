/* Bundle-supplied NCCL settings through the shipped library's env plugin: the bundle named by
 * NCCLBPF_POLICY carries settings in ".ncclbpf.env" (tests/plugin/policies/with_env.c). Good
 * ones are served, refused ones are not (and reported on stderr, checked by CTest's regex), the
 * environment wins unless the bundle enforces the setting.
 *
 * usage: test_env_bundle LIB BUNDLE */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nccl_env.h"

static int same_str(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s LIB BUNDLE\n", argv[0]);
		return 2;
	}
	setenv("NCCLBPF_POLICY", argv[2], 1);
	setenv("NCCL_MAX_NCHANNELS", "32", 1); /* the bundle enforces 8 */
	setenv("NCCL_PROTO", "LL", 1);	       /* the bundle's Simple is not enforced */
	unsetenv("NCCL_MIN_NCHANNELS");	       /* the bundle's 99 is out of range */
	unsetenv("NCCL_NOT_A_PARAM");

	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	const ncclEnv_v1_t *v1 = dlsym(h, "ncclEnvPlugin_v1");
	const ncclEnv_v2_t *v2 = dlsym(h, "ncclEnvPlugin_v2");
	CHECK(v1 && v2);
	if (!v1 || !v2)
		return check_summary("test_env_bundle");
	CHECK(v1->init(2, 28, 9, "") == ncclSuccess);

	const char *maxch = v1->getEnv("NCCL_MAX_NCHANNELS");
	CHECK(same_str(maxch, "8"));
	CHECK(same_str(v1->getEnv("NCCL_PROTO"), "LL"));
	CHECK(v1->getEnv("NCCL_MIN_NCHANNELS") == NULL);
	CHECK(v1->getEnv("NCCL_NOT_A_PARAM") == NULL);
	unsetenv("NCCL_PROTO");
	CHECK(same_str(v2->getEnv("NCCL_PROTO"), "Simple"));
	unsetenv("NCCL_MAX_NCHANNELS");
	CHECK(v2->getEnv("NCCL_MAX_NCHANNELS") == maxch); /* stable pointer */
	/* Variables the bundle does not mention still pass through. */
	setenv("NCCL_DEBUG", "WARN", 1);
	CHECK(same_str(v1->getEnv("NCCL_DEBUG"), "WARN"));
	/* This bundle does not ask for the net plugin: NCCL_NET_PLUGIN stays unset. */
	unsetenv("NCCL_NET_PLUGIN");
	CHECK(v1->getEnv("NCCL_NET_PLUGIN") == NULL);
	CHECK(v1->finalize() == ncclSuccess);
	dlclose(h);
	return check_summary("test_env_bundle");
}
