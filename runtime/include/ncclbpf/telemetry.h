/* Built-in collective telemetry (no policy program needed): per communicator, per collective
 * type and per size bucket, the number of collectives, their GPU execution time (a histogram),
 * the bytes they moved and the algorithm/protocol NCCL used, kept in fixed memory: a static
 * table of NCCLBPF_TELEM_COMMS communicator slots (a communicator beyond them is counted, not
 * tracked), no allocation and no lock on the recording path. The exporter thread
 * (docs/deploying.md, "Telemetry") turns the table into Prometheus text, JSON lines and the
 * live view of `ncclbpf top`; it never runs on a thread of NCCL's.
 *
 * Definitions follow nccl-tests (doc/PERFORMANCE.md there): a collective's size is
 * count x type size, times the number of ranks for AllGather and ReduceScatter (the whole
 * buffer); algbw = size / time; busbw = algbw x factor, the factor being 2(n-1)/n for
 * AllReduce, (n-1)/n for AllGather and ReduceScatter, 1 for Broadcast, Reduce, send/receive
 * and AlltoAll... as telem_bus_factor() says. Time is the GPU's: from the first channel's start
 * to the last channel's end (the kernels' globaltimer stamps NCCL reports).
 *
 * Telemetry is on when NCCLBPF_TELEMETRY=1 or an export is configured (NCCLBPF_PROM_DIR,
 * NCCLBPF_PROM_PORT, NCCLBPF_JSONL_DIR); NCCLBPF_TELEMETRY=0 turns it off. Off, it costs the
 * profiler hook nothing (ncclbpf_telem_enabled() is 0 and no slot is ever opened). */
#ifndef NCCLBPF_TELEMETRY_H
#define NCCLBPF_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCLBPF_TELEM_COMMS 64 /* communicator slots */
#define NCCLBPF_TELEM_COLLS 12 /* NCCL's ncclFunc_t values 0..11 (SDK: NCCLBPF_COLL_*) */
#define NCCLBPF_TELEM_SIZES 40 /* size bucket b holds [2^b, 2^(b+1)) bytes; the last all above */
/* Execution-time histogram: bucket k counts times <= 2^k us (k = 0..20, 1 us .. ~1.05 s), the
 * last one everything longer (Prometheus' le="+Inf"). */
#define NCCLBPF_TELEM_TIMES 22
/* Algorithm x protocol cells (NCCLBPF_ALGO_* x NCCLBPF_PROTO_*), then one for "unknown". */
#define NCCLBPF_TELEM_MIX (7 * 3 + 1)

struct ncclbpf_telem_cell {
	uint64_t hist[NCCLBPF_TELEM_TIMES]; /* collectives by execution time */
	uint64_t sum_ns;		    /* their execution times, summed */
	uint64_t bytes;			    /* their sizes (nccl-tests' definition), summed */
	uint64_t mix[NCCLBPF_TELEM_MIX];    /* collectives by algorithm and protocol */
};

enum ncclbpf_telem_slot_state {
	NCCLBPF_TELEM_FREE = 0,
	NCCLBPF_TELEM_LIVE = 1,	  /* its communicator records into it */
	NCCLBPF_TELEM_CLOSED = 2, /* finalized; freed once the exporter wrote it a last time, or
				   * taken by a new communicator when no slot is free */
	NCCLBPF_TELEM_BUSY = 3,	  /* being opened or freed (by whoever moved it there) */
};

struct ncclbpf_telem_comm {
	_Atomic uint32_t state; /* enum ncclbpf_telem_slot_state */
	/* Bumped whenever the slot is taken (opened or freed), before anything in it changes:
	 * a reader that sees the same value before and after reading it read one communicator. */
	_Atomic uint32_t gen;
	uint32_t rank, n_ranks, n_nodes;
	uint64_t comm_id;
	uint64_t opened_unix_ns;
	char name[64];		     /* NCCL's communicator name (cleaned), "" when none */
	_Atomic uint64_t jsonl_seen; /* collectives seen while JSON lines are on (sampling) */
	struct ncclbpf_telem_cell cells[NCCLBPF_TELEM_COLLS][NCCLBPF_TELEM_SIZES];
};

/* 1 when the built-in telemetry is on (configuration read at the runtime's first acquire). */
int ncclbpf_telem_enabled(void);

/* A slot for a new communicator, or NULL (telemetry off, or every slot taken: counted in
 * ncclbpf_telemetry_comms_overflow_total). name may be NULL. Called at communicator creation,
 * never on the event path. */
struct ncclbpf_telem_comm *ncclbpf_telem_comm_open(uint64_t comm_id, const char *name,
						   uint32_t rank, uint32_t n_ranks,
						   uint32_t n_nodes);
/* The communicator is finalized: no more records. */
void ncclbpf_telem_comm_close(struct ncclbpf_telem_comm *t);

/* One finished collective, the only call on the event path: coll is ncclFunc_t's value,
 * msg_bytes count x type size, algo/proto NCCLBPF_ALGO_*, NCCLBPF_PROTO_* (or -1), gpu_start
 * and gpu_end the GPU times in ns (first channel's start, last channel's end), longest_ch_ns
 * the longest single channel's time (NCCL Inspector's definition of execution time, for the
 * JSON lines). Relaxed atomic adds on the communicator's cell (a
 * collective may finish on any thread); a sampled JSON record is queued without blocking. */
void ncclbpf_telem_coll(struct ncclbpf_telem_comm *t, uint32_t coll, uint64_t seq,
			uint64_t msg_bytes, int32_t algo, int32_t proto, uint32_t n_channels,
			uint64_t gpu_start, uint64_t gpu_end, uint64_t longest_ch_ns);

/* The Prometheus text of everything the exporter serves, rendered now into buf (the exporter
 * thread need not run). Returns its length (NUL-terminated), or 0 when it did not fit. Call
 * it while a communicator holds the runtime: the job labels are read again when the first
 * communicator opens. */
size_t ncclbpf_telem_prometheus(char *buf, size_t cap);
/* An export directory (NCCLBPF_PROM_DIR, NCCLBPF_JSONL_DIR) as the exporter opens it, never
 * through a link at its last component: a descriptor, or -errno. It is meant to be shared
 * (node_exporter, log shippers read it), so it is not held to the trusted-path rules; what the
 * exporter writes there is (telem_export.c). */
int ncclbpf_telem_open_dir(const char *path);

/* --- Definitions shared by every reader (exporter, inspection, `ncclbpf top`) ------------- */
/* nccl-tests' size of a collective of msg_bytes on n_ranks (AllGather, ReduceScatter: the
 * whole buffer). */
uint64_t ncclbpf_telem_size(uint32_t coll, uint64_t msg_bytes, uint32_t n_ranks);
/* nccl-tests' busbw factor; 0 for an unknown collective. */
double ncclbpf_telem_bus_factor(uint32_t coll, uint32_t n_ranks);
/* Size bucket of a size in bytes, and the histogram bucket of a time in ns. */
uint32_t ncclbpf_telem_size_bucket(uint64_t bytes);
uint32_t ncclbpf_telem_time_bucket(uint64_t ns);
/* Upper bound of histogram bucket k in us (k < NCCLBPF_TELEM_TIMES - 1). */
uint64_t ncclbpf_telem_time_le_us(uint32_t k);
/* Names as NCCL prints them ("AllReduce", "RING", "SIMPLE"); "unknown" out of range. */
const char *ncclbpf_telem_coll_name(uint32_t coll);
const char *ncclbpf_telem_algo_name(int32_t algo);
const char *ncclbpf_telem_proto_name(int32_t proto);

#ifdef __cplusplus
}
#endif
#endif
