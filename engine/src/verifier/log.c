/* Diagnostics: the one-line rejection message (instruction, C source line, register state) and
 * the optional per-instruction state trace (EBPF_VERIFY_F_LOG). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ebpf/maps.h"
#include "state.h"

const char *reg_type_str(uint8_t t)
{
	static const char *const names[] = {
	    [NOT_INIT] = "?",
	    [SCALAR] = "scalar",
	    [PTR_TO_CTX] = "ctx",
	    [PTR_TO_STACK] = "fp",
	    [CONST_PTR_TO_MAP] = "map_ptr",
	    [PTR_TO_MAP_VALUE] = "map_value",
	    [PTR_TO_MAP_VALUE_OR_NULL] = "map_value_or_null",
	    [PTR_TO_MEM] = "mem",
	    [PTR_TO_MEM_OR_NULL] = "mem_or_null",
	};
	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "invalid";
}

const struct ebpf_line_info *line_of(const struct env *env, uint32_t pc)
{
	const struct ebpf_line_info *l = env->opts->lines;
	uint32_t lo = 0, hi = env->opts->n_lines;

	if (!l || !hi)
		return NULL;
	/* last entry with insn <= pc */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (l[mid].insn <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &l[lo - 1] : NULL;
}

/* "line 42" or "insn 7" for messages that point at another instruction. */
const char *insn_line_prefix(const struct env *env, uint32_t pc, char *buf, size_t len)
{
	const struct ebpf_line_info *li = line_of(env, pc);

	if (li && li->line)
		snprintf(buf, len, "line %u", li->line);
	else
		snprintf(buf, len, "insn %u", pc);
	return buf;
}

static void append(char *buf, size_t len, size_t *pos, const char *fmt, va_list ap)
{
	int n;

	if (!buf || *pos + 1 >= len)
		return;
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	if (n > 0)
		*pos = *pos + (size_t)n < len ? *pos + (size_t)n : len - 1;
}

void vlog(struct env *env, const char *fmt, ...)
{
	va_list ap;

	if (!env->log_on)
		return;
	va_start(ap, fmt);
	append(env->log, env->log_len, &env->log_pos, fmt, ap);
	va_end(ap);
}

int verr(struct env *env, uint32_t pc, int rc, const char *fmt, ...)
{
	char msg[512], where[256];
	const struct ebpf_line_info *li;
	va_list ap;

	if (env->status) /* keep the first error */
		return rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	li = pc < env->n ? line_of(env, pc) : NULL;
	if (li && li->line && li->src)
		snprintf(where, sizeof(where), "line %u: `%.*s`: insn %u", li->line, 160,
			 li->src + strspn(li->src, " \t"), pc);
	else if (li && li->line)
		snprintf(where, sizeof(where), "line %u: insn %u", li->line, pc);
	else
		snprintf(where, sizeof(where), "insn %u", pc);
	if (env->err && env->err_len)
		snprintf(env->err, env->err_len, "%s: %s", where, msg);
	vlog(env, "%s: %s\n", where, msg);
	env->status = rc;
	return rc;
}

void reg_describe(const struct reg *r, char *buf, size_t len)
{
	size_t pos = 0;

#define P(...)                                                                                     \
	do {                                                                                       \
		int n_ = snprintf(buf + pos, pos < len ? len - pos : 0, __VA_ARGS__);              \
		if (n_ > 0)                                                                        \
			pos += (size_t)n_;                                                         \
	} while (0)
	if (!len)
		return;
	buf[0] = 0;
	if (r->type == NOT_INIT) {
		P("uninit");
		return;
	}
	if (r->type == SCALAR && tnum_is_const(r->var_off)) {
		P("%" PRId64, (int64_t)r->var_off.value);
	} else {
		P("%s", reg_type_str(r->type));
		P("(");
		if (reg_is_ptr(r))
			P("off=%d,", r->off);
		if (r->type == PTR_TO_MAP_VALUE || r->type == PTR_TO_MAP_VALUE_OR_NULL ||
		    r->type == CONST_PTR_TO_MAP)
			P("map=%u,", r->map_idx);
		if (r->type == PTR_TO_MEM || r->type == PTR_TO_MEM_OR_NULL)
			P("size=%u,", r->mem_size);
		if (r->id)
			P("id=%u,", r->id);
		if (reg_is_ptr(r) && tnum_is_const(r->var_off)) {
			if (r->var_off.value)
				P("imm=%" PRId64 ",", (int64_t)r->var_off.value);
		} else {
			if (r->smin != S64_MIN || r->smax != S64_MAX)
				P("smin=%" PRId64 ",smax=%" PRId64 ",", r->smin, r->smax);
			if (r->umin != 0 || r->umax != U64_MAX)
				P("umin=%" PRIu64 ",umax=%" PRIu64 ",", r->umin, r->umax);
			if (r->s32_min != S32_MIN || r->s32_max != S32_MAX)
				P("smin32=%d,smax32=%d,", r->s32_min, r->s32_max);
			if (r->u32_min != 0 || r->u32_max != U32_MAX)
				P("umin32=%u,umax32=%u,", r->u32_min, r->u32_max);
			if (!tnum_is_unknown(r->var_off))
				P("var_off=(0x%" PRIx64 "; 0x%" PRIx64 "),", r->var_off.value,
				  r->var_off.mask);
		}
		if (pos && pos - 1 < len && buf[pos - 1] == ',')
			buf[--pos] = 0;
		P(")");
	}
	if (r->local)
		P(" rank-local");
#undef P
}

