/* Verification of an object's programs and the one place that decides which of its maps are
 * rank-local (docs/verifier.md, "Rank consistency").
 *
 * The rule: a decision (every output of a rank-consistent program, by data or control
 * dependence) may depend only on inputs that are the same on every rank of the communicator:
 * uniform context fields, .rodata, maps that no program of the object writes (they change only
 * through the control plane, at a call every rank agrees on) and per-communicator maps (each
 * communicator's own decision state, written only from uniform values). Every other map some
 * program writes is rank-local for decisions: what it holds depends on which calls, of which
 * communicators, on which CPUs, reached this process, and that differs between ranks even for
 * the decision program's own earlier writes. Per-CPU and LRU maps are rank-local whoever
 * writes them (a per-CPU read sees the slot of the CPU the thread runs on; eviction decides
 * which keys an LRU map keeps). Programs may still keep statistics in rank-local maps; they
 * only cannot decide from them.
 *
 * Which maps a program writes is known only once it is verified (EBPF_VERIFY_MAP_WRITTEN). So:
 * observing programs (profiler, net) first; then each decision program with the maps known
 * to be rank-local so far; then every decision program that references a map that became
 * rank-local after it was verified (its own writes, a later program's) is verified again. What
 * a program writes does not depend on which maps are rank-local (labels change no path), so
 * that round reaches the fixpoint. Decision programs that write no map are verified once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "loader.h"

#define WHY_LEN 640

struct rank_pass {
	struct ebpf_object *obj;
	struct ebpf_map *const *maps;
	const struct ebpf_helper_table *helpers;
	const struct ebpf_object_load_opts *o;
	uint8_t flags[EBPF_OBJECT_MAX_MAPS];
	uint32_t write_insn[EBPF_OBJECT_MAX_MAPS];
	const char *why[EBPF_OBJECT_MAX_MAPS];
	char why_buf[EBPF_OBJECT_MAX_MAPS][WHY_LEN];
	uint64_t always_local; /* per-CPU and LRU maps */
	uint64_t per_comm;
	uint64_t written;	 /* by any program verified so far */
	uint64_t *verified_with; /* per program: the rank-local maps of its last verification */
};

static int decides(const struct ebpf_program *p)
{
	return !!(p->type->flags & EBPF_PROG_TYPE_F_RANK_CONSISTENT);
}

/* The maps a program's code references (pseudo map immediates). */
static uint64_t refs_of(const struct ebpf_program *p, uint32_t n_maps)
{
	uint64_t r = 0;
	for (uint32_t i = 0; i + 1 < p->n_insns; i++) {
		const struct ebpf_insn *in = &p->insns[i];
		if (!ebpf_insn_is_lddw(in))
			continue;
		if ((in->src_reg == EBPF_PSEUDO_MAP_FD || in->src_reg == EBPF_PSEUDO_MAP_VALUE) &&
		    in->imm >= 0 && (uint32_t)in->imm < n_maps)
			r |= 1ull << in->imm;
		i++;
	}
	return r;
}

static uint64_t rank_local(const struct rank_pass *rp)
{
	return (rp->always_local | rp->written) & ~rp->per_comm;
}

/* "line 21 (`*n += 1;`)": where verification found program p writing. */
static void write_site(const struct ebpf_program *p, uint32_t insn, char *buf, size_t len)
{
	const struct ebpf_line_info *li = ebpf_program__line_of(p, insn);
	if (li && li->src)
		snprintf(buf, len, "line %u (`%.100s`)", li->line,
			 li->src + strspn(li->src, " \t"));
	else if (li)
		snprintf(buf, len, "line %u", li->line);
	else
		snprintf(buf, len, "insn %u", insn);
}

/* "<pre><text><post>" when the platform has the words, else "" (ebpf_platform's advice). */
static const char *words(char *buf, size_t len, const char *pre, const char *text, const char *post)
{
	if (!text)
		return "";
	snprintf(buf, len, "%s%.60s%s", pre, text, post);
	return buf;
}

/* Why map k is rank-local and what to do instead, for the verifier's message, in the words of
 * the host's SDK (ebpf_platform). The kind of map comes first: no program change makes a
 * per-CPU or LRU map uniform. */
