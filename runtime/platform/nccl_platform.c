/* The NCCL platform: the program types the SDK (include/ncclbpf.h) defines, as the engine's
 * verifier tables. The offsets come from the SDK structs themselves and the layouts are pinned
 * by static asserts, so the table and the header cannot drift apart. This table is the one list
 * of program types and their sections, net's each by name: the loader's messages and the
 * runtime's hooks (runtime/src/policy/bundle.c) read it. */
#include <stddef.h>
#include <string.h>

#include "ncclbpf.h"
#include "ebpf/maps.h"
#include "ncclbpf/nccl_platform.h"

#define R EBPF_CTX_READ
#define W EBPF_CTX_WRITE
#define FIELD(type, member, fl)                                                                    \
	{                                                                                          \
#member, offsetof(struct type, member), sizeof(((struct type *)0)->member), (fl)   \
	}

/* Layouts are part of the policy ABI: a change here breaks compiled policies. */
_Static_assert(sizeof(struct ncclbpf_tuner_ctx) == 240, "tuner ctx layout");
_Static_assert(offsetof(struct ncclbpf_tuner_ctx, cost_ns) == 48, "tuner ctx layout");
_Static_assert(offsetof(struct ncclbpf_tuner_ctx, reg_buff) == 216, "tuner ctx layout");
_Static_assert(offsetof(struct ncclbpf_tuner_ctx, algorithm) == 224, "tuner ctx layout");
_Static_assert(sizeof(struct ncclbpf_chunk_ctx) == 56, "chunk ctx layout");
_Static_assert(sizeof(struct ncclbpf_profiler_ctx) == 88, "profiler ctx layout");
_Static_assert(sizeof(struct ncclbpf_net_ctx) == 72, "net ctx layout");
_Static_assert(NCCLBPF_F_PER_COMM == EBPF_MAP_F_PER_COMM, "per-communicator map flag");
_Static_assert(NCCLBPF_NET_NAME_SAMPLED == NCCLBPF_NET_COMPLETE, "net names: events, then sampled");

static const struct ebpf_ctx_field tuner_fields[] = {
    FIELD(ncclbpf_tuner_ctx, comm_id, R),
    FIELD(ncclbpf_tuner_ctx, n_bytes, R),
    FIELD(ncclbpf_tuner_ctx, seq, R),
    FIELD(ncclbpf_tuner_ctx, coll_type, R),
    FIELD(ncclbpf_tuner_ctx, n_ranks, R),
    FIELD(ncclbpf_tuner_ctx, n_nodes, R),
    FIELD(ncclbpf_tuner_ctx, num_pipe_ops, R),
    FIELD(ncclbpf_tuner_ctx, num_algo, R),
    FIELD(ncclbpf_tuner_ctx, num_proto, R),
    FIELD(ncclbpf_tuner_ctx, cost_ns, R),
    FIELD(ncclbpf_tuner_ctx, reg_buff, R | EBPF_CTX_RANK_LOCAL),
    FIELD(ncclbpf_tuner_ctx, algorithm, R | W | EBPF_CTX_DECISION),
    FIELD(ncclbpf_tuner_ctx, protocol, R | W | EBPF_CTX_DECISION),
    FIELD(ncclbpf_tuner_ctx, n_channels, R | W | EBPF_CTX_DECISION),
};

static const struct ebpf_ctx_field chunk_fields[] = {
    FIELD(ncclbpf_chunk_ctx, comm_id, R),
    FIELD(ncclbpf_chunk_ctx, n_bytes, R),
    FIELD(ncclbpf_chunk_ctx, seq, R),
    FIELD(ncclbpf_chunk_ctx, coll_type, R),
    FIELD(ncclbpf_chunk_ctx, algorithm, R),
    FIELD(ncclbpf_chunk_ctx, protocol, R),
    FIELD(ncclbpf_chunk_ctx, n_channels, R),
    FIELD(ncclbpf_chunk_ctx, nccl_chunk, R),
    FIELD(ncclbpf_chunk_ctx, chunk_size, R | W | EBPF_CTX_DECISION),
};

