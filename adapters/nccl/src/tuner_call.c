/* getCollInfo: the tuner's per-call path (tuner_coll_info, tuner_call.h).
 *
 * A call does only what the policy needs. The verifier recorded which 8-byte words of the
 * context the program may read (hook->ctx_words) and write (ctx_written): only those words of
 * the scalar inputs are filled, and of the cost table only the cells it reads are converted
 * (none for most policies). Outputs start at their defaults; a program that leaves them there
 * costs no table work. Statistics: one counter per call, its outcome's (the calls and each
 * call's number are the outcomes' sum, ncclbpf_comm__calls, worked out only for a program that
 * reads seq). Every path returns ncclSuccess; whatever goes wrong leaves NCCL's own decision in
 * place, counted. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ncclbpf/runtime.h"
#include "ncclbpf/trace.h"
#include "nccl_tuner.h"
#include "tuner_call.h"
#include "tuner_table.h"

/* The per-call paths (coll_info_run, the keeping entries) hold the program's context on their
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
 * which a program that writes no output word did without a look (the verifier's ctx_written).
 * channels_unfilled: x->n_channels was not filled, the program could neither read nor write it
 * (the keeping entries without NCCLBPF_RT_KEEPS_CHANNELS): it is the default, stored only
 * where the rare paths read it. The channel pointer (NULL when NCCL passed none) is n_channels,
 * or where it waits when n_channels_at is not NULL (the keeping entries keep it in their frame:
 * read only by the rare full apply, where a volatile read as an argument happened on every
 * call). */