static const char *const alu_names[16] = {"+=",	 "-=", "*=", "/=", "|=",   "&=",  "<<=", ">>=",
					  "neg", "%=", "^=", "=",  "s>>=", "end", "?",	 "?"};
static const char *const jmp_names[16] = {"goto", "==",	  ">", ">=", "&",  "!=",  "s>", "s>=",
					  "call", "exit", "<", "<=", "s<", "s<=", "?",	"?"};
static const char *const size_names[4] = {"u32", "u16", "u8", "u64"};

/* A compact disassembly in the Linux verifier-log syntax. */
static void insn_str(const struct env *env, uint32_t pc, char *b, size_t len)
{
	const struct ebpf_insn *i = &env->insns[pc];
	uint8_t cls = EBPF_CLASS(i->code), op = EBPF_OP(i->code) >> 4;
	const char *w = cls == EBPF_ALU || cls == EBPF_JMP32 ? "w" : "r";
	bool x = EBPF_SRC(i->code) == EBPF_X;
	char src[24];

	if (x)
		snprintf(src, sizeof(src), "%s%u", w, i->src_reg);
	else
		snprintf(src, sizeof(src), "%d", i->imm);
	switch (cls) {
	case EBPF_ALU:
	case EBPF_ALU64:
		if (op == (EBPF_NEG >> 4))
			snprintf(b, len, "%s%u = -%s%u", w, i->dst_reg, w, i->dst_reg);
		else if (op == (EBPF_END >> 4))
			snprintf(b, len, "r%u = %s%d r%u", i->dst_reg,
				 cls == EBPF_ALU64 ? "bswap"
				 : x		   ? "be"
						   : "le",
				 i->imm, i->dst_reg);
		else
			snprintf(b, len, "%s%u %s %s", w, i->dst_reg, alu_names[op], src);
		break;
	case EBPF_LDX:
		snprintf(b, len, "r%u = *(%s%s *)(r%u %+d)", i->dst_reg,
			 EBPF_MODE(i->code) == EBPF_MEMSX ? "s" : "",
			 size_names[EBPF_SIZE(i->code) >> 3] + (EBPF_MODE(i->code) == EBPF_MEMSX),
			 i->src_reg, i->off);
		break;
	case EBPF_ST:
		snprintf(b, len, "*(%s *)(r%u %+d) = %d", size_names[EBPF_SIZE(i->code) >> 3],
			 i->dst_reg, i->off, i->imm);
		break;
	case EBPF_STX:
		if (EBPF_MODE(i->code) == EBPF_ATOMIC)
			snprintf(b, len, "lock *(%s *)(r%u %+d) op 0x%x r%u",
				 size_names[EBPF_SIZE(i->code) >> 3], i->dst_reg, i->off, i->imm,
				 i->src_reg);
		else
			snprintf(b, len, "*(%s *)(r%u %+d) = r%u",
				 size_names[EBPF_SIZE(i->code) >> 3], i->dst_reg, i->off,
				 i->src_reg);
		break;
	case EBPF_LD:
		if (i->src_reg)
			snprintf(b, len, "r%u = map[%d]%s", i->dst_reg, i->imm,
				 i->src_reg == EBPF_PSEUDO_MAP_VALUE ? " value" : "");
		else
			snprintf(b, len, "r%u = 0x%" PRIx64 " ll", i->dst_reg,
				 (uint64_t)(uint32_t)i->imm |
				     ((uint64_t)(uint32_t)(pc + 1 < env->n ? i[1].imm : 0) << 32));
		break;
	default:
		if (op == (EBPF_CALL >> 4))
			snprintf(b, len, "call %s%d", i->src_reg == EBPF_PSEUDO_CALL ? "pc" : "#",
				 i->src_reg == EBPF_PSEUDO_CALL ? i->imm + 1 : i->imm);
		else if (op == (EBPF_EXIT >> 4))
			snprintf(b, len, "exit");
		else if (op == 0)
			snprintf(b, len, "goto pc%+d", cls == EBPF_JMP32 ? i->imm : i->off);
		else
			snprintf(b, len, "if %s%u %s %s goto pc%+d", w, i->dst_reg, jmp_names[op],
				 src, i->off);
		break;
	}
}

