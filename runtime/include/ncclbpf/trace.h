/* Trace records: every tuner hook call's inputs (including NCCL's cost table) and the decision
 * NCCL finally got, one text line each, so that `ncclbpf replay` can drive the real plugin
 * offline and show how another policy would have decided.
 *
 * Format (version 1), one record per line, '#' starts a comment:
 *   init  c=PID.N comm=HEX ranks=R nodes=N api=V
 *   call  c=PID.N seq=S coll=C bytes=B pipe=P reg=G table=AxP cost=F,F,... algo=A proto=P ch=H
 * ver=V chunk c=PID.N seq=S coll=C bytes=B algo=A proto=P nch=H in=I out=O ver=V fini  c=PID.N c=
 * names one communicator context (process id, creation number in that process: several ranks of one
 * communicator may live in one process and share comm=). cost= lists the AxP floats NCCL passed
 * (microseconds, -1 = unavailable) row-major, printed with 9 significant digits so that they read
 * back bit-identical. Records of a communicator in the control plane (docs/control-plane.md)
 * end with g=G h=HASH: the generation and bundle hash that decided, equal on every rank at one
 * seq. In call records algo/proto are what NCCL picks from the table after the
 * plugin returned (-1: nothing valid), ch is *nChannels on return (0: NCCL's own count), ver the
 * policy version that ran (0: none). Lines are written with one write(2) on an O_APPEND descriptor,
 * so records of concurrent threads and processes sharing a file never interleave. */
#ifndef NCCLBPF_TRACE_H
#define NCCLBPF_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ncclbpf_trace_kind {
	NCCLBPF_TRACE_INIT = 1,
	NCCLBPF_TRACE_CALL,
	NCCLBPF_TRACE_CHUNK,
	NCCLBPF_TRACE_FINI,
};

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
};

/* 1 while NCCLBPF_TRACE recording is on. */
extern int ncclbpf_trace_fd;
static inline int ncclbpf_trace_on(void)
{
	return __atomic_load_n(&ncclbpf_trace_fd, __ATOMIC_RELAXED) >= 0;
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
