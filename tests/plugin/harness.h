/* What the plugin tests share: cost tables shaped as NCCL releases shape them, a logger that
 * counts what the plugin says, and loading the plugin exactly as NCCL does. */
#ifndef NCCLBPF_TEST_HARNESS_H
#define NCCLBPF_TEST_HARNESS_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nccl_tuner.h"

/* A cost table as NCCL's getAlgoInfo builds it for one communicator: float[numAlgo][numProto],
 * -1.0 where the combination is unavailable. Shape: 6 x 3 on NCCL 2.22 (no PAT), 7 x 3 since
 * 2.23. Times (µs) follow NCCL's form latency + bytes / bandwidth with constants of the order
 * NCCL's model yields for 8 NVLink-connected H100s on one node (NVSwitch, so NVLS exists;
 * CollNet needs a CollNet plugin and PAT needs one GPU per node, so both are unavailable;
 * NVLS_TREE needs several nodes). Deterministic; not NCCL's exact numbers. */
static inline void harness_table(float *t, int num_algo, int num_proto, int coll, size_t bytes)
{
	static const float lat[7][3] = {
	    {8.0f, 10.5f, 15.0f},  /* tree */
	    {6.8f, 9.6f, 14.2f},   /* ring */
	    {-1, -1, -1},	   /* collnet direct */
	    {-1, -1, -1},	   /* collnet chain */
	    {-1.0f, -1.0f, 25.0f}, /* nvls: SIMPLE only */
	    {-1, -1, -1},	   /* nvls tree */
	    {-1, -1, -1},	   /* pat */
	};
	static const float bw[7][3] = {
	    /* GB/s = bytes per ns; NCCL's bw is in GB/s and time = bytes / (1000 * bw) µs */
	    {40.0f, 95.0f, 160.0f},
	    {45.0f, 120.0f, 190.0f},
	    {0, 0, 0},
	    {0, 0, 0},
	    {0, 0, 370.0f},
	    {0, 0, 0},
	    {0, 0, 0},
	};
	for (int a = 0; a < num_algo; a++)
		for (int p = 0; p < num_proto; p++) {
			float v = -1.0f;
			if (a < 7 && p < 3 && lat[a][p] >= 0) {
				v = lat[a][p] + (float)bytes / (1000.0f * bw[a][p]);
				/* NCCL: NVLS only for AllReduce/AllGather/ReduceScatter; tree only
				 * for AllReduce. */
				if (a == NCCL_ALGO_NVLS && (coll == 0 || coll == 1))
					v = -1.0f;
				if (a == NCCL_ALGO_TREE && coll != 4)
					v = -1.0f;
			}
			t[a * num_proto + p] = v;
		}
}

/* Logger with NCCL's signature that counts lines by level. */
static int harness_warns, harness_infos, harness_hidden_warns;
static char harness_last_warn[1024];
__attribute__((unused)) static void harness_logger(ncclDebugLogLevel level, unsigned long flags,
						   const char *file, int line, const char *fmt, ...)
{
	(void)file;
	(void)line;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (level == NCCL_LOG_WARN) {
		__atomic_add_fetch(&harness_warns, 1, __ATOMIC_RELAXED);
		snprintf(harness_last_warn, sizeof(harness_last_warn), "%s", buf);
		/* Visible with NCCL's default debug mask only if INIT or ALL is set (§6.13). */
		if (!(flags & NCCL_INIT)) {
			harness_hidden_warns++;
			fprintf(stderr, "WARN without NCCL_INIT in its flags: %s\n", buf);
		}
		fprintf(stderr, "[plugin WARN] %s\n", buf);
	} else {
		__atomic_add_fetch(&harness_infos, 1, __ATOMIC_RELAXED);
	}
}

struct harness_plugin {
	void *handle;
	const ncclTuner_v3_t *v3;
	const ncclTuner_v4_t *v4;
	const ncclTuner_v5_t *v5;
	const ncclTuner_v6_t *v6;
};

/* dlopen(RTLD_NOW | RTLD_LOCAL) and versioned symbol lookup, as NCCL's plugin loader does. */
static inline int harness_open(struct harness_plugin *p, const char *path)
{
	memset(p, 0, sizeof(*p));
	p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->handle) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	p->v3 = dlsym(p->handle, "ncclTunerPlugin_v3");
	p->v4 = dlsym(p->handle, "ncclTunerPlugin_v4");
	p->v5 = dlsym(p->handle, "ncclTunerPlugin_v5");
	p->v6 = dlsym(p->handle, "ncclTunerPlugin_v6");
	return 0;
}

static inline void harness_close(struct harness_plugin *p)
{
	if (p->handle)
		dlclose(p->handle);
	memset(p, 0, sizeof(*p));
}

#endif