void log_insn_state(struct env *env, uint32_t pc)
{
	char ins[96], rb[256];
	const struct ebpf_line_info *li;
	struct frame *f;

	if (!env->log_on)
		return;
	li = line_of(env, pc);
	if (li && li->insn == pc && li->src)
		vlog(env, "; %s @ line %u\n", li->src, li->line);
	f = cur_frame(env);
	insn_str(env, pc, ins, sizeof(ins));
	vlog(env, "%u: (%02x) %s ;", pc, env->insns[pc].code, ins);
	if (env->cur.curframe)
		vlog(env, " frame%u:", env->cur.curframe);
	for (int r = 0; r < EBPF_NREGS; r++) {
		if (f->regs[r].type == NOT_INIT)
			continue;
		reg_describe(&f->regs[r], rb, sizeof(rb));
		vlog(env, " R%d=%s", r, rb);
	}
	for (uint32_t s = 0; s < f->nslots; s++) {
		const struct slot *sl = &f->slots[s];
		if (STACK_KIND(sl->bytes[0]) == STACK_SPILL) {
			reg_describe(&sl->spill, rb, sizeof(rb));
			vlog(env, " fp-%u=%s", 8 * (s + 1), rb);
		} else {
			char k[9];
			bool any = false;
			for (int b = 0; b < 8; b++) {
				static const char kc[] = "?mc";
				k[b] = kc[STACK_KIND(sl->bytes[b]) % 3];
				if (STACK_KIND(sl->bytes[b]) == STACK_CONST && !sl->val[b])
					k[b] = '0';
				any |= STACK_KIND(sl->bytes[b]) != STACK_INVALID;
			}
			k[8] = 0;
			if (any)
				vlog(env, " fp-%u=%s", 8 * (s + 1), k);
		}
	}
	vlog(env, "\n");
}

struct ebpf_map *env_map(const struct env *env, uint32_t idx)
{
	return env->opts->maps[idx];
}

bool map_is_ringbuf(const struct env *env, uint32_t idx)
{
	return ebpf_map__type(env_map(env, idx)) == EBPF_MAP_TYPE_RINGBUF;
}

bool map_is_rdonly(const struct env *env, uint32_t idx)
{
	return ebpf_map__flags(env_map(env, idx)) & EBPF_MAP_F_RDONLY_PROG;
}

bool map_is_local(const struct env *env, uint32_t idx)
{
	return env->opts->map_flags && (env->opts->map_flags[idx] & EBPF_VERIFY_MAP_RANK_LOCAL);
}

bool map_presence_fixed(const struct env *env, uint32_t idx)
{
	uint32_t t = ebpf_map__type(env_map(env, idx));
	return t == EBPF_MAP_TYPE_ARRAY || t == EBPF_MAP_TYPE_PERCPU_ARRAY;
}

bool map_is_per_comm(const struct env *env, uint32_t idx)
{
	return env->opts->map_flags && (env->opts->map_flags[idx] & EBPF_VERIFY_MAP_PER_COMM);
}

void map_mark_written(struct env *env, uint32_t idx, uint32_t pc)
{
	if (env->opts->map_flags)
		env->opts->map_flags[idx] |= EBPF_VERIFY_MAP_WRITTEN;
	if (env->opts->map_write_insn && env->opts->map_write_insn[idx] == UINT32_MAX)
		env->opts->map_write_insn[idx] = pc;
}
