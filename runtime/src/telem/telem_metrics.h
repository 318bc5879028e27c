/* Every built-in Prometheus metric family, in one list: the renderer (telem_prom.c) takes
 * names, types and help text from here. X(ID, NAME, TYPE, HELP). */
#ifndef NCCLBPF_TELEM_METRICS_H
#define NCCLBPF_TELEM_METRICS_H

#define TELEM_METRICS(X)                                                                           \
	X(PROCESS_INFO, "ncclbpf_process_info", "gauge",                                           \
	  "1 per process running the plugin, labelled with its job, node, ranks and GPU")          \
	X(COLL_EXEC, "ncclbpf_coll_exec_seconds", "histogram",                                     \
	  "GPU execution time of collectives (first channel start to last channel end)")           \
	X(COLL_BYTES, "ncclbpf_coll_bytes_total", "counter",                                       \
	  "bytes of collectives, nccl-tests' size (AllGather, ReduceScatter: the whole buffer)")   \
	X(COLL_BUS_BYTES, "ncclbpf_coll_bus_bytes_total", "counter",                               \
	  "bytes times nccl-tests' busbw factor; rate of this over rate of exec seconds is busbw") \
	X(COLL_ALGBW, "ncclbpf_coll_algbw_gbps", "gauge",                                          \
	  "algorithm bandwidth in GB/s since start: bytes over execution time")                    \
	X(COLL_BUSBW, "ncclbpf_coll_busbw_gbps", "gauge",                                          \
	  "bus bandwidth in GB/s since start, as nccl-tests defines it")                           \
	X(COLL_ALGO, "ncclbpf_coll_algo_proto_total", "counter",                                   \
	  "collectives by the algorithm and protocol NCCL ran them with")                          \
	X(TELEM_COMMS, "ncclbpf_telemetry_comms", "gauge", "communicators tracked")                \
	X(TELEM_OVERFLOW, "ncclbpf_telemetry_comms_overflow_total", "counter",                     \
	  "communicators not tracked: every slot was taken")                                       \
	X(JSONL_RECORDS, "ncclbpf_jsonl_records_total", "counter", "JSON lines written")           \
	X(JSONL_DROPPED, "ncclbpf_jsonl_dropped_total", "counter",                                 \
	  "sampled collectives not written: queue full or output failing")                         \
	X(EXPORT_ERRORS, "ncclbpf_exporter_errors_total", "counter",                               \
	  "failed writes, by output (textfile, jsonl, http)")                                      \
	X(EXPORT_TRUNC, "ncclbpf_exporter_truncated_total", "counter",                             \
	  "renders that did not fit NCCLBPF_PROM_MAX_BYTES (series left out)")                     \
	X(POLICY_VERSION, "ncclbpf_policy_version", "gauge",                                       \
	  "version of the active policy (1, 2, ... in load order; 0: none)")                       \
	X(POLICY_INFO, "ncclbpf_policy_info", "gauge", "1, labelled with the active bundle")       \
	X(POLICY_RELOADS, "ncclbpf_policy_reloads_total", "counter",                               \
	  "policy loads and reloads, by result (ok, failed)")

enum telem_metric_id {
#define TELEM_ID(id, name, type, help) TELEM_M_##id,
	TELEM_METRICS(TELEM_ID)
#undef TELEM_ID
	    TELEM_M_COUNT
};

#endif