static const struct ebpf_ctx_field profiler_fields[] = {
    FIELD(ncclbpf_profiler_ctx, comm_id, R),	FIELD(ncclbpf_profiler_ctx, seq, R),
    FIELD(ncclbpf_profiler_ctx, n_bytes, R),	FIELD(ncclbpf_profiler_ctx, start_ns, R),
    FIELD(ncclbpf_profiler_ctx, end_ns, R),	FIELD(ncclbpf_profiler_ctx, duration_ns, R),
    FIELD(ncclbpf_profiler_ctx, event, R),	FIELD(ncclbpf_profiler_ctx, rank, R),
    FIELD(ncclbpf_profiler_ctx, n_ranks, R),	FIELD(ncclbpf_profiler_ctx, coll_type, R),
    FIELD(ncclbpf_profiler_ctx, algorithm, R),	FIELD(ncclbpf_profiler_ctx, protocol, R),
    FIELD(ncclbpf_profiler_ctx, n_channels, R), FIELD(ncclbpf_profiler_ctx, channel, R),
    FIELD(ncclbpf_profiler_ctx, peer, R),
};

static const struct ebpf_ctx_field net_fields[] = {
    FIELD(ncclbpf_net_ctx, comm_id, R),	  FIELD(ncclbpf_net_ctx, bytes, R),
    FIELD(ncclbpf_net_ctx, time_ns, R),	  FIELD(ncclbpf_net_ctx, duration_ns, R),
    FIELD(ncclbpf_net_ctx, op, R),	  FIELD(ncclbpf_net_ctx, dev, R),
    FIELD(ncclbpf_net_ctx, peer, R),	  FIELD(ncclbpf_net_ctx, tag, R),
    FIELD(ncclbpf_net_ctx, peer_addr, R), FIELD(ncclbpf_net_ctx, peer_port, R),
};

/* Helper allow-lists by Linux helper id: 1-3 map lookup/update/delete, 5 clock, 6 log line,
 * 7 random, 8 CPU number; 130-133 ring buffer output/reserve/submit/discard. */
#define HELPERS_BASE                                                                               \
	[0] = (1ull << 1) | (1ull << 2) | (1ull << 3) | (1ull << 5) | (1ull << 6) | (1ull << 7) |  \
	      (1ull << 8)
#define HELPERS_BASIC                                                                              \
	{                                                                                          \
		HELPERS_BASE                                                                       \
	}
#define HELPERS_WITH_RINGBUF                                                                       \
	{                                                                                          \
		HELPERS_BASE, [2] = (1ull << (130 - 128)) | (1ull << (131 - 128)) |                \
				    (1ull << (132 - 128)) | (1ull << (133 - 128))                  \
	}

/* What follows "net/": the net events by the SDK's numbers (ncclbpf.h), then the completion with
 * sampled timing (NCCLBPF_NET_COMPLETE_SAMPLED). The runtime serves exactly these. */
static const char *const net_names[] = {
    [NCCLBPF_NET_CONNECT - 1] = "connect",
    [NCCLBPF_NET_ACCEPT - 1] = "accept",
    [NCCLBPF_NET_ISEND - 1] = "isend",
    [NCCLBPF_NET_IRECV - 1] = "irecv",
    [NCCLBPF_NET_COMPLETE - 1] = "complete",
    [NCCLBPF_NET_NAME_SAMPLED] = "complete/time_every=N",
    NULL,
};

#define PROFILER_TYPE(type_name, sec)                                                              \
	{                                                                                          \
		.name = type_name, .section = sec,                                                 \
		.ctx_size = sizeof(struct ncclbpf_profiler_ctx), .fields = profiler_fields,        \
		.n_fields = sizeof(profiler_fields) / sizeof(profiler_fields[0]),                  \
		.helper_allow = HELPERS_WITH_RINGBUF, .ret_min = 0, .ret_max = 0,                  \
		.insn_budget = 4096,                                                               \
	}

