/* The resource limits every bundle is loaded under (docs/security.md, Limits). The engine's
 * loader compares (ebpf_object__check_limits, before it creates a map or verifies a program);
 * this file only says what the limits are: fixed defaults and the operator's
 * NCCLBPF_MAX_MAP_BYTES. */
#include <pthread.h>
#include <stdlib.h>

#include "ncclbpf/object.h"
#include "rt_internal.h"

#define MAP_BYTES_DEFAULT (1ull << 30)	 /* 1 GiB of maps per bundle */
#define MAP_BYTES_MIN	  (1ull << 20)	 /* 1 MiB */
#define MAP_BYTES_MAX	  (1ull << 40)	 /* 1 TiB */
#define RINGBUF_BYTES	  (256ull << 20) /* one ring buffer */
/* One program per hook is all a bundle can attach; the rest bounds what open/verify may cost. */
#define PROGS 16u
#define INSNS (128u << 10) /* instructions of all programs together */

static uint64_t map_bytes = MAP_BYTES_DEFAULT;

/* NCCLBPF_MAX_MAP_BYTES: bytes, with an optional K, M, G or T suffix (powers of 1024), in
 * MAP_BYTES_MIN..MAP_BYTES_MAX. Read once per process; anything else keeps the default with one
 * WARN. (The one reader of this variable: route it through a shared environment table when
 * there is one.) */
static void read_map_bytes(void)
{
	const char *v = getenv("NCCLBPF_MAX_MAP_BYTES");
	if (!v || !*v)
		return;
	char *end;
	unsigned long long n = strtoull(v, &end, 10);
	unsigned shift = 0;
	switch (*end) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	}
	end += shift != 0;
	if (v[0] < '0' || v[0] > '9' || *end || n > (MAP_BYTES_MAX >> shift) ||
	    (n << shift) < MAP_BYTES_MIN) {
		rt_log(
		    NCCLBPF_LOG_WARN,
		    "NCCLbpf: NCCLBPF_MAX_MAP_BYTES=%s ignored (want bytes, optionally with K, M, "
		    "G or T, from 1M to 1T); using 1G",
		    v);
		return;
	}
	map_bytes = n << shift;
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
