/* NCCL tuner adapter: the exported ncclTunerPlugin_v3..v6 tables.
 *
 * Every entry point returns ncclSuccess on every path (NCCL treats a tuner error as fatal for
 * the communicator or the whole group launch, docs/design.md §6.3-6.6). Whatever goes wrong
 * - no bundle, a rejected bundle, a malformed call, an invalid policy output - leaves NCCL's own
 * decision in place and is counted in the communicator's statistics.
 *
 * The per-call path (getCollInfo, getChunkSize) takes no lock, allocates nothing and never
 * logs: it builds the context on the stack, runs the active policy inside a read-side epoch
 * (runtime), validates and applies the outputs. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/trace.h"
#include "nccl_tuner.h"
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
		adapter_log(NCCLBPF_LOG_INFO,
			    "NCCLbpf tuner: no policy active; NCCL's own tuning is used");
	else if (!adapter_via_net_fallback("NCCL_TUNER_PLUGIN"))
		adapter_log(NCCLBPF_LOG_WARN, "NCCLbpf: NCCLBPF_POLICY is not set, no policy "
					      "loaded; NCCL's own tuning is used");
	else
		adapter_log(
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

/* input: the table as NCCL passed it; table: after the policy's decision was applied. */
static void trace_call(const struct ncclbpf_comm *c, const struct ncclbpf_tuner_ctx *x,
		       const float *input, const float *table, int na, int np,
		       const int *n_channels, uint64_t ver)
{
	struct ncclbpf_trace_rec r = {.kind = NCCLBPF_TRACE_CALL,
				      .pid = (uint32_t)getpid(),
				      .ctx = c->serial,
				      .seq = x->seq,
				      .n_bytes = x->n_bytes,
				      .coll = x->coll_type,
				      .pipe = x->num_pipe_ops,
				      .reg = x->reg_buff,
				      .algo = -1,
				      .proto = -1,
				      .channels = n_channels ? *n_channels : 0,
				      .version = ver};
	r.cp = ncclbpf_comm__cp_version(c, &r.gen, &r.hash);
	if (table) {
		r.num_algo = na;
		r.num_proto = np;
		memcpy(r.cost, input, sizeof(float) * (size_t)(na * np));
		tuner_table_winner(table, na, np, &r.algo, &r.proto);
	}
	ncclbpf_trace_emit(&r);
}

/* Decision histogram for `ncclbpf stat`: the cell NCCL now picks (the requested one when the
 * policy named both, else the table's winner) and the channel count that took effect. */
static void count_decision(struct ncclbpf_comm *c, const struct ncclbpf_tuner_ctx *x,
			   const float *table, int na, int np, const struct tuner_apply_info *info)
{
	int a = x->algorithm, p = x->protocol;
	if (a == NCCLBPF_ALGO_DEFAULT || p == NCCLBPF_PROTO_DEFAULT)
		if (tuner_table_winner(table, na, np, &a, &p) != 0)
			a = p = -1;
	ncclbpf_comm__count_decision(c, a, p, info->channels_skipped ? 0 : x->n_channels);
}