static const char *why_local(struct rank_pass *rp, uint32_t k)
{
	const struct ebpf_object_map *m = &rp->obj->maps[k];
	const struct ebpf_program *p = m->writer;
	const struct ebpf_platform *pf = rp->obj->platform;
	char *b = rp->why_buf[k], where[160] = "", decl[100], alt[100], how[100];
	const char *per_comm = words(decl, sizeof(decl), " (", pf ? pf->per_comm_decl : NULL, ")");
	const char *update = words(how, sizeof(how), " (", pf ? pf->map_update_how : NULL, ")");

	if (p)
		write_site(p, m->writer_insn, where, sizeof(where));
	if (m->def.type == EBPF_MAP_TYPE_LRU_HASH)
		snprintf(b, WHY_LEN,
			 "`%.63s` is an LRU hash: eviction decides which keys it keeps; keep "
			 "decision state in a per-communicator HASH%.64s",
			 m->name, per_comm);
	else if ((rp->always_local >> k) & 1)
		snprintf(b, WHY_LEN,
			 "`%.63s` is a per-CPU map: each rank reads the slot of the CPU its thread "
			 "runs on; keep decision state in a per-communicator ARRAY%.64s",
			 m->name, per_comm);
	else if (p && !decides(p))
		snprintf(
		    b, WHY_LEN,
		    "`%.63s` is written by %.40s program `%.63s` at %.150s: it holds this "
		    "rank's own measurements; act on them through the control plane%.64s into a "
		    "map no program writes",
		    m->name, p->section, p->name, where, update);
	else if (p && m->kind != EBPF_OBJECT_MAP_BTF)
		snprintf(
		    b, WHY_LEN,
		    "`%.63s` is written by %.40s program `%.63s` at %.120s: what it holds "
		    "depends on the calls of every communicator in this process; keep decision "
		    "state in a per-communicator map%.64s%.80s, and make read-only settings const "
		    "(.rodata)",
		    m->name, p->section, p->name, where, per_comm,
		    words(alt, sizeof(alt), " or decide from ", pf ? pf->uniform_input : NULL, ""));
	else if (p)
		snprintf(
		    b, WHY_LEN,
		    "`%.63s` is written by %.40s program `%.63s` at %.120s: what it holds "
		    "depends on the calls of every communicator in this process; declare it "
		    "per-communicator%.64s%.80s, or change it only through the control plane",
		    m->name, p->section, p->name, where, per_comm,
		    words(alt, sizeof(alt), ", decide from ", pf ? pf->uniform_input : NULL, ""));
	else
		snprintf(b, WHY_LEN, "`%.63s` may differ between ranks", m->name);
	return b;
}

/* Verifies program i with `local` as its rank-local maps; adds its writes. */
static int verify_prog(struct rank_pass *rp, uint32_t i, uint64_t local, char *err, size_t err_len)
{
	struct ebpf_object *obj = rp->obj;
	struct ebpf_program *p = &obj->progs[i];
	uint64_t spent = p->vstats.time_ns; /* an earlier round's time counts too */

	for (uint32_t k = 0; k < obj->n_maps; k++) {
		int l = (local >> k) & 1;
		rp->flags[k] = (l ? EBPF_VERIFY_MAP_RANK_LOCAL : 0) |
			       ((rp->per_comm >> k) & 1 ? EBPF_VERIFY_MAP_PER_COMM : 0);
		rp->why[k] = l ? why_local(rp, k) : NULL;
	}
	memset(&p->vstats, 0, sizeof(p->vstats));
	if (rp->o->convert_ctx && p->type && p->type->from_f32 && !p->ctx_off &&
	    !(p->ctx_off = calloc(p->n_insns, sizeof(*p->ctx_off))))
		return ldr_err(err, err_len, ENOMEM, "out of memory");
	struct ebpf_verify_opts vo = {
	    .sz = sizeof(vo),
	    .type = p->type,
	    .maps = rp->maps,
	    .n_maps = obj->n_maps,
	    .map_flags = rp->flags,
	    .helpers = rp->helpers,
	    .lines = p->lines,
	    .n_lines = p->n_lines,
	    .flags = rp->o->verify_flags,
	    .complexity_limit = rp->o->complexity_limit,
	    .log_buf = rp->o->log_buf,
	    .log_size = rp->o->log_size,
	    .map_why = rp->why,
	    .map_write_insn = rp->write_insn,
	    .ctx_off = p->ctx_off,
	};
	int ret = ebpf_verify(p->insns, p->n_insns, &vo, &p->vstats, err, err_len);
	p->vstats.time_ns += spent;
	if (ret < 0 && !p->n_lines && err && err_len) /* no .BTF.ext: the reader gets insns only */
		snprintf(err + strnlen(err, err_len - 1), err_len - strnlen(err, err_len - 1),
			 " (compile with -g for source lines)");
	rp->verified_with[i] = local;
	for (uint32_t k = 0; k < obj->n_maps; k++) {
		struct ebpf_object_map *m = &obj->maps[k];
		if (!(rp->flags[k] & EBPF_VERIFY_MAP_WRITTEN))
			continue;
		rp->written |= 1ull << k;
		if (!m->writer) { /* observers come first: their writes are named first */
			m->writer = p;
			m->writer_insn = rp->write_insn[k];
		}
	}
	return ret;
}

