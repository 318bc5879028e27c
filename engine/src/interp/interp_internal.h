/* Shared between the interpreter's instantiations (interp_body.inc compiled as the fast, the
 * instruction-limited and the bounds-checking variant) and its out-of-line checking code. */
#ifndef EBPF_INTERP_INTERNAL_H
#define EBPF_INTERP_INTERNAL_H

#include <stdint.h>

#include "exec_internal.h"

#define INTERP_STACK_BYTES (EBPF_MAX_FRAMES * EBPF_STACK_SIZE)
#define INTERP_MAX_DYN	   64 /* helper-returned regions remembered per run */

#define INTERP_ACC_READ	 EBPF_REGION_READ
#define INTERP_ACC_WRITE EBPF_REGION_WRITE

/* A return frame of a bpf-to-bpf call: where to continue and the caller's r6-r9. */
struct interp_frame {
	const struct ebpf_interp_insn *ret;
	uint64_t saved[4];
	uint32_t rinit; /* checked variant: the caller's initialised-register mask */
};

/* Checked variant: register masks (bit n = rn holds a value). */
#define INTERP_R0    (1u << EBPF_REG_0)
#define INTERP_R1_R5 0x3eu
#define INTERP_R6_R9 0x3c0u
#define INTERP_R10   (1u << EBPF_REG_10)

struct interp_dyn_region {
	struct ebpf_region r;
	int alloc; /* from a reserve helper: released when passed to a PTR_TO_ALLOC_MEM arg */
};

/* Per-run state of the bounds-checking variant. */
struct interp_cstate {
	const struct ebpf_exec *prog;
	const struct ebpf_region *regions;
	uint32_t n_regions;
	uint64_t stack_base;		  /* lowest byte of the deepest frame */
	uint64_t stack_top;		  /* one past the entry frame: r10 of frame 0 */
	uint8_t init[INTERP_STACK_BYTES]; /* 1 = byte written since its frame was entered */
	struct interp_dyn_region dyn[INTERP_MAX_DYN];
	uint32_t n_dyn, next_dyn;
};

/* Signed division and modulo with the kernel's answers where C's are undefined. */
static inline uint64_t sdiv64(uint64_t d, uint64_t s)
{
	if (!s)
		return 0;
	if (s == (uint64_t)-1)
		return 0 - d; /* INT64_MIN / -1 = INT64_MIN */
	return (uint64_t)((int64_t)d / (int64_t)s);
}
static inline uint64_t smod64(uint64_t d, uint64_t s)
{
	if (!s)
		return d;
	if (s == (uint64_t)-1)
		return 0;
	return (uint64_t)((int64_t)d % (int64_t)s);
}
static inline uint32_t sdiv32(uint32_t d, uint32_t s)
{
	if (!s)
		return 0;
	if (s == (uint32_t)-1)
		return 0 - d;
	return (uint32_t)((int32_t)d / (int32_t)s);
}
static inline uint32_t smod32(uint32_t d, uint32_t s)
{
	if (!s)
		return d;
	if (s == (uint32_t)-1)
		return 0;
	return (uint32_t)((int32_t)d % (int32_t)s);
}

typedef int (*interp_fn)(const struct ebpf_exec *prog, uint64_t r1, uint64_t r2,
			 const struct ebpf_run_opts *opts, struct ebpf_fault *fault, uint64_t *r0);

int interp_run_fast(const struct ebpf_exec *prog, uint64_t r1, uint64_t r2,
		    const struct ebpf_run_opts *opts, struct ebpf_fault *fault, uint64_t *r0);
int interp_run_limited(const struct ebpf_exec *prog, uint64_t r1, uint64_t r2,
		       const struct ebpf_run_opts *opts, struct ebpf_fault *fault, uint64_t *r0);
int interp_run_checked(const struct ebpf_exec *prog, uint64_t r1, uint64_t r2,
		       const struct ebpf_run_opts *opts, struct ebpf_fault *fault, uint64_t *r0);

/* Fills *f and returns -EFAULT. */
__attribute__((cold, format(printf, 6, 7))) int interp_fault(struct ebpf_fault *f, int kind,
							     uint32_t pc, uint64_t addr,
							     uint32_t size, const char *fmt, ...);

/* Checked mode: 0 when [addr, addr+size) may be accessed as acc (INTERP_ACC_*) with the current
 * frame pointer fp, else fills *f and returns -EFAULT. Writes to the stack mark bytes
 * initialised. */
int interp_check_mem(struct interp_cstate *cs, uint64_t fp, uint64_t addr, uint32_t size,
		     uint32_t acc, struct ebpf_fault *f, uint32_t pc);
/* Checked mode, before a helper call: pointer arguments must be readable for the sizes their
 * kinds imply. */
int interp_check_helper_args(struct interp_cstate *cs, const struct ebpf_helper_proto *p,
			     const uint64_t *reg, struct ebpf_fault *f, uint32_t pc);
/* Checked mode, after a helper call: remember memory the helper handed out. */
void interp_note_helper_ret(struct interp_cstate *cs, const struct ebpf_helper_proto *p,
			    uint64_t r1, uint64_t r2, uint64_t r0);

#endif