static ncclResult_t coll_info(void *context, ncclFunc_t coll_type, size_t n_bytes, int num_pipe_ops,
			      float **cost_table, int num_algo, int num_proto, int reg_buff,
			      int *n_channels)
{
	struct ncclbpf_comm *c = context;
	if (__builtin_expect(!c, 0))
		return ncclSuccess;
	struct ncclbpf_tuner_ctx x;
	x.seq = ncclbpf_comm__tick(c);
	ncclbpf_comm__count(c, NCCLBPF_STAT_CALLS);
	/* NCCL passes float[numAlgo][numProto] cast to float** (§6.5). */
	float *table = (float *)cost_table;
	if (__builtin_expect(!table || num_algo <= 0 || num_proto <= 0 ||
				 num_algo > TUNER_MAX_ALGO || num_proto > TUNER_MAX_PROTO,
			     0)) {
		ncclbpf_comm__count(c, NCCLBPF_STAT_BAD_CALL);
		if (ncclbpf_trace_on()) {
			x.n_bytes = n_bytes;
			x.coll_type = (uint32_t)coll_type;
			x.num_pipe_ops = num_pipe_ops < 0 ? 0 : (uint32_t)num_pipe_ops;
			x.reg_buff = reg_buff != 0;
			trace_call(c, &x, NULL, NULL, 0, 0, n_channels, 0);
		}
		return ncclSuccess;
	}
	x.comm_id = c->comm_id;
	x.n_bytes = n_bytes;
	x.coll_type = (uint32_t)coll_type;
	x.n_ranks = c->n_ranks;
	x.n_nodes = c->n_nodes;
	x.num_pipe_ops = num_pipe_ops < 0 ? 0 : (uint32_t)num_pipe_ops;
	x.num_algo = (uint32_t)num_algo;
	x.num_proto = (uint32_t)num_proto;
	tuner_fill_costs(&x, table, num_algo, num_proto);
	x.reg_buff = reg_buff != 0;
	x._pad0 = 0;
	x.algorithm = NCCLBPF_ALGO_DEFAULT;
	x.protocol = NCCLBPF_PROTO_DEFAULT;
	x.n_channels = NCCLBPF_CHANNELS_DEFAULT;
	x._pad1 = 0;

	float input[TUNER_MAX_ALGO * TUNER_MAX_PROTO];
	int tracing = ncclbpf_trace_on();
	if (__builtin_expect(tracing, 0))
		memcpy(input, table, sizeof(float) * (size_t)(num_algo * num_proto));

	uint64_t ver = 0;
	if (ncclbpf_rt_run_tuner_comm(c, &x, &ver) != 0) {
		ncclbpf_comm__count(c, NCCLBPF_STAT_NO_POLICY);
		ver = 0;
	} else {
		ncclbpf_comm__count(c, NCCLBPF_STAT_RUNS);
		struct tuner_apply_info info;
		switch (tuner_apply(&x, table, num_algo, num_proto, n_channels, &info)) {
		case TUNER_APPLY_CHANGED:
			ncclbpf_comm__count(c, NCCLBPF_STAT_APPLIED);
			count_decision(c, &x, table, num_algo, num_proto, &info);
			break;
		case TUNER_APPLY_DEFAULT:
			ncclbpf_comm__count(c, NCCLBPF_STAT_DEFAULT);
			break;
		case TUNER_APPLY_INVALID:
			ncclbpf_comm__count(c, NCCLBPF_STAT_INVALID);
			break;
		}
		if (info.channels_skipped)
			ncclbpf_comm__count(c, NCCLBPF_STAT_CH_SKIPPED);
	}
	if (__builtin_expect(tracing, 0))
		trace_call(c, &x, input, table, num_algo, num_proto, n_channels, ver);
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
	struct ncclbpf_chunk_ctx x = {
	    .comm_id = c->comm_id,
	    .n_bytes = n_bytes,
	    .seq = c->chunk_seq++,
	    .coll_type = (uint32_t)coll_type,
	    .algorithm = algo,
	    .protocol = proto,
	    .n_channels = n_channels < 0 ? 0 : (uint32_t)n_channels,
	    .nccl_chunk = *chunk,
	    .chunk_size = NCCLBPF_CHUNK_DEFAULT,
	};
	ncclbpf_comm__count(c, NCCLBPF_STAT_CHUNK_CALLS);
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
	return coll_info(context, coll_type, n_bytes, num_pipe_ops, cost_table, num_algo, num_proto,
			 0, n_channels);
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
    .getCollInfo = coll_info,
    .destroy = finalize,
};

EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {
    .name = "NCCLbpf",
    .init = init_v5,
    .getCollInfo = coll_info,
    .finalize = finalize,
};

EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6 = {
    .name = "NCCLbpf",
    .init = init_v6,
    .getCollInfo = coll_info,
    .finalize = finalize,
    .getChunkSize = chunk_size,
};
