/* The resource limits every bundle is loaded under (docs/security.md, Limits). The engine's
 * loader compares (ebpf_object__check_limits, before it creates a map or verifies a program);
 * this file only says what the limits are: fixed defaults and the operator's
 * NCCLBPF_MAX_MAP_BYTES. */
#include <pthread.h>

#include "ncclbpf/envvars.h"
#include "ebpf/object.h"
#include "policy.h"

#define RINGBUF_BYTES (256ull << 20) /* one ring buffer */
/* One program per hook is all a bundle can attach; the rest bounds what open/verify may cost. */
#define PROGS 16u
#define INSNS (128u << 10) /* instructions of all programs together */

static uint64_t map_bytes;

/* NCCLBPF_MAX_MAP_BYTES, read once per process: its range (1M..1T, with K, M, G or T) and
 * default (1G) are the environment table's (envvars.c), as is the WARN for anything else. */
static void read_map_bytes(void)
{
	map_bytes = ncclbpf_env_uint("NCCLBPF_MAX_MAP_BYTES");
}

void ncclbpf_rt_bundle_limits(struct ebpf_object_limits *lim)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, read_map_bytes);
	*lim = (struct ebpf_object_limits){
	    .sz = sizeof(*lim),
	    .map_bytes = map_bytes,
	    .ringbuf_bytes = RINGBUF_BYTES,
	    .progs = PROGS,
	    .insns = INSNS,
	    .map_bytes_hint = "NCCLBPF_MAX_MAP_BYTES raises it",
	};
}
