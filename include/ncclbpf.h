/* ncclbpf.h — the policy SDK. The only header a policy needs:
 *
 *     #include "ncclbpf.h"
 *     SEC("tuner") int pick(struct ncclbpf_tuner_ctx *ctx) { ... return 0; }
 *
 * Build: clang -O2 -g -target bpf -mcpu=v3 -c policy.c -o policy.o
 *
 * Self-contained (no kernel or libbpf headers), following libbpf conventions: SEC(),
 * BTF-defined maps with __uint/__type/__array, helpers with Linux's numbers and names.
 * The same header compiles on the host (the engine static-asserts the context layouts
 * against its verifier tables), where the BPF-only parts are left out.
 *
 * Contexts never contain pointers. Every field has a fixed offset, explicit padding and a
 * documented unit. Fields are read-only unless marked OUT; the verifier enforces this. */
#ifndef NCCLBPF_SDK_H
#define NCCLBPF_SDK_H

/* --- Fixed-width types --------------------------------------------------------------------- */
#if defined(__bpf__)
typedef unsigned char __u8;
typedef signed char __s8;
typedef unsigned short __u16;
typedef short __s16;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef long long __s64;
#else
#include <linux/types.h>
#endif

/* --- NCCL ids (values equal NCCL's enums; see ncclFunc_t and the algorithm/protocol ids) ---- */
#define NCCLBPF_COLL_BROADCAST	   0
#define NCCLBPF_COLL_REDUCE	   1
#define NCCLBPF_COLL_ALLGATHER	   2
#define NCCLBPF_COLL_REDUCESCATTER 3
#define NCCLBPF_COLL_ALLREDUCE	   4

#define NCCLBPF_ALGO_TREE	    0
#define NCCLBPF_ALGO_RING	    1
#define NCCLBPF_ALGO_COLLNET_DIRECT 2
#define NCCLBPF_ALGO_COLLNET_CHAIN  3
#define NCCLBPF_ALGO_NVLS	    4
#define NCCLBPF_ALGO_NVLS_TREE	    5
#define NCCLBPF_ALGO_PAT	    6
#define NCCLBPF_NUM_ALGOS	    7

#define NCCLBPF_PROTO_LL     0
#define NCCLBPF_PROTO_LL128  1
#define NCCLBPF_PROTO_SIMPLE 2
#define NCCLBPF_NUM_PROTOS   3

/* "Leave NCCL's choice" values of the tuner outputs. */
#define NCCLBPF_ALGO_DEFAULT	 (-1)
#define NCCLBPF_PROTO_DEFAULT	 (-1)
#define NCCLBPF_CHANNELS_DEFAULT 0
#define NCCLBPF_CHUNK_DEFAULT	 0

/* A cost-table cell NCCL marked unavailable (it will never be chosen, whatever a policy says). */
#define NCCLBPF_COST_NA 0xffffffffffffffffULL

/* --- Per-communicator maps ------------------------------------------------------------------
 * __uint(map_flags, NCCLBPF_F_PER_COMM) in a BTF map declaration gives every communicator its
 * own instance of the map: decision state that stays the same on every rank. NCCL calls a
 * communicator's tuner in the same order on every rank, so what tuner and tuner/chunk programs
 * write into it from uniform inputs (ctx fields other than reg_buff, .rodata, maps no program
 * writes, the map itself) is the same on every rank: counters, "seen this size before",
 * exploration schedules, moving averages of NCCL's own cost estimates. The verifier reads such
 * maps as uniform and rejects writing a rank-local value into one, at a place a rank-local
 * value chose, or under a branch on one. Every other map a program writes is rank-local for
 * decisions (docs/writing-policies.md).
 * - ARRAY and HASH only: per-CPU values and LRU eviction differ between ranks.
 * - Only tuner and tuner/chunk programs may use them (profiler and net programs run outside any
 *   communicator's decisions).
 * - An instance is created empty (arrays zeroed) when NCCL creates the communicator's tuner
 *   context and freed at finalize. A hot reload carries each communicator's contents into the
 *   new policy's map of the same name, type and sizes, at that communicator's first call
 *   under the new policy (with the control plane: the agreed sequence number), on every rank.
 * - Outside NCCL (`ncclbpf run`, tests) a program runs with one process-wide instance. */
#define NCCLBPF_F_PER_COMM 0x1000000u

