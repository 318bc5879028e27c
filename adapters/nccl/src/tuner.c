/* NCCL tuner adapter: the exported ncclTunerPlugin_v3..v6 tables.
 *
 * Every entry point returns ncclSuccess on every path (NCCL treats a tuner error as fatal for
 * the communicator or the whole group launch, docs/design.md §6.3-6.6). Whatever goes wrong
 * - no bundle, a rejected bundle, a malformed call, an invalid policy output - leaves NCCL's own
 * decision in place and is counted in the communicator's statistics.
 *
 * The per-call path (getCollInfo, getChunkSize) takes no lock, allocates nothing and never
 * logs: it builds the context on the stack (only what the program may read), runs the active
 * policy inside a read-side epoch (runtime), validates and applies the outputs. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/trace.h"
#include "nccl_tuner.h"
#include "tuner_table.h"

#define EXPORT __attribute__((visibility("default")))

/* The per-call paths (coll_info_run, coll_info_keeping) hold the program's context on their
 * stack, and compilers that add stack canaries by default (Ubuntu's GCC: -fstack-protector-strong)
 * guard them with one: a TLS load and store on entry and a compare on return, about a nanosecond
 * of a call that costs a few over a native plugin (the H100 host, docs/deploying.md). Only
 * verified programs write to that context, each store checked against the context's writable
 * fields before it runs (docs/verifier.md), and the adapter fills it at fixed offsets: a canary
 * there would only notice, on return, a verifier bug the differential tests look for. Every
 * other function keeps whatever the compiler adds. */
#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define HOT_PATH_NO_CANARY __attribute__((no_stack_protector))
#endif
#endif
#ifndef HOT_PATH_NO_CANARY
#define HOT_PATH_NO_CANARY
#endif

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
		nccl_cost_winner(table, na, np, &r.algo, &r.proto);
	}
	ncclbpf_trace_emit(&r);
}

/* --- getCollInfo ----------------------------------------------------------------------------
 * A call does only what the policy needs. The verifier recorded which 8-byte words of the
 * context the program may read (hook->ctx_words): only those words of the scalar inputs are
 * filled, and of the cost table only the cells it reads are converted (none for most
 * policies). Outputs start at their defaults; a program that leaves them there costs no table
 * work. Statistics: one counter per call, its outcome's (the calls and each call's number are
 * the outcomes' sum, ncclbpf_comm__calls, worked out only for a program that reads seq). */

/* The call's number for a program that may read the context words in words, when no tick
 * numbered it (outside the control plane): the calls counted so far, or 0 when it cannot read
 * seq (the sum reads two dozen counters). */
static inline uint64_t call_number(const struct ncclbpf_comm *c, uint64_t words)
{
	return words & 1ull << TUNER_WORD(seq) ? ncclbpf_comm__calls(c) : 0;
}

/* getCollInfo's arguments. */
#define CALL_ARGS                                                                                  \
	ncclFunc_t coll_type, size_t n_bytes, int num_pipe_ops, float *table, int num_algo,        \
	    int num_proto, int reg_buff
#define CALL_PASS coll_type, n_bytes, num_pipe_ops, table, num_algo, num_proto, reg_buff

/* 1 when NCCL passed a table the adapter can work on (1..7 x 1..3; anything else is left alone). */
static inline int well_formed(const void *table, int num_algo, int num_proto)
{
	return table && (unsigned)num_algo - 1 < TUNER_MAX_ALGO &&
	       (unsigned)num_proto - 1 < TUNER_MAX_PROTO;
}

/* 1 when a well-formed table is 7 x 3, in one compare (two made GCC keep both results in
 * callee-saved registers): num_proto <= 3 leaves num_algo * 4 + num_proto one value each. */
static inline int full_shape(int num_algo, int num_proto)
{
	_Static_assert(TUNER_MAX_PROTO < 4, "num_proto fits in two bits");
	return num_algo * 4 + num_proto == TUNER_MAX_ALGO * 4 + TUNER_MAX_PROTO;
}