/* How programs read cost_ns (the header's description: the adapter converts by it too). */
static const struct ebpf_ctx_from_f32 tuner_cells = NCCLBPF_TUNER_CELLS_INIT;

static const struct ebpf_prog_type prog_types[] = {
    {
	.name = "tuner",
	.section = "tuner",
	.ctx_size = sizeof(struct ncclbpf_tuner_ctx),
	.fields = tuner_fields,
	.n_fields = sizeof(tuner_fields) / sizeof(tuner_fields[0]),
	/* Rank-local helpers are allowed; the rank-consistency analysis keeps their results
	 * out of decisions. Ring buffer output lets a tuner stream what it decided. */
	.helper_allow = HELPERS_WITH_RINGBUF,
	.ret_min = 0,
	.ret_max = 0,
	.insn_budget = 4096,
	.flags = EBPF_PROG_TYPE_F_RANK_CONSISTENT,
	.from_f32 = &tuner_cells,
    },
    {
	.name = "tuner_chunk",
	.section = "tuner/chunk",
	.ctx_size = sizeof(struct ncclbpf_chunk_ctx),
	.fields = chunk_fields,
	.n_fields = sizeof(chunk_fields) / sizeof(chunk_fields[0]),
	.helper_allow = HELPERS_BASIC,
	.ret_min = 0,
	.ret_max = 0,
	.insn_budget = 4096,
	.flags = EBPF_PROG_TYPE_F_RANK_CONSISTENT,
    },
    /* One program type under three sections: the section tells the profiler adapter which
     * events to run it on (all, COLL_END only) and what to ask NCCL for (proxy operations). */
    PROFILER_TYPE("profiler", "profiler"),
    PROFILER_TYPE("profiler_coll_end", "profiler/coll_end"),
    PROFILER_TYPE("profiler_proxy", "profiler/proxy"),
    {
	.name = "net",
	.section = "net/",
	.ctx_size = sizeof(struct ncclbpf_net_ctx),
	.fields = net_fields,
	.n_fields = sizeof(net_fields) / sizeof(net_fields[0]),
	.helper_allow = HELPERS_WITH_RINGBUF,
	.ret_min = 0,
	.ret_max = 0xffffffff,
	.insn_budget = 4096,
	.names = net_names,
    },
};

static const struct ebpf_platform platform = {
    .name = "nccl",
    .types = prog_types,
    .n_types = sizeof(prog_types) / sizeof(prog_types[0]),
    .per_comm_decl = "__uint(map_flags, NCCLBPF_F_PER_COMM)",
    .uniform_input = "ctx->seq",
    .map_update_how = "ncclbpf map update with NCCLBPF_CP_DIR",
};

const struct ebpf_platform *ncclbpf_platform(void)
{
	return &platform;
}

const struct ebpf_prog_type *ncclbpf_prog_type(const char *name)
{
	return ebpf_platform_type_by_name(&platform, name);
}

/* The caller's options, with the NCCL platform unless they name another. */
static struct ebpf_object_open_opts with_platform(const struct ebpf_object_open_opts *opts)
{
	struct ebpf_object_open_opts o = {.sz = sizeof(o)};
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	o.sz = sizeof(o);
	if (!o.platform)
		o.platform = &platform;
	return o;
}

struct ebpf_object *ncclbpf_object_open_file(const char *path,
					     const struct ebpf_object_open_opts *opts, char *err,
					     size_t err_len)
{
	struct ebpf_object_open_opts o = with_platform(opts);
	return ebpf_object__open_file(path, &o, err, err_len);
}

struct ebpf_object *ncclbpf_object_open_mem(const void *buf, size_t size,
					    const struct ebpf_object_open_opts *opts, char *err,
					    size_t err_len)
{
	struct ebpf_object_open_opts o = with_platform(opts);
	return ebpf_object__open_mem(buf, size, &o, err, err_len);
}