/* --- SEC("tuner"): one run per getCollInfo call -------------------------------------------- */
struct ncclbpf_tuner_ctx {
	/* Inputs identical on every rank of the communicator. */
	__u64 comm_id;	    /*   0: NCCL's communicator hash (same on all ranks) */
	__u64 n_bytes;	    /*   8: bytes of the (aggregated) operation; ×nRanks for AG/RS */
	__u64 seq;	    /*  16: per-communicator tuner call number, from 0 */
	__u32 coll_type;    /*  24: NCCLBPF_COLL_* */
	__u32 n_ranks;	    /*  28 */
	__u32 n_nodes;	    /*  32 */
	__u32 num_pipe_ops; /*  36: collectives in this group per channel, usually 1 */
	__u32 num_algo;	    /*  40: rows of cost_ns NCCL filled (<= NCCLBPF_NUM_ALGOS) */
	__u32 num_proto;    /*  44: columns of cost_ns NCCL filled (<= NCCLBPF_NUM_PROTOS) */
	/*  48: NCCL's own time estimate per (algorithm, protocol) in ns, or NCCLBPF_COST_NA. */
	__u64 cost_ns[NCCLBPF_NUM_ALGOS][NCCLBPF_NUM_PROTOS];
	/* Rank-local input: a tuner output that depends on it is rejected by the verifier. */
	__u32 reg_buff; /* 216: 1 when this rank's buffers are registered */
	__u32 _pad0;	/* 220 */
	/* OUT: decisions. Initialised to the DEFAULT values; anything invalid falls back to NCCL.
	 */
	__s32 algorithm;  /* 224: NCCLBPF_ALGO_* or NCCLBPF_ALGO_DEFAULT */
	__s32 protocol;	  /* 228: NCCLBPF_PROTO_* or NCCLBPF_PROTO_DEFAULT */
	__s32 n_channels; /* 232: 1..64, or NCCLBPF_CHANNELS_DEFAULT */
	__u32 _pad1;	  /* 236 */
};			  /* 240 bytes */

/* --- SEC("tuner/chunk"): NCCL 2.30+ getChunkSize ------------------------------------------- */
struct ncclbpf_chunk_ctx {
	__u64 comm_id;	  /*  0 */
	__u64 n_bytes;	  /*  8: bytes of this channel segment */
	__u64 seq;	  /* 16: per-communicator call number */
	__u32 coll_type;  /* 24 */
	__s32 algorithm;  /* 28: the algorithm NCCL will use */
	__s32 protocol;	  /* 32 */
	__u32 n_channels; /* 36 */
	__u64 nccl_chunk; /* 40: NCCL's chunk size in bytes */
	__u64 chunk_size; /* 48: OUT, bytes; NCCLBPF_CHUNK_DEFAULT keeps NCCL's */
};			  /* 56 bytes */

/* --- SEC("profiler"): one run per profiler event ------------------------------------------- */
#define NCCLBPF_PROF_COLL_START 1 /* collective enqueued (host side) */
#define NCCLBPF_PROF_COLL_END	2 /* collective finished on the GPU: start/end are GPU times */
#define NCCLBPF_PROF_KERNEL_CH	3 /* one channel's kernel finished */
#define NCCLBPF_PROF_PROXY_OP	4 /* a proxy (network) operation finished */

struct ncclbpf_profiler_ctx {
	__u64 comm_id;	   /*  0 */
	__u64 seq;	   /*  8: NCCL's per-communicator collective sequence number */
	__u64 n_bytes;	   /* 16: this rank's bytes for the operation */
	__u64 start_ns;	   /* 24: event start (GPU time for COLL_END / KERNEL_CH) */
	__u64 end_ns;	   /* 32 */
	__u64 duration_ns; /* 40: end_ns - start_ns */
	__u32 event;	   /* 48: NCCLBPF_PROF_* */
	__u32 rank;	   /* 52 */
	__u32 n_ranks;	   /* 56 */
	__u32 coll_type;   /* 60: NCCLBPF_COLL_* */
	__s32 algorithm;   /* 64: what NCCL used */
	__s32 protocol;	   /* 68 */
	__u32 n_channels;  /* 72 */
	__u32 channel;	   /* 76: channel id for KERNEL_CH, else 0 */
	__u32 peer;	   /* 80: peer rank for PROXY_OP, else 0xffffffff */
	__u32 _pad0;	   /* 84 */
};			   /* 88 bytes, all read-only */

/* --- SEC("net/<op>"): net plugin operations ------------------------------------------------ */
#define NCCLBPF_NET_CONNECT  1
#define NCCLBPF_NET_ACCEPT   2
#define NCCLBPF_NET_ISEND    3
#define NCCLBPF_NET_IRECV    4
#define NCCLBPF_NET_COMPLETE 5 /* a send finished (test() said done) */
/* A receive finished: also SEC("net/complete"); bytes = the sizes received, summed. */
#define NCCLBPF_NET_COMPLETE_RECV 6

/* Sampled timing for a completion program that reads duration_ns: SEC(NCCLBPF_NET_COMPLETE_
 * SAMPLED(8)) runs on every completion, like SEC("net/complete"), but measures the duration of
 * one request in N per connection; the others arrive with duration_ns 0 (count them apart, as
 * policies/net_counters.c does). Timing a request takes two clock reads on NCCL's proxy thread
 * (about 35 ns per message and side on an H200 host: ~1 % of a 64 KiB AllReduce when every
 * message is timed, docs/net-plugin.md). N: 1..1048576; NCCLBPF_NET_TIME_EVERY overrides it. */
