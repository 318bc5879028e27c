/* The program types the SDK (include/ncclbpf.h) defines, as verifier tables. The offsets come
 * from the SDK structs themselves and the layouts are pinned by static asserts, so the table and
 * the header cannot drift apart. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ncclbpf.h"
#include "ncclbpf/maps.h"
#include "ncclbpf/progtype.h"

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

#define PROFILER_TYPE(type_name, sec)                                                              \
	{                                                                                          \
		.name = type_name, .section = sec,                                                 \
		.ctx_size = sizeof(struct ncclbpf_profiler_ctx), .fields = profiler_fields,        \
		.n_fields = sizeof(profiler_fields) / sizeof(profiler_fields[0]),                  \
		.helper_allow = HELPERS_WITH_RINGBUF, .ret_min = 0, .ret_max = 0,                  \
		.insn_budget = 4096,                                                               \
	}

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
    },
};

const struct ebpf_prog_type *ebpf_prog_type_by_section(const char *section)
{
	if (!section)
		return NULL;
	for (size_t i = 0; i < sizeof(prog_types) / sizeof(prog_types[0]); i++) {
		const char *s = prog_types[i].section;
		size_t n = strlen(s);
		if (n && s[n - 1] == '/') {
			if (!strncmp(section, s, n) && section[n])
				return &prog_types[i];
		} else if (!strcmp(section, s)) {
			return &prog_types[i];
		}
	}
	return NULL;
}

const struct ebpf_prog_type *ebpf_prog_type_by_name(const char *name)
{
	for (size_t i = 0; name && i < sizeof(prog_types) / sizeof(prog_types[0]); i++)
		if (!strcmp(prog_types[i].name, name))
			return &prog_types[i];
	return NULL;
}

void ebpf_prog_type_sections(char *buf, size_t len)
{
	size_t used = 0;
	if (!buf || !len)
		return;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof(prog_types) / sizeof(prog_types[0]) && used < len; i++) {
		const char *s = prog_types[i].section;
		size_t n = strlen(s);
		int w = snprintf(buf + used, len - used, "%s%s%s", i ? ", " : "", s,
				 n && s[n - 1] == '/' ? "<name>" : "");
		used += w > 0 ? (size_t)w : 0;
	}
}

uint64_t ebpf_prog_type_field_bit(const struct ebpf_prog_type *type, const char *name)
{
	for (uint32_t i = 0; type && name && i < type->n_fields; i++)
		if (!strcmp(type->fields[i].name, name))
			return 1ull << (i < 63 ? i : 63);
	return 0;
}