/* The scalar inputs of x in words (tuner_fill_scalars). */
static inline void fill_scalars(struct ncclbpf_tuner_ctx *x, const struct ncclbpf_comm *c,
				uint64_t seq, uint64_t words, CALL_ARGS)
{
	(void)table;
	const struct tuner_call k = {.comm_id = c->comm_id,
				     .n_bytes = n_bytes,
				     .seq = seq,
				     .coll_type = (uint32_t)coll_type,
				     .n_ranks = c->n_ranks,
				     .n_nodes = c->n_nodes,
				     .num_pipe_ops = num_pipe_ops,
				     .num_algo = num_algo,
				     .num_proto = num_proto,
				     .reg_buff = reg_buff};
	tuner_fill_scalars(x, words, &k);
}

/* The inputs of rx the program may read from memory (words), the table it reads converted cells
 * from (cells_f32: tuner_cells_f32) and, when outs (the output words it may read or write) is
 * not 0, the outputs at their defaults. */
static inline __attribute__((always_inline)) void
fill_inputs(struct ncclbpf_rt_tuner_ctx *rx, const struct ncclbpf_comm *c, uint64_t seq,
	    uint64_t words, uint64_t outs, const float *cells_f32, CALL_ARGS)
{
	struct ncclbpf_tuner_ctx *x = &rx->x;
	rx->cost_f32 = cells_f32;
	if (words & TUNER_SCALAR_WORDS)
		fill_scalars(x, c, seq, words, CALL_PASS);
	uint32_t cells = (uint32_t)(words >> TUNER_CELL_WORD0) & TUNER_ALL_CELLS;
	if (cells)
		tuner_fill_cells(x, table, num_algo, num_proto, cells);
	if (!outs)
		return;
	x->algorithm = NCCLBPF_ALGO_DEFAULT;
	x->protocol = NCCLBPF_PROTO_DEFAULT;
	x->n_channels = NCCLBPF_CHANNELS_DEFAULT;
	x->_pad1 = 0;
}

/* The output words a program with hook h may read or write (fill_inputs' outs). */
static inline uint64_t output_words(const struct ncclbpf_rt_hook *h)
{
	return (h->ctx_words | h->ctx_written) & NCCLBPF_RT_TUNER_OUTPUT_WORDS;
}

/* Applies outputs that are not all at their defaults to NCCL's table (tuner_table.c: NCCL's
 * rules) and counts the outcome: DEFAULT or INVALID, or for an applied decision the cell NCCL
 * now picks and the channels set (the decision histogram of `ncclbpf stat`, which the applied
 * count derives from). */