#define NCCLBPF_NET_COMPLETE_SAMPLED(n) "net/complete/time_every=" #n

/* Return values: connect/accept programs return NCCLBPF_NET_ALLOW or NCCLBPF_NET_DENY;
 * isend programs return a pacing rate in MB/s (0 = unpaced); others' results are ignored. */
#define NCCLBPF_NET_ALLOW 0
#define NCCLBPF_NET_DENY  1

struct ncclbpf_net_ctx {
	__u64 comm_id;	    /*  0: 0 when NCCL did not say */
	__u64 bytes;	    /*  8: message size (isend/irecv/complete) */
	__u64 time_ns;	    /* 16: monotonic time of the event */
	__u64 duration_ns;  /* 24: completion: time since the request was posted */
	__u32 op;	    /* 32: NCCLBPF_NET_* */
	__u32 dev;	    /* 36: net device index */
	__u32 peer;	    /* 40: peer rank when known, else 0xffffffff */
	__s32 tag;	    /* 44 */
	__u32 peer_addr[4]; /* 48: IPv4 in [0] (network order) or IPv6 */
	__u32 peer_port;    /* 64 */
	__u32 _pad0;	    /* 68 */
};			    /* 72 bytes, all read-only */

#if defined(__bpf__)
/* --- Program and map declarations (libbpf conventions) ------------------------------------- */
#define SEC(name) __attribute__((section(name), used))
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define __uint(name, val)  int(*name)[val]
#define __type(name, val)  typeof(val) *name
#define __array(name, val) typeof(val) *name[]

/* A map whose contents the plugin exports as Prometheus metrics (docs/telemetry.md, "Policy
 * maps"): put one of these in the map's definition. Each member of the key becomes a label
 * (integers and integer arrays), each member of the value a metric
 * ncclbpf_map_<map>_<member> (integers), as gauges or as counters (only ever increasing, for
 * rate()); members named "_..." are padding and left out. The loader refuses, naming the map
 * and member, a key or value it cannot export. */
#define NCCLBPF_EXPORT_GAUGES	__uint(ncclbpf_export, 1)
#define NCCLBPF_EXPORT_COUNTERS __uint(ncclbpf_export, 2)

/* Map types (Linux numbers). */
#define BPF_MAP_TYPE_HASH	  1
#define BPF_MAP_TYPE_ARRAY	  2
#define BPF_MAP_TYPE_PERCPU_HASH  5
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_LRU_HASH	  9
#define BPF_MAP_TYPE_RINGBUF	  27

/* Update flags. */
#define BPF_ANY	    0
#define BPF_NOEXIST 1
#define BPF_EXIST   2

/* --- Helpers (Linux numbers; the verifier checks each call against its prototype) ----------- */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   __u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
/* Monotonic clock in ns. Rank-local: tuner outputs must not depend on it. */
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
/* Rate-limited log line to the host's logger (NCCL INFO). fmt may use %d %u %x %llu %lld. */
static long (*bpf_trace_printk)(const char *fmt, __u32 fmt_size, ...) = (void *)6;
/* Pseudo-random number. Rank-local. */
static __u32 (*bpf_get_prandom_u32)(void) = (void *)7;
/* CPU the hook runs on. Rank-local. */
static __u32 (*bpf_get_smp_processor_id)(void) = (void *)8;
static long (*bpf_ringbuf_output)(void *ringbuf, void *data, __u64 size, __u64 flags) = (void *)130;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, __u64 size, __u64 flags) = (void *)131;
static void (*bpf_ringbuf_submit)(void *data, __u64 flags) = (void *)132;
static void (*bpf_ringbuf_discard)(void *data, __u64 flags) = (void *)133;

/* floor(log2(x)) for x > 0, 0 for x == 0, without loops: the size bucket the shipped policies
 * key their maps by (bucket b holds sizes 2^b .. 2^(b+1) - 1). */
static __always_inline __u32 ncclbpf_log2_u64(__u64 x)
{
	__u32 r = 0;
	if (x >> 32) {
		x >>= 32;
		r += 32;
	}
	if (x >> 16) {
		x >>= 16;
		r += 16;
	}
	if (x >> 8) {
		x >>= 8;
		r += 8;
	}
	if (x >> 4) {
		x >>= 4;
		r += 4;
	}
	if (x >> 2) {
		x >>= 2;
		r += 2;
	}
	if (x >> 1)
		r += 1;
	return r;
}

#define bpf_printk(fmt, ...)                                                                       \
	({                                                                                         \
		static const char ____fmt[] = fmt;                                                 \
		bpf_trace_printk(____fmt, sizeof(____fmt), ##__VA_ARGS__);                         \
	})
#endif /* __bpf__ */

#endif
