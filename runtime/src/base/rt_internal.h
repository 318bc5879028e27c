/* The runtime's base (runtime/src/base/, the folder every other includes and none below it):
 * the state the folders share (the process's record, the loaded policy's layout and the active
 * pointer), logging, the clock and the process's identity. What a folder offers the folders
 * above it is declared in its own header (policy/policy.h, net/net.h, cp/cp.h, telem/telem.h,
 * inspect/inspect.h); docs/architecture.md gives the order. */
#ifndef NCCLBPF_RT_INTERNAL_H
#define NCCLBPF_RT_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "ncclbpf/runtime.h"

struct ebpf_exec;
struct ebpf_object;

/* Runtime-side names of the public hot-path types (runtime.h). */
typedef ncclbpf_rt_fn rt_fn;
#define rt_hook ncclbpf_rt_hook

/* Net hooks in NCCLBPF_NET_* order minus one (connect, accept, isend, irecv, complete). */
#define RT_NET_HOOKS 5
/* When a net event reads the clock: NOW, before its program runs (the program may read time_ns
 * or duration_ns); AFTER, posts only: the completion's duration needs the posting time, which
 * the caller may take once the request is handed to the transport (off the data's path). */
#define RT_NET_CLOCK_NOW   1u
#define RT_NET_CLOCK_AFTER 2u
/* completions: the program may read duration_ns (NOW: time_ns) */
#define RT_NET_CLOCK_DUR 4u

/* A loaded policy. Immutable once published; freed only after an epoch drain. */
struct rt_policy {
	struct ncclbpf_rt_policy_hot hot; /* first: read by the inline entries of runtime.h */
	int engine;			  /* enum ncclbpf_engine_kind */
	struct rt_hook net[RT_NET_HOOKS]; /* SEC("net/connect") .. SEC("net/complete") */
	/* 1 when the net event of that slot reads the clock (bundle.c, from what the programs
	 * may read): its program reads time_ns, or, for isend/irecv, the complete program reads
	 * duration_ns (the posting time), or, for complete, it reads duration_ns. */
	uint8_t net_clock[RT_NET_HOOKS]; /* RT_NET_CLOCK_* per net hook */
	/* Posts stamped for the completion's duration_ns: one in this many per connection (1:
	 * every one). SEC("net/complete/time_every=N"), or NCCLBPF_NET_TIME_EVERY over it. */
	uint32_t net_time_every;
	struct ebpf_object *obj;       /* owns programs, code and maps (NULL for native policies) */
	void (*release)(uint64_t arg); /* native policies: called when freed */
	uint64_t release_arg;
	char name[4200];		   /* bundle path or "native:NAME" */
	struct ncclbpf_reload_report load; /* how it was loaded (times, counts), for inspection */
	/* Control plane (policy/policy_ref.c): references (the process default and every
	 * communicator bound to it; retired when the last goes), the ELF image (map-update
	 * proposals rebuild from it) and its hash. */
	_Atomic uint32_t refs;
	void *image;
	size_t image_len;
	uint64_t hash;
	/* Its per-communicator maps (templates; hot.comm_maps of them), bundle.c. */
	struct ebpf_map *comm_tmpl[64];
};

/* The process-wide active policy (rt_hot.h names it for the inline entries). Its cache line
 * holds only the words every hook call reads (rt_base.c): rt's locks are taken by slow paths
 * (reloads, inspection) that must not bounce it. */
#define rt_active ncclbpf_rt_hot_.active

struct rt_state {
	pthread_mutex_t lock;	     /* refcount, comms registry, configuration */
	pthread_mutex_t reload_lock; /* serialises reloads */
	int refcount;
	/* configuration (from the environment at the first acquire) */
	char policy_path[4096];
	int have_policy_path;
	int engine;
	int engine_forced;
	int watch;
	int debug;
	/* registry and totals */
	struct ncclbpf_comm *comms;
	uint64_t totals[NCCLBPF_STAT_MAX];
	uint64_t comms_live, comms_total;
	_Atomic uint64_t reloads_ok, reloads_failed;
	_Atomic uint64_t next_version;
};

extern struct rt_state rt;

void rt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t rt_now_ns(void);
/* The time ns from now on clock clk, as the absolute deadline pthread's timed waits take. */
struct timespec rt_time_after(clockid_t clk, uint64_t ns);

/* ident.c: the process's identity from the job's environment (host, job id, ranks, GPU),
 * shared by the inspection and the telemetry's labels; "-" where unknown. */
struct rt_ident {
	char host[65];
	char job[128];
	char rank[16], local_rank[16];
	char gpu[64];
	uint64_t start_unix_ns;
	int pid;
	unsigned uid;
};
void rt_ident_read(struct rt_ident *id);
/* Copies src keeping [A-Za-z0-9.-_:/@], every other byte as '_' (a token for a file, a record
 * or a label value). */
void rt_clean_token(char *dst, size_t len, const char *src);

#endif
