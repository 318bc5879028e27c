/* Trace records: every tuner hook call's inputs (including NCCL's cost table) and the decision
 * NCCL finally got, and every profiler event the plugin tracked, one text line each, so that
 * `ncclbpf replay` can drive the real plugin offline: how another policy would have decided, and
 * what a profiler program's maps hold after the same events.
 *
 * Format (version 2), one record per line, '#' starts a comment. Tuner:
 *   init  c=PID.N comm=HEX ranks=R nodes=N api=V
 *   call  c=PID.N seq=S coll=C bytes=B pipe=P reg=G table=AxP cost=F,F,... algo=A proto=P ch=H
 *         ver=V
 *   chunk c=PID.N seq=S coll=C bytes=B algo=A proto=P nch=H in=I out=O ver=V
 *   fini  c=PID.N
 * c= names one communicator context (process id, creation number in that process: several ranks
 * of one communicator may live in one process and share comm=). cost= lists the AxP floats NCCL
 * passed (microseconds, -1 = unavailable) row-major, printed with 9 significant digits so that
 * they read back bit-identical. Records of a communicator in the control plane
 * (docs/control-plane.md) end with g=G h=HASH: the generation and bundle hash that decided,
 * equal on every rank at one seq. In call records algo/proto are what NCCL picks from the table
 * after the plugin returned (-1: nothing valid), ch is *nChannels on return (0: NCCL's own
 * count), ver the policy version that ran (0: none).
 *
 * Profiler (the events the plugin tracked, as NCCL passed them; c= numbers profiler contexts
 * separately from tuner ones):
 *   pinit  c=PID.N comm=HEX ranks=R nodes=N rank=K api=V
 *   coll   c=PID.N ev=HEX t=NS seq=S func=NAME count=C dtype=NAME nch=H alg=NAME prot=NAME
 *   kch    c=PID.N ev=HEX parent=HEX t=NS ch=C timer=GPU_START
 *   kchend c=PID.N ev=HEX t=NS timer=GPU_END          (recordEventState KernelChStop)
 *   proxy  c=PID.N ev=HEX parent=HEX t=NS pid=P ch=C peer=P steps=N chunk=B
 *   stop   c=PID.N ev=HEX t=NS
 *   pfini  c=PID.N
 * ev= and parent= are the handles the plugin returned in that process (a replay maps them to its
 * own), t= the CLOCK_MONOTONIC time of the call in ns, timer= the GPU timestamps NCCL passed
 * (what COLL_END and KERNEL_CH programs see as start_ns/end_ns). Names are NCCL's strings
 * (AllReduce, ncclFloat32, RING, SIMPLE; "-" for none).
 *
 * Net (every event of the net plugin's hooks, whether or not a program is attached, so that a
 * trace recorded without a policy can be replayed with one; c= numbers the plugin's net contexts,
 * one per NCCL communicator, separately from the others):
 *   net c=PID.N op=NAME comm=HEX bytes=B t=NS dur=NS dev=D peer=P tag=T addr=HEX32 port=P ret=R
 * op= connect, accept, isend, irecv, complete (a send finished) or complete_recv; the other
 * fields are the struct ncclbpf_net_ctx a program sees: t= time_ns (CLOCK_MONOTONIC, read for
 * the record when no program needed it), dur= duration_ns of a completion (since the post, 0
 * when unknown), peer= the peer rank (-1: unknown, 0xffffffff in the context), addr= the 16
 * bytes of peer_addr in hex (IPv4 in the first 4, network order; zeros when unknown), port= the
 * peer port. ret= what the program returned (connect/accept: 0 allow, 1 deny; isend: the pacing
 * rate), "-" when none ran; completions always "-" (their programs run later, off NCCL's path,
 * and what they return is not used).
 *
 * Lines are written with one write(2) on an O_APPEND descriptor, so records of concurrent threads
 * and processes sharing a file never interleave. */