/* Records the classification on every map (ebpf_object_map__rank_flags). */
static void record(struct rank_pass *rp)
{
	uint64_t local = rank_local(rp);
	for (uint32_t k = 0; k < rp->obj->n_maps; k++) {
		struct ebpf_object_map *m = &rp->obj->maps[k];
		m->rank_flags = ((rp->written >> k) & 1 ? EBPF_OBJECT_MAP_F_WRITTEN : 0) |
				((local >> k) & 1 ? EBPF_OBJECT_MAP_F_RANK_LOCAL : 0) |
				((rp->per_comm >> k) & 1 ? EBPF_OBJECT_MAP_F_PER_COMM : 0);
	}
}

/* The report phase of ebpf_object__verify: each program verified once more with the maps it
 * was last verified with, for its message and log (the rounds keep neither). */
static void report_all(struct rank_pass *rp, const int *rc, ebpf_object_verify_report_fn report,
		       void *arg)
{
	char msg[1024];
	for (uint32_t i = 0; i < rp->obj->n_progs; i++) {
		struct ebpf_program *p = &rp->obj->progs[i];
		int r = rc[i];
		msg[0] = 0;
		if (r || rp->o->log_buf) {
			struct ebpf_verify_stats keep = p->vstats;
			r = verify_prog(rp, i, rp->verified_with[i], msg, sizeof(msg));
			p->vstats =
			    keep; /* the rounds' statistics, as ebpf_object__load has them */
		}
		report(arg, p, r, msg[0] ? msg : r ? "rejected" : "");
	}
}

int ldr_verify_programs(struct ebpf_object *obj, struct ebpf_map *const *maps,
			const struct ebpf_helper_table *helpers,
			const struct ebpf_object_load_opts *o, ebpf_object_verify_report_fn report,
			void *arg, char *err, size_t err_len)
{
	struct rank_pass *rp = calloc(1, sizeof(*rp));
	uint32_t np = obj->n_progs ? obj->n_progs : 1;
	uint64_t *with = calloc(np, sizeof(*with));
	int *rc = calloc(np, sizeof(*rc));
	char msg[1024];
	int ret = 0, rejected = 0;

	if (!rp || !with || !rc) {
		free(rp);
		free(with);
		free(rc);
		return ldr_err(err, err_len, ENOMEM, "out of memory");
	}
	*rp = (struct rank_pass){.obj = obj, .maps = maps, .helpers = helpers, .o = o};
	rp->verified_with = with;
	for (uint32_t k = 0; k < obj->n_maps; k++) {
		struct ebpf_object_map *m = &obj->maps[k];
		uint32_t t = m->def.type;
		m->writer = NULL;
		m->writer_insn = 0;
		if (t == EBPF_MAP_TYPE_PERCPU_ARRAY || t == EBPF_MAP_TYPE_PERCPU_HASH ||
		    t == EBPF_MAP_TYPE_LRU_HASH)
			rp->always_local |= 1ull << k;
		if (m->def.flags & EBPF_MAP_F_PER_COMM)
			rp->per_comm |= 1ull << k;
	}
	for (uint32_t i = 0; i < obj->n_progs; i++)
		memset(&obj->progs[i].vstats, 0, sizeof(obj->progs[i].vstats));
	/* round 0: observers; round 1: decision programs; round 2: decision programs that use a
	 * map that became rank-local after their verification */
	for (int round = 0; round < 3 && !ret; round++) {
		for (uint32_t i = 0; i < obj->n_progs; i++) {
			struct ebpf_program *p = &obj->progs[i];
			uint64_t local = round ? rank_local(rp) : 0;
			if (decides(p) != (round > 0) || rc[i])
				continue;
			if (round == 2 && !(refs_of(p, obj->n_maps) & local & ~with[i]))
				continue;
			msg[0] = 0;
			rc[i] = verify_prog(rp, i, local, msg, sizeof(msg));
			if (!rc[i])
				continue;
			rejected++;
			if (!report) {
				ret =
				    ldr_err(err, err_len, -rc[i], "program '%s' (section '%s'): %s",
					    p->name, p->section, msg[0] ? msg : "rejected");
				break;
			}
		}
	}
	record(rp);
	if (report && !ret)
		report_all(rp, rc, report, arg);
	free(rc);
	free(with);
	free(rp);
	return ret ? ret : rejected;
}