static __attribute__((noinline)) void apply(struct ncclbpf_comm *c, struct ncclbpf_tuner_ctx *x,
					    float *table, int num_algo, int num_proto,
					    int *n_channels)
{
	x->n_nodes = c->n_nodes; /* the CollNet rule needs it, whether the program read it or not */
	struct tuner_apply_info info;
	switch (tuner_apply(x, table, num_algo, num_proto, n_channels, &info)) {
	case TUNER_APPLY_CHANGED:
		ncclbpf_comm__count_decision(c, info.algo, info.proto, info.channels);
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

/* After a program that may write the context words in written ran: the common decision (a valid
 * cell, channels left to NCCL) is applied inline, tried first since a program that can write an
 * output mostly does; else nothing to do but count when it left every output at its default,
 * which a program that writes no output word did without a look (the verifier's ctx_written). */
static inline __attribute__((always_inline)) void finish(struct ncclbpf_comm *c,
							 struct ncclbpf_tuner_ctx *x, float *table,
							 int num_algo, int num_proto,
							 int *n_channels, uint64_t written)
{
	if (!(written & NCCLBPF_RT_TUNER_OUTPUT_WORDS))
		ncclbpf_comm__count(c, NCCLBPF_STAT_DEFAULT);
	else if (tuner_apply_cell(x, table, num_algo, num_proto))
		ncclbpf_comm__count_decision(c, x->algorithm, x->protocol, 0);
	else if (tuner_outputs_default(x))
		ncclbpf_comm__count(c, NCCLBPF_STAT_DEFAULT);
	else
		apply(c, x, table, num_algo, num_proto, n_channels);
}

/* NCCLBPF_TRACE on: the same call with the whole context filled (the record holds it), the table
 * as NCCL passed it and the decision NCCL now takes. */
static __attribute__((noinline)) void traced_call(struct ncclbpf_comm *c, uint64_t seq, CALL_ARGS,
						  int *n_channels)
{
	struct ncclbpf_rt_tuner_ctx rx;
	float input[TUNER_CELLS], pad[TUNER_CELLS];
	uint64_t ver = 0;
	memcpy(input, table, sizeof(float) * (size_t)(num_algo * num_proto));
	fill_inputs(&rx, c, seq, ~0ull, ~0ull, tuner_cells_f32(input, num_algo, num_proto, pad),
		    CALL_PASS);
	const struct ncclbpf_rt_hook *h = ncclbpf_rt_tuner_begin(c, &ver);
	int ran = 0;
	uint64_t written = 0;
	if (h) {
		written = h->ctx_written;
		ran = ncclbpf_rt_hook_run(h, &rx) == 0;
		ncclbpf_rt_hook_end();
	}
	if (ran)
		finish(c, &rx.x, table, num_algo, num_proto, n_channels, written);
	else
		ncclbpf_comm__count(c, NCCLBPF_STAT_NO_POLICY);
	trace_call(c, &rx.x, input, table, num_algo, num_proto, n_channels, ran ? ver : 0);
}

static __attribute__((noinline)) void bad_call(struct ncclbpf_comm *c, uint64_t seq, CALL_ARGS,
					       int *n_channels)
{
	ncclbpf_comm__count(c, NCCLBPF_STAT_BAD_CALL);
	if (!ncclbpf_trace_on())
		return;
	struct ncclbpf_tuner_ctx x;
	fill_scalars(&x, c, seq, ~0ull, CALL_PASS);
	trace_call(c, &x, NULL, NULL, 0, 0, n_channels, 0);
}

/* A well-formed, untraced call: runs c's policy, if any, on what it reads, and counts the
 * outcome. The call's number is seq under the control plane (ticked), else call_number's.
 * Inlined into both entries (a call with getCollInfo's arguments moved again cost about a
 * nanosecond). */
static inline __attribute__((always_inline)) void run_policy(struct ncclbpf_comm *c, uint64_t seq,
							     int ticked, CALL_ARGS, int *n_channels)
{
	const struct ncclbpf_rt_hook *h = ncclbpf_rt_tuner_begin(c, NULL);
	if (!h) { /* no policy: NCCL's own decision */
		ncclbpf_comm__count(c, NCCLBPF_STAT_NO_POLICY);
		return;
	}
	struct ncclbpf_rt_tuner_ctx rx;
	float pad[TUNER_CELLS];
	fill_inputs(&rx, c, ticked ? seq : call_number(c, h->ctx_words), h->ctx_words,
		    output_words(h), tuner_cells_f32(table, num_algo, num_proto, pad), CALL_PASS);
	uint64_t written = h->ctx_written; /* h is the policy's: read before the section ends */
	int err = ncclbpf_rt_hook_run(h, &rx);
	ncclbpf_rt_hook_end();
	if (__builtin_expect(err == 0, 1))
		finish(c, &rx.x, table, num_algo, num_proto, n_channels, written);
	else /* the interpreter stopped it: NCCL's own decision */
		ncclbpf_comm__count(c, NCCLBPF_STAT_NO_POLICY);
}

/* getCollInfo's arguments as NCCL passes them (the entries below take them unchanged, so that
 * coll_info reaches them with a jump). */
#define ENTRY_ARGS                                                                                 \
	void *context, ncclFunc_t coll_type, size_t n_bytes, int num_pipe_ops, float **cost_table, \
	    int num_algo, int num_proto, int reg_buff, int *n_channels
#define ENTRY_PASS                                                                                 \
	context, coll_type, n_bytes, num_pipe_ops, cost_table, num_algo, num_proto, reg_buff,      \
	    n_channels
/* NCCL passes float[numAlgo][numProto] cast to float**. */
#define TABLE_OF(cost_table) ((float *)(cost_table))

/* The common call with a policy active: outside the control plane, well formed, untraced. */
static __attribute__((noinline)) HOT_PATH_NO_CANARY ncclResult_t coll_info_run(ENTRY_ARGS)
{
	struct ncclbpf_comm *c = context;
	float *table = TABLE_OF(cost_table);
	run_policy(c, 0, 0, CALL_PASS, n_channels);
	return ncclSuccess;
}

/* The common call when the policy's program is a register-keeping JIT entry (ebpf/jit.h) and
 * NCCL passed a 7 x 3 table: coll_info_run's work with no call out of line before the decision is
 * applied, so that the compiler keeps getCollInfo's arguments in caller-saved registers (saving
 * and restoring callee-saved ones around a plain call costs about a nanosecond, most of what
 * running an empty program costs). It takes its arguments in registers only (num_pipe_ops and
 * reg_buff packed into one, the table's shape known): coll_info reaches it with a jump that
 * neither stores nor loads getCollInfo's stack arguments again. Two of them, chosen by
 * coll_info from the flags of ncclbpf_rt__tuner_keeps, so that neither keeps more than three
 * values across the program, in the registers its entry keeps (ebpf_jit_call_keeping; a
 * callee-saved register would be saved on every call): coll_info_keeping for a program that may
 * write an output, coll_info_observing for one that cannot. Anything else - a policy swapped
 * meanwhile, a thread not on the epoch's fast path - goes on to coll_info_run. */
#define PACK_PIPE_REG(num_pipe_ops, reg_buff)                                                      \
	((uint64_t)(uint32_t)(num_pipe_ops) | (uint64_t)(uint32_t)(reg_buff) << 32)
#define KEEPING_ARGS                                                                               \
	struct ncclbpf_comm *c, ncclFunc_t coll_type, size_t n_bytes, uint64_t pipe_reg,           \
	    float *table, int *n_channels
#define KEEPING_PASS c, coll_type, n_bytes, pipe_reg, table, n_channels

/* A call the keeping entries hand on, with their arguments unchanged (a jump): coll_info_run's.
 * Unpacking in the entries themselves took registers that the compiler then saved on every
 * call. */
static __attribute__((noinline)) ncclResult_t coll_info_unkept(KEEPING_ARGS)
{
	return coll_info_run(c, coll_type, n_bytes, (int)(uint32_t)pipe_reg, (float **)table,
			     TUNER_MAX_ALGO, TUNER_MAX_PROTO, (int)(pipe_reg >> 32), n_channels);
}

static __attribute__((noinline)) HOT_PATH_NO_CANARY ncclResult_t coll_info_keeping(KEEPING_ARGS)
{
	const int num_algo = TUNER_MAX_ALGO, num_proto = TUNER_MAX_PROTO;
	const int num_pipe_ops = (int)(uint32_t)pipe_reg, reg_buff = (int)(pipe_reg >> 32);
	/* the channel pointer waits in the frame, needed only by a rare path: the program's entry
	 * keeps three registers (ebpf_jit_call_keeping), which the communicator, the table and the
	 * epoch's TLS address take */
	int *volatile n_channels_kept = n_channels;
	uint32_t keeps = 0;
	const struct ncclbpf_rt_hook *h = ncclbpf_rt_tuner_begin_keeping(1, &keeps);
	if (__builtin_expect(!h, 0))
		return coll_info_unkept(c, coll_type, n_bytes, pipe_reg, table, n_channels_kept);
	struct ncclbpf_rt_tuner_ctx rx;
	/* the rule lets through only programs that read no other words (ncclbpf_rt__tuner_keeps);
	 * a program that reads any input gets all of them (a few stores cost less than a branch
	 * each) */
	if (keeps & NCCLBPF_RT_KEEPS_INPUTS)
		fill_inputs(&rx, c, 0, NCCLBPF_RT_TUNER_KEEPING_WORDS, ~0ull, table, CALL_PASS);
	else
		fill_inputs(&rx, c, 0, 0, ~0ull, table, CALL_PASS);
	ncclbpf_rt_hook_run_keeping(h, &rx);
	ncclbpf_rt_hook_end_keeping();
	/* its only call is the last */
	finish(c, &rx.x, table, num_algo, num_proto, n_channels_kept,
	       NCCLBPF_RT_TUNER_OUTPUT_WORDS);
	return ncclSuccess;
}

/* A program that writes no output (the verifier's ctx_written) left them all at their defaults
 * without a look: the outputs are filled only when it reads them, and the call is counted as
 * such. */
static __attribute__((noinline)) HOT_PATH_NO_CANARY ncclResult_t coll_info_observing(KEEPING_ARGS)
{
	const int num_algo = TUNER_MAX_ALGO, num_proto = TUNER_MAX_PROTO;
	const int num_pipe_ops = (int)(uint32_t)pipe_reg, reg_buff = (int)(pipe_reg >> 32);
	uint32_t keeps = 0;
	const struct ncclbpf_rt_hook *h = ncclbpf_rt_tuner_begin_keeping(0, &keeps);
	if (__builtin_expect(!h, 0))
		return coll_info_unkept(KEEPING_PASS);
	struct ncclbpf_rt_tuner_ctx rx;
	if (keeps & NCCLBPF_RT_KEEPS_INPUTS)
		fill_inputs(&rx, c, 0, NCCLBPF_RT_TUNER_KEEPING_WORDS, ~0ull, table, CALL_PASS);
	else if (keeps & NCCLBPF_RT_KEEPS_OUTPUTS)
		fill_inputs(&rx, c, 0, 0, ~0ull, table, CALL_PASS);
	else
		fill_inputs(&rx, c, 0, 0, 0, table, CALL_PASS);
	ncclbpf_rt_hook_run_keeping(h, &rx);
	ncclbpf_rt_hook_end_keeping();
	ncclbpf_comm__count(c, NCCLBPF_STAT_DEFAULT);
	return ncclSuccess;
}

/* Any other call: a communicator in the control plane, a malformed call, tracing. */
static __attribute__((noinline)) ncclResult_t coll_info_full(ENTRY_ARGS)
{
	struct ncclbpf_comm *c = context;
	float *table = TABLE_OF(cost_table);
	if (!c)
		return ncclSuccess;
	/* the control plane numbers the call at its start (its fences need it); elsewhere the
	 * calls counted so far number it */
	uint64_t seq = c->cp ? ncclbpf_comm__tick(c) : ncclbpf_comm__calls(c);
	if (!well_formed(table, num_algo, num_proto))
		bad_call(c, seq, CALL_PASS, n_channels);
	else if (ncclbpf_trace_on())
		traced_call(c, seq, CALL_PASS, n_channels);
	else
		run_policy(c, seq, 1, CALL_PASS, n_channels);
	return ncclSuccess;
}

/* getCollInfo. The common call without an active policy is only counted, here: a few
 * instructions, no epoch, no stack frame (a policy activated meanwhile is as if activated just
 * after the call). */
static ncclResult_t coll_info(ENTRY_ARGS)
{
	struct ncclbpf_comm *c = context;
	if (__builtin_expect(!c || c->cp != NULL || !well_formed(cost_table, num_algo, num_proto) ||
				 ncclbpf_trace_on(),
			     0))
		return coll_info_full(ENTRY_PASS);
	if (!__atomic_load_n(&ncclbpf_rt_active_, __ATOMIC_RELAXED)) {
		ncclbpf_comm__count(c, NCCLBPF_STAT_NO_POLICY);
		return ncclSuccess;
	}
	if (__builtin_expect(full_shape(num_algo, num_proto), 1)) {
		uint32_t keeps = __atomic_load_n(&ncclbpf_rt_tuner_keeps_, __ATOMIC_RELAXED);
		if (__builtin_expect(keeps & NCCLBPF_RT_KEEPS_WRITES, 1))
			return coll_info_keeping(c, coll_type, n_bytes,
						 PACK_PIPE_REG(num_pipe_ops, reg_buff),
						 TABLE_OF(cost_table), n_channels);
		if (keeps)
			return coll_info_observing(c, coll_type, n_bytes,
						   PACK_PIPE_REG(num_pipe_ops, reg_buff),
						   TABLE_OF(cost_table), n_channels);
	}
	return coll_info_run(ENTRY_PASS);
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