#ifndef NCCLBPF_TRACE_H
#define NCCLBPF_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "ncclbpf/rt_hot.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ncclbpf_trace_kind {
	NCCLBPF_TRACE_INIT = 1,
	NCCLBPF_TRACE_CALL,
	NCCLBPF_TRACE_CHUNK,
	NCCLBPF_TRACE_FINI,
	NCCLBPF_TRACE_PINIT, /* profiler records */
	NCCLBPF_TRACE_PCOLL,
	NCCLBPF_TRACE_PKCH,
	NCCLBPF_TRACE_PKCH_END,
	NCCLBPF_TRACE_PPROXY,
	NCCLBPF_TRACE_PSTOP,
	NCCLBPF_TRACE_PFINI,
	NCCLBPF_TRACE_NET, /* net hook events */
};

#define NCCLBPF_TRACE_NAME_LEN 32 /* func/dtype/alg/prot, with the NUL */

#define NCCLBPF_TRACE_MAX_CELLS 21 /* 7 algorithms x 3 protocols */

struct ncclbpf_trace_rec {
	int kind;
	uint32_t pid, ctx;
	/* init */
	uint64_t comm_id;
	uint32_t n_ranks, n_nodes, api;
	/* call / chunk */
	uint64_t seq, n_bytes;
	uint32_t coll, pipe, reg;
	int32_t num_algo, num_proto;
	float cost[NCCLBPF_TRACE_MAX_CELLS];
	int32_t algo, proto, channels;
	uint64_t version;
	/* chunk */
	uint64_t chunk_in, chunk_out;
	/* call / chunk of a control-plane communicator (cp = 1): the job-consistent version, the
	 * same on every rank at a given seq; printed as " g=G h=HASH" at the end of the line */
	int cp;
	uint64_t gen, hash;
	/* profiler records: rank (pinit); handle, parent handle, call time (events); NCCL's names
	 * (coll: count in n_bytes, nch in channels); channel id in channels (kch, proxy); GPU
	 * timer (kch, kchend); proxy operation's pid, peer, steps, chunk size */
	uint32_t rank;
	uint64_t handle, parent, t_ns, timer;
	char func[NCCLBPF_TRACE_NAME_LEN], dtype[NCCLBPF_TRACE_NAME_LEN];
	char alg[NCCLBPF_TRACE_NAME_LEN], prot[NCCLBPF_TRACE_NAME_LEN];
	uint32_t proxy_pid;
	int32_t peer, steps, chunk;
	/* net records: op (NCCLBPF_NET_*), n_bytes, t_ns, comm_id, peer (-1: unknown) as above;
	 * has_ret 0 for "-" */
	uint32_t net_op, dev, peer_port;
	int32_t tag;
	uint64_t dur_ns;
	uint8_t peer_addr[16];
	int has_ret;
	uint64_t ret;
};

/* The op= name of NCCLBPF_NET_* op ("?" for another value). */
const char *ncclbpf_trace_net_op_name(uint32_t op);

/* Copies NCCL's name s (NULL: "-") into a record's name field, each byte outside [!-~] or '='
 * as '?', so that the record stays one token. */
void ncclbpf_trace_name(char dst[NCCLBPF_TRACE_NAME_LEN], const char *s);

/* The file a process records to: the path template NCCLBPF_TRACE with %p the process id, %h the
 * host name ('/' as '_') and %% a '%'. Returns 0, or -EINVAL (another %-sequence) or
 * -ENAMETOOLONG. */
int ncclbpf_trace_path(const char *tmpl, char *out, size_t len);
/* What is wrong with a template ncclbpf_trace_path refused with err (for messages). */
const char *ncclbpf_trace_path_why(int err);

/* 1 while NCCLBPF_TRACE recording is on (the descriptor: ncclbpf_rt_hot_.trace_fd). */
static inline int ncclbpf_trace_on(void)
{
	return __atomic_load_n(&ncclbpf_rt_hot_.trace_fd, __ATOMIC_RELAXED) >= 0;
}
/* Formats and appends one record (no allocation). */
void ncclbpf_trace_emit(const struct ncclbpf_trace_rec *r);

/* Formats r as one line with '\n'. Returns the length, or -ENOSPC. */
int ncclbpf_trace_format(const struct ncclbpf_trace_rec *r, char *buf, size_t len);
/* Parses one line: 1 and *r filled for a record, 0 for a blank or comment line, -EINVAL with
 * err filled for anything else. */
int ncclbpf_trace_parse(const char *line, struct ncclbpf_trace_rec *r, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