static inline __attribute__((always_inline)) void
finish(struct ncclbpf_comm *c, struct ncclbpf_tuner_ctx *x, float *table, int num_algo,
       int num_proto, int *n_channels, int *volatile *n_channels_at, uint64_t written,
       const int channels_unfilled)
{
	if (!(written & NCCLBPF_RT_TUNER_OUTPUT_WORDS)) {
		ncclbpf_comm__count(c, NCCLBPF_STAT_DEFAULT);
		return;
	}
	if (tuner_apply_cell(x, table, num_algo, num_proto, channels_unfilled)) {
		/* the cell's index in a 7 x 3 table, which the kept entries have just computed */
		ncclbpf_comm__count_cell(c, (uint32_t)x->algorithm * NCCLBPF_NUM_PROTOS +
						(uint32_t)x->protocol);
		return;
	}
	if (channels_unfilled) {
		x->n_channels = NCCLBPF_CHANNELS_DEFAULT;
		x->_pad1 = 0;
	}
	if (tuner_outputs_default(x))
		ncclbpf_comm__count(c, NCCLBPF_STAT_DEFAULT);
	else
		apply(c, x, table, num_algo, num_proto,
		      n_channels_at ? *n_channels_at : n_channels);
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
		finish(c, &rx.x, table, num_algo, num_proto, n_channels, NULL, written, 0);
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
		finish(c, &rx.x, table, num_algo, num_proto, n_channels, NULL, written, 0);
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
static __attribute__((noinline, used)) HOT_PATH_NO_CANARY ncclResult_t coll_info_run(ENTRY_ARGS)
{
	struct ncclbpf_comm *c = context;
	float *table = TABLE_OF(cost_table);
	run_policy(c, 0, 0, CALL_PASS, n_channels);
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

/* The common call when the policy's program is a register-keeping JIT entry (ebpf/jit.h) and
 * NCCL passed a 7 x 3 table: coll_info_run's work with no call out of line before the decision is
 * applied, so that the compiler keeps what it needs after the program in the three registers the
 * entry keeps (ebpf_jit_call_keeping: the communicator, the table, the epoch's TLS address; a
 * callee-saved register would be saved on every call). It takes its arguments in registers only
 * (num_pipe_ops and reg_buff packed into one, the table's shape known): the dispatch
 * (tuner_coll_info) reaches it with a jump, having read getCollInfo's stack arguments once. One
 * entry per value of the policy's keeping flags (ncclbpf_rt__tuner_keeps), each compiled for its
 * flags: it fills the inputs only when the program reads one, the outputs only when it reads or
 * writes one, and looks at them afterwards only when it may write one. Anything else - a policy
 * swapped meanwhile, a thread not on the epoch's fast path - goes on to coll_info_run. */
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

/* The keeping path's context (fill_inputs' words NCCLBPF_RT_TUNER_KEEPING_WORDS, or none, and
 * the outputs at their defaults, by the entry's flags): one store per field, from the registers
 * the arguments came in and constants (the 7 x 3 shape, the defaults). GCC merged the same
 * stores written as fill_inputs' into 16-byte vector stores it built through the stack; the
 * empty asm statements between them keep them apart. */
#define KEPT_STORE_APART() __asm__("" ::: "memory")
static inline __attribute__((always_inline)) void
fill_kept(struct ncclbpf_rt_tuner_ctx *rx, const struct ncclbpf_comm *c, ncclFunc_t coll_type,
	  size_t n_bytes, const float *table, const uint32_t flags)
{
	struct ncclbpf_tuner_ctx *x = &rx->x;
	rx->cost_f32 = table;
	if (flags & NCCLBPF_RT_KEEPS_INPUTS) {
		_Static_assert(
		    NCCLBPF_RT_TUNER_KEEPING_WORDS ==
			(NCCLBPF_RT__TUNER_WORD(comm_id) | NCCLBPF_RT__TUNER_WORD(n_bytes) |
			 NCCLBPF_RT__TUNER_WORD(coll_type) | NCCLBPF_RT__TUNER_WORD(num_algo) |
			 NCCLBPF_RT_TUNER_OUTPUT_WORDS),
		    "fill_kept fills these words");
		x->n_bytes = n_bytes;
		KEPT_STORE_APART();
		x->comm_id = c->comm_id;
		KEPT_STORE_APART();
		x->coll_type = (uint32_t)coll_type;
		KEPT_STORE_APART();
		x->n_ranks = c->n_ranks;
		KEPT_STORE_APART();
		x->num_algo = TUNER_MAX_ALGO;
		x->num_proto = TUNER_MAX_PROTO;
		KEPT_STORE_APART();
	}
	if (flags & NCCLBPF_RT_KEEPS_OUTPUTS) {
		x->algorithm = NCCLBPF_ALGO_DEFAULT;
		x->protocol = NCCLBPF_PROTO_DEFAULT;
	}
	if (flags & NCCLBPF_RT_KEEPS_CHANNELS) {
		KEPT_STORE_APART();
		x->n_channels = NCCLBPF_CHANNELS_DEFAULT;
		x->_pad1 = 0;
	}
}

static inline __attribute__((always_inline)) ncclResult_t coll_info_kept(KEEPING_ARGS,
									 const uint32_t flags)
{
	const int num_algo = TUNER_MAX_ALGO, num_proto = TUNER_MAX_PROTO;
	/* the channel pointer waits in the frame, needed only by a rare path: the program's entry
	 * keeps three registers (ebpf_jit_call_keeping), which the communicator, the table and the
	 * epoch's TLS address take */
	int *volatile n_channels_kept = n_channels;
	/* The context first, which needs no policy (the flags are the entry's): the arguments are
	 * then stored before the epoch's TLS address takes a register. A program that reads any
	 * input gets all of them the path has (a few stores cost less than a branch each). */
	struct ncclbpf_rt_tuner_ctx rx;
	fill_kept(&rx, c, coll_type, n_bytes, table, flags);
	const struct ncclbpf_rt_hook *h = ncclbpf_rt_tuner_begin_kept(flags);
	if (__builtin_expect(!h, 0))
		return coll_info_unkept(c, coll_type, n_bytes, pipe_reg, table, n_channels_kept);
	ncclbpf_rt_hook_run_keeping(h, &rx);
	ncclbpf_rt_hook_end_keeping();
	if (flags & NCCLBPF_RT_KEEPS_WRITES)
		finish(c, &rx.x, table, num_algo, num_proto, NULL, &n_channels_kept,
		       NCCLBPF_RT_TUNER_OUTPUT_WORDS, !(flags & NCCLBPF_RT_KEEPS_CHANNELS));
	else /* it left every output at its default without a look */
		ncclbpf_comm__count(c, NCCLBPF_STAT_DEFAULT);
	return ncclSuccess;
}

#define KEPT_ENTRY(flags)                                                                          \
	static __attribute__((noinline))                                                           \
	HOT_PATH_NO_CANARY ncclResult_t coll_info_kept_##flags(KEEPING_ARGS)                       \
	{                                                                                          \
		return coll_info_kept(KEEPING_PASS, flags);                                        \
	}
/* The flags a keeping program can have (WRITES and CHANNELS come with OUTPUTS, every flag with
 * KEEPS). */
KEPT_ENTRY(1)
KEPT_ENTRY(3)
KEPT_ENTRY(5)
KEPT_ENTRY(7)
KEPT_ENTRY(13)
KEPT_ENTRY(15)
KEPT_ENTRY(21)
KEPT_ENTRY(23)
KEPT_ENTRY(29)
KEPT_ENTRY(31)
_Static_assert(NCCLBPF_RT_KEEPS == 1 && NCCLBPF_RT_KEEPS_INPUTS == 2 &&
		   NCCLBPF_RT_KEEPS_OUTPUTS == 4 && NCCLBPF_RT_KEEPS_WRITES == 8 &&
		   NCCLBPF_RT_KEEPS_CHANNELS == 16,
	       "the entries are named by their flags");
#define KEPT_FLAGS_MASK 31

typedef ncclResult_t (*coll_info_kept_fn)(KEEPING_ARGS);
/* The keeping entry for each value of the flags (coll_info_unkept for those no policy has). */
/* clang-format off */
static __attribute__((used)) const coll_info_kept_fn kept_entries[KEPT_FLAGS_MASK + 1] = {
	/*  0 */ coll_info_unkept, coll_info_kept_1, coll_info_unkept, coll_info_kept_3,
	/*  4 */ coll_info_unkept, coll_info_kept_5, coll_info_unkept, coll_info_kept_7,
	/*  8 */ coll_info_unkept, coll_info_unkept, coll_info_unkept, coll_info_unkept,
	/* 12 */ coll_info_unkept, coll_info_kept_13, coll_info_unkept, coll_info_kept_15,
	/* 16 */ coll_info_unkept, coll_info_unkept, coll_info_unkept, coll_info_unkept,
	/* 20 */ coll_info_unkept, coll_info_kept_21, coll_info_unkept, coll_info_kept_23,
	/* 24 */ coll_info_unkept, coll_info_unkept, coll_info_unkept, coll_info_unkept,
	/* 28 */ coll_info_unkept, coll_info_kept_29, coll_info_unkept, coll_info_kept_31,
};
/* clang-format on */

/* Any call (the dispatch of tuner_coll_info, the whole of it where there is no assembly entry
 * below): an unusual call - no communicator, one in the control plane, a malformed call,
 * tracing - to coll_info_full; the common call without an active policy only counted (a policy
 * activated meanwhile is as if activated just after the call); with a policy whose program may
 * run on a keeping entry (the runtime's hint, set with each activation; the entry checks the
 * policy again) and a 7 x 3 table, a jump to that entry; else coll_info_run. */
static __attribute__((used)) ncclResult_t coll_info_any(ENTRY_ARGS)
{
	struct ncclbpf_comm *c = context;
	if (__builtin_expect(!c || c->cp != NULL || !well_formed(cost_table, num_algo, num_proto) ||
				 ncclbpf_trace_on(),
			     0))
		return coll_info_full(ENTRY_PASS);
	if (!__atomic_load_n(&ncclbpf_rt_hot_.active, __ATOMIC_RELAXED)) {
		ncclbpf_comm__count(c, NCCLBPF_STAT_NO_POLICY);
		return ncclSuccess;
	}
	uint32_t hint =
	    __atomic_load_n(&ncclbpf_rt_hot_.tuner_keeps, __ATOMIC_RELAXED) & KEPT_FLAGS_MASK;
	if (hint && full_shape(num_algo, num_proto))
		return kept_entries[hint](c, coll_type, n_bytes,
					  PACK_PIPE_REG(num_pipe_ops, reg_buff),
					  TABLE_OF(cost_table), n_channels);
	return coll_info_run(ENTRY_PASS);
}

#if defined(__x86_64__) && defined(EBPF_JIT_HAVE_KEEPING_CALL) && defined(__ELF__)
/* getCollInfo on x86-64: coll_info_any's dispatch for the common calls, in assembly, so that
 * what every call pays - the checks, the count without a policy, the jump to a keeping entry -
 * takes no register the caller must have saved. Compiled, the same checks cost a push and pop of
 * a callee-saved register and loads of all three stack arguments on every path (GCC loads a
 * function's stack arguments up front as soon as any path passes them on in a tail call), about
 * a third of a nanosecond per call on every path (docs/deploying.md). Any call it does not
 * finish itself goes to coll_info_any or coll_info_run with the arguments untouched.
 *
 * Arguments (System V): rdi context, esi coll_type, rdx n_bytes, ecx num_pipe_ops, r8 cost_table,
 * r9d num_algo; on the stack num_proto 8(%rsp), reg_buff 16(%rsp), n_channels 24(%rsp). A
 * keeping entry takes (rdi c, esi coll_type, rdx n_bytes, rcx pipe_reg, r8 table,
 * r9 n_channels), pipe_reg as PACK_PIPE_REG makes it. */
#define ASM_STR_(x) #x
#define ASM_STR(x)  ASM_STR_(x)
/* The communicator's fields it reads, and the runtime's words (rt_hot.h), at offsets checked
 * here against the structs. */
#define ASM_COMM_CP	   24
#define ASM_COMM_NO_POLICY 80
#define ASM_HOT_ACTIVE	   0
#define ASM_HOT_KEEPS	   8
#define ASM_HOT_TRACE_FD   12
_Static_assert(offsetof(struct ncclbpf_comm, cp) == ASM_COMM_CP, "ASM_COMM_CP: the cp member");
_Static_assert(offsetof(struct ncclbpf_comm, stats) + sizeof(uint64_t) * NCCLBPF_STAT_NO_POLICY ==
		   ASM_COMM_NO_POLICY,
	       "ASM_COMM_NO_POLICY: the no_policy counter");
_Static_assert(sizeof(((struct ncclbpf_comm *)0)->stats[0]) == 8, "addq on the counter");
_Static_assert(offsetof(struct ncclbpf_rt_hot, active) == ASM_HOT_ACTIVE &&
		   sizeof(ncclbpf_rt_hot_.active) == 8,
	       "ASM_HOT_ACTIVE");
_Static_assert(offsetof(struct ncclbpf_rt_hot, tuner_keeps) == ASM_HOT_KEEPS &&
		   sizeof(ncclbpf_rt_hot_.tuner_keeps) == 4,
	       "ASM_HOT_KEEPS");
_Static_assert(offsetof(struct ncclbpf_rt_hot, trace_fd) == ASM_HOT_TRACE_FD &&
		   sizeof(ncclbpf_rt_hot_.trace_fd) == 4,
	       "ASM_HOT_TRACE_FD");
_Static_assert(TUNER_MAX_ALGO == 7 && TUNER_MAX_PROTO == 3, "the full shape it tests");
_Static_assert(sizeof(kept_entries) / sizeof(kept_entries[0]) == 32 && KEPT_FLAGS_MASK == 31,
	       "an entry per hint & 31");
_Static_assert(ncclSuccess == 0, "xor %eax, %eax");
/* Indirect branch tracking (-fcf-protection): the entry is reached through NCCL's pointer. */
#if defined(__CET__) && (__CET__ & 1)
#define ASM_ENDBR "	endbr64\n"
#else
#define ASM_ENDBR ""
#endif
#define ASM_HOT(field) "ncclbpf_rt_hot_+" ASM_STR(field) "(%rip)"
/* clang-format off */
__asm__("	.text\n"
	"	.p2align 4\n"
	"	.globl tuner_coll_info\n"
	"	.hidden tuner_coll_info\n"
	"	.type tuner_coll_info, @function\n"
	"tuner_coll_info:\n"
	"	.cfi_startproc\n"
	ASM_ENDBR
	/* an unusual call: coll_info_any (coll_info_full) */
	"	test %rdi, %rdi\n"
	"	jz 1f\n"
	"	cmpq $0, " ASM_STR(ASM_COMM_CP) "(%rdi)\n"
	"	jne 1f\n"
	"	test %r8, %r8\n"
	"	jz 1f\n"
	/* a table of another shape (well formed or not): coll_info_any too */
	"	cmp $7, %r9d\n"
	"	jne 1f\n"
	"	cmpl $3, 8(%rsp)\n"
	"	jne 1f\n"
	/* the runtime's words are loaded, then tested: a compare of a RIP-relative word with an
	 * immediate fuses with nothing on Intel (two more micro-ops each) */
	"	mov " ASM_HOT(ASM_HOT_TRACE_FD) ", %eax\n"
	"	test %eax, %eax\n"
	"	jns 1f\n"
	"	mov " ASM_HOT(ASM_HOT_ACTIVE) ", %rax\n"
	"	test %rax, %rax\n"
	"	jnz 2f\n"
	/* no policy: counted (one writer per communicator, as ncclbpf_comm__count); eax is 0. The
	 * straight path: a jump taken here cost a call without a policy 0.3 ns (development
	 * machine), and none on a policy's path. */
	"	addq $1, " ASM_STR(ASM_COMM_NO_POLICY) "(%rdi)\n"
	"	ret\n"
	"2:\n"
	/* the policy's keeping flags: 0, no keeping entry */
	"	mov " ASM_HOT(ASM_HOT_KEEPS) ", %eax\n"
	"	and $31, %eax\n"
	"	jz 3f\n"
	"	mov 16(%rsp), %r10d\n"
	"	shl $32, %r10\n"
	"	mov %ecx, %ecx\n"
	"	or %r10, %rcx\n"
	"	mov 24(%rsp), %r9\n"
	"	lea kept_entries(%rip), %r10\n"
	"	jmp *(%r10,%rax,8)\n"
	"3:\n"
	"	jmp coll_info_run\n"
	"1:\n"
	"	jmp coll_info_any\n"
	"	.cfi_endproc\n"
	"	.size tuner_coll_info, .-tuner_coll_info\n");
/* clang-format on */
#else
ncclResult_t tuner_coll_info(ENTRY_ARGS)
{
	return coll_info_any(ENTRY_PASS);
}
#endif
