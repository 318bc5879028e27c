/* NCCL tuner adapter: the exported ncclTunerPlugin_v3..v6 tables.
 *
 * Every entry point returns ncclSuccess on every path (NCCL treats a tuner error as fatal for
 * the communicator or the whole group launch, docs/design.md §6.3-6.6). Whatever goes wrong
 * - no bundle, a rejected bundle, a malformed call, an invalid policy output - leaves NCCL's own
 * decision in place and is counted in the communicator's statistics.
 *
 * The per-call paths (getCollInfo: tuner_call.c; getChunkSize) take no lock, allocate nothing
 * and never log: they build the context on the stack (only what the program may read), run the
 * active policy inside a read-side epoch (runtime), validate and apply the outputs. */
#include <stdint.h>
#include <unistd.h>

#include "log.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/trace.h"
#include "nccl_tuner.h"
#include "tuner_call.h"
#include "tuner_table.h"

#define EXPORT __attribute__((visibility("default")))

static uint32_t clamp_u32(size_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static void trace_simple(const struct ncclbpf_comm *c, int kind)
{
	struct ncclbpf_trace_rec r = {.kind = kind,
				      .pid = (uint32_t)getpid(),
				      .ctx = c->serial,
				      .comm_id = c->comm_id,
				      .n_ranks = c->n_ranks,
				      .n_nodes = c->n_nodes,
				      .api = c->api_version};
	ncclbpf_trace_emit(&r);
}

/* Once per process: what this tuner does without a policy. A WARN when the user chose this
 * tuner; an INFO when NCCL loaded it only because the library is the net plugin (no tuner named,
 * §6.2), or when the runtime has already warned that the bundle did not load. */
static void note_policy(void)
{
	static int said;
	enum ncclbpf_policy_state st = ncclbpf_rt_policy_state();
	if (st == NCCLBPF_POLICY_ACTIVE || __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	if (st == NCCLBPF_POLICY_FAILED)
		ncclbpf_rt_log(NCCLBPF_LOG_INFO,
			       "NCCLbpf tuner: no policy active; NCCL's own tuning is used");
	else if (!adapter_via_net_fallback("NCCL_TUNER_PLUGIN"))
		ncclbpf_rt_log(NCCLBPF_LOG_WARN, "NCCLbpf: NCCLBPF_POLICY is not set, no policy "
						 "loaded; NCCL's own tuning is used");
	else
		ncclbpf_rt_log(
		    NCCLBPF_LOG_INFO,
		    "NCCLbpf tuner: loaded as the net plugin's library (NCCL_TUNER_PLUGIN is "
		    "not set), no policy (NCCLBPF_POLICY is not set); NCCL's own tuning is "
		    "used");
}

static ncclResult_t init_common(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
				ncclDebugLogger_t log, uint32_t api)
{
	if (!context)
		return ncclSuccess;
	adapter_set_logger(log);
	/* NULL context (out of memory) is valid: every hook then leaves NCCL alone. */
	struct ncclbpf_comm *c =
	    ncclbpf_comm__new(comm_id, clamp_u32(n_ranks), clamp_u32(n_nodes), api);
	*context = c;
	if (c)
		note_policy();
	if (c && ncclbpf_trace_on())
		trace_simple(c, NCCLBPF_TRACE_INIT);
	return ncclSuccess;
}

static ncclResult_t finalize(void *context)
{
	struct ncclbpf_comm *c = context;
	if (!c)
		return ncclSuccess;
	if (ncclbpf_trace_on())
		trace_simple(c, NCCLBPF_TRACE_FINI);
	ncclbpf_comm__free(c);
	return ncclSuccess;
}

/* Chunk sizes above this are certainly wrong (NCCL's largest protocol buffer is a few MiB). */
#define CHUNK_MAX (1ull << 30)

static ncclResult_t chunk_size(void *context, ncclFunc_t coll_type, size_t n_bytes, int algo,
			       int proto, int n_channels, size_t *chunk)
{
	struct ncclbpf_comm *c = context;
	if (!c || !chunk)
		return ncclSuccess;
	uint64_t seq = c->chunk_seq; /* numbers the call, and counts it (stats read it) */
	__atomic_store_n(&c->chunk_seq, seq + 1, __ATOMIC_RELAXED);
	struct ncclbpf_chunk_ctx x = {
	    .comm_id = c->comm_id,
	    .n_bytes = n_bytes,
	    .seq = seq,
	    .coll_type = (uint32_t)coll_type,
	    .algorithm = algo,
	    .protocol = proto,
	    .n_channels = n_channels < 0 ? 0 : (uint32_t)n_channels,
	    .nccl_chunk = *chunk,
	    .chunk_size = NCCLBPF_CHUNK_DEFAULT,
	};
	uint64_t ver = 0;
	size_t in = *chunk;
	if (ncclbpf_rt_run_chunk_comm(c, &x, &ver) != 0) {
		ver = 0; /* no chunk program: NCCL's value stays (as if getChunkSize were NULL) */
	} else if (x.chunk_size != NCCLBPF_CHUNK_DEFAULT) {
		uint64_t grain = tuner_proto_grain(proto);
		/* Below one grain NCCL would round to 0 and divide by it (§6.6). */
		if (grain && x.chunk_size >= grain && x.chunk_size <= CHUNK_MAX) {
			*chunk = (size_t)x.chunk_size;
			ncclbpf_comm__count(c, NCCLBPF_STAT_CHUNK_APPLIED);
		} else {
			ncclbpf_comm__count(c, NCCLBPF_STAT_CHUNK_INVALID);
		}
	}
	if (__builtin_expect(ncclbpf_trace_on(), 0)) {
		struct ncclbpf_trace_rec r = {.kind = NCCLBPF_TRACE_CHUNK,
					      .pid = (uint32_t)getpid(),
					      .ctx = c->serial,
					      .seq = x.seq,
					      .n_bytes = n_bytes,
					      .coll = x.coll_type,
					      .algo = algo,
					      .proto = proto,
					      .channels = n_channels,
					      .chunk_in = in,
					      .chunk_out = *chunk,
					      .version = ver};
		r.cp = ncclbpf_comm__cp_version(c, &r.gen, &r.hash);
		ncclbpf_trace_emit(&r);
	}
	return ncclSuccess;
}

/* --- Version-specific entry points -------------------------------------------------------- */

/* v3/v4 know no communicator id; 0 is the same on every rank, which is what matters. */
static ncclResult_t init_v3(size_t n_ranks, size_t n_nodes, ncclDebugLogger_t log, void **context)
{
	return init_common(context, 0, n_ranks, n_nodes, log, 3);
}

static ncclResult_t init_v4(size_t n_ranks, size_t n_nodes, ncclDebugLogger_t log, void **context)
{
	return init_common(context, 0, n_ranks, n_nodes, log, 4);
}

static ncclResult_t init_v5(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
			    ncclDebugLogger_t log, ncclNvlDomainInfo_v5_t *nvl,
			    ncclTunerConstants_v5_t *constants)
{
	(void)nvl;
	(void)constants; /* the model constants are left as NCCL set them */
	return init_common(context, comm_id, n_ranks, n_nodes, log, 5);
}

static ncclResult_t init_v6(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
			    ncclDebugLogger_t log, ncclNvlDomainInfo_v6_t *nvl,
			    ncclTunerConstants_v6_t *constants)
{
	(void)nvl;
	(void)constants;
	return init_common(context, comm_id, n_ranks, n_nodes, log, 6);
}

static ncclResult_t coll_info_v3(void *context, ncclFunc_t coll_type, size_t n_bytes,
				 int num_pipe_ops, float **cost_table, int num_algo, int num_proto,
				 int *n_channels)
{
	return tuner_coll_info(context, coll_type, n_bytes, num_pipe_ops, cost_table, num_algo,
			       num_proto, 0, n_channels);
}

EXPORT const ncclTuner_v3_t ncclTunerPlugin_v3 = {
    .name = "NCCLbpf",
    .init = init_v3,
    .getCollInfo = coll_info_v3,
    .destroy = finalize,
};

EXPORT const ncclTuner_v4_t ncclTunerPlugin_v4 = {
    .name = "NCCLbpf",
    .init = init_v4,
    .getCollInfo = tuner_coll_info,
    .destroy = finalize,
};

EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {
    .name = "NCCLbpf",
    .init = init_v5,
    .getCollInfo = tuner_coll_info,
    .finalize = finalize,
};

EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6 = {
    .name = "NCCLbpf",
    .init = init_v6,
    .getCollInfo = tuner_coll_info,
    .finalize = finalize,
    .getChunkSize = chunk_size,
};
