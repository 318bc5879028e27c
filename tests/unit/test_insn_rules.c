/* ebpf_exec__new and the verifier judge an instruction's encoding alike: over every opcode byte
 * and a spread of register, offset and immediate values, an instruction one of them finds
 * malformed the other finds malformed too, with the same message. Both check through one table
 * (engine/src/insn_rules.c); this test catches a rule added to one checker only.
 *
 * Each candidate sits at pc CAND after a prologue that sets r0-r9, so the verifier reaches it
 * with initialised registers, and before enough padding that every jump it can encode here lands
 * inside the program; every helper id has a prototype. What the verifier then rejects at CAND
 * as malformed (-EINVAL) can only come from the encoding rules, and what ebpf_exec__new rejects
 * there likewise; semantic rejections (-EACCES: division by zero, memory access) are the
 * verifier's own business and not compared. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "insn_macros.h"
#include "ebpf/helpers.h"
#include "ebpf/exec.h"
#include "ebpf/verifier.h"

#define CAND 10
#define PAD  70
#define N    (CAND + 2 + PAD + 1)

static uint64_t h_zero(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return 0;
}

static struct ebpf_helper_proto protos[EBPF_MAX_HELPERS];
static struct ebpf_helper_table helpers;

static int mismatches, compared, malformed;

static void compare(const struct ebpf_insn *cand)
{
	struct ebpf_insn p[N];
	struct ebpf_exec_opts po = {.sz = sizeof(po), .helpers = &helpers};
	struct ebpf_verify_opts vo = {.sz = sizeof(vo), .helpers = &helpers};
	char perr[256] = "", verr[512] = "", at[16];
	struct ebpf_exec *prog;
	int vrc, p_bad, v_bad;

	for (int r = 0; r < CAND; r++)
		p[r] = (struct ebpf_insn)MOV64_IMM(r, 0);
	p[CAND] = *cand;
	p[CAND + 1] = ebpf_insn_is_lddw(cand) ? (struct ebpf_insn)INSN(0, 0, 0, 0, 0)
					      : (struct ebpf_insn)MOV64_IMM(0, 0);
	for (int k = CAND + 2; k < N - 1; k++)
		p[k] = (struct ebpf_insn)MOV64_IMM(0, 0);
	p[N - 1] = (struct ebpf_insn)EXIT();

	snprintf(at, sizeof(at), "insn %d: ", CAND);
	prog = ebpf_exec__new(p, N, &po, perr, sizeof(perr));
	ebpf_exec__free(prog);
	vrc = ebpf_verify(p, N, &vo, NULL, verr, sizeof(verr));
	p_bad = !prog && strncmp(perr, at, strlen(at)) == 0;
	v_bad = vrc == -EINVAL && strncmp(verr, at, strlen(at)) == 0;
	compared++;
	malformed += p_bad;
	if (p_bad == v_bad && (!p_bad || strcmp(perr, verr) == 0))
		return;
	if (mismatches++ < 10)
		fprintf(
		    stderr,
		    "code 0x%02x dst %u src %u off %d imm %d:\n  ebpf_exec__new: %s\n  verifier "
		    "(%d): %s\n",
		    cand->code, cand->dst_reg, cand->src_reg, cand->off, cand->imm,
		    prog ? "accepted" : perr, vrc, vrc ? verr : "accepted");
}

/* A call whose immediate makes the program's shape wrong, not the encoding: helper id -1 is in
 * no table, and a local call to the next instruction would end the main function at the call. */
static int call_outside_shape(const struct ebpf_insn *c)
{
	return c->code == (EBPF_JMP | EBPF_CALL) &&
	       ((c->src_reg == EBPF_PSEUDO_HELPER && c->imm < 0) ||
		(c->src_reg == EBPF_PSEUDO_CALL && c->imm == 0));
}

int main(void)
{
	static const uint8_t regs[] = {0, 1, 10, 11};
	static const uint8_t srcs[] = {0, 1, 2, 4, 10, 11};
	static const int16_t offs[] = {0, 1, 8, 32, -1};
	static const int32_t imms[] = {0, 1, 16, 64, -1};
	/* every atomic operation and a few that are not */
	static const int32_t atomics[] = {EBPF_ATOMIC_ADD,
					  EBPF_ATOMIC_OR,
					  EBPF_ATOMIC_AND,
					  EBPF_ATOMIC_XOR,
					  EBPF_ATOMIC_ADD | EBPF_FETCH,
					  EBPF_ATOMIC_OR | EBPF_FETCH,
					  EBPF_ATOMIC_AND | EBPF_FETCH,
					  EBPF_ATOMIC_XOR | EBPF_FETCH,
					  EBPF_XCHG,
					  EBPF_CMPXCHG,
					  0x10,
					  0xe0,
					  0xf0};

	for (uint32_t id = 0; id < EBPF_MAX_HELPERS; id++) {
		protos[id] = (struct ebpf_helper_proto){.id = id, .name = "h", .fn = h_zero};
		helpers.by_id[id] = &protos[id];
	}
	for (int code = 0; code < 256; code++) {
		int atomic = (code & 0xe7) == (EBPF_STX | EBPF_ATOMIC);
		const int32_t *iv = atomic ? atomics : imms;
		size_t ni =
		    atomic ? sizeof(atomics) / sizeof(*atomics) : sizeof(imms) / sizeof(*imms);

		for (size_t d = 0; d < sizeof(regs); d++)
			for (size_t s = 0; s < sizeof(srcs); s++)
				for (size_t o = 0; o < sizeof(offs) / sizeof(*offs); o++)
					for (size_t i = 0; i < ni; i++) {
						struct ebpf_insn c =
						    INSN(code, regs[d], srcs[s], offs[o], iv[i]);
						if (!call_outside_shape(&c))
							compare(&c);
					}
	}
	printf("%d instructions compared, %d malformed\n", compared, malformed);
	CHECK_EQ_U64(mismatches, 0);
	/* the grid holds both kinds, so the agreement is not vacuous */
	CHECK(malformed > compared / 2 && malformed < compared);
	return check_summary("insn_rules");
}
