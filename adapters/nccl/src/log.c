/* NCCL logger bridge (log.h). */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "env_settings.h"
#include "ncclbpf/envvars.h"
#include "ncclbpf/runtime.h"

static ncclDebugLogger_t nccl_logger;

static void bridge(int level, const char *msg)
{
	ncclDebugLogger_t fn = __atomic_load_n(&nccl_logger, __ATOMIC_ACQUIRE);
	if (!fn) {
		if (level == NCCLBPF_LOG_WARN)
			fprintf(stderr, "NCCLbpf WARN %s\n", msg);
		return;
	}
	if (level == NCCLBPF_LOG_WARN)
		fn(NCCL_LOG_WARN, NCCL_ALL, __FILE__, __LINE__, "%s", msg);
	else
		fn(NCCL_LOG_INFO, NCCL_INIT | NCCL_TUNING, __FILE__, __LINE__, "%s", msg);
}

void adapter_set_logger(ncclDebugLogger_t fn)
{
	if (fn)
		__atomic_store_n(&nccl_logger, fn, __ATOMIC_RELEASE);
	ncclbpf_rt_set_logger(bridge);
}

struct served_arg {
	const char *name;
	int found;
};

static void served(const char *name, const char *value, const char *source, void *arg)
{
	(void)source;
	struct served_arg *a = arg;
	if (!strcmp(name, a->name) && value[0] && strcasecmp(value, "none"))
		a->found = 1;
}

static int net_in_use;

void adapter_net_in_use(void)
{
	__atomic_store_n(&net_in_use, 1, __ATOMIC_RELAXED);
}

int adapter_via_net_fallback(const char *selector)
{
	if (!__atomic_load_n(&net_in_use, __ATOMIC_RELAXED))
		return 0;
	if (ncclbpf_env_str(selector))
		return 0;
	struct served_arg a = {.name = selector};
	env_served_foreach(served, &a);
	return !a.found;
}
