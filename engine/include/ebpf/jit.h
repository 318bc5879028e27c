/* JIT compilation to native code (x86-64 today; one backend folder per architecture).
 * Owner: engine/src/jit/. The interpreter stays the fallback where no backend exists.
 *
 * Calling convention: the compiled program is a plain C function, uint64_t fn(r1, r2); the
 * runtime may call ebpf_exec__jit_fn(prog) directly on its hot path (no trampoline, no lock, no
 * per-call state). Code pages are mapped writable while the code is emitted and then switched
 * to read+execute; they are never writable and executable at once.
 *
 * Run-time faults: the only one a compiled program can hit is call-depth overflow (more than
 * EBPF_MAX_FRAMES frames of bpf-to-bpf calls; the verifier rejects programs that could). The
 * JIT counts frames, unwinds the whole run without touching memory beyond its frames, and returns
 * EBPF_JIT_FAULT_R0 from fn; the program's fault counter (ebpf_exec__jit_faults) is incremented
 * atomically, and ebpf_exec__run reports such a run as -EFAULT with EBPF_FAULT_CALL_DEPTH. */
#ifndef EBPF_JIT_H
#define EBPF_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Value a compiled program returns when it was aborted on call-depth overflow. 0 is every hook's
 * "no decision" value, so an aborted policy degrades to NCCL's own behaviour. */
#define EBPF_JIT_FAULT_R0 0ull

struct ebpf_jit_stats {
	uint64_t compile_ns; /* wall time of ebpf_exec__jit */
	uint32_t code_size;  /* bytes of machine code */
	uint32_t n_inlined;  /* map lookups compiled to an address computation */
	uint32_t may_abort;  /* 1: has bpf-to-bpf calls, so a run can abort on call depth */
	uint32_t keeps_regs; /* 1: the entry keeps registers (ebpf_jit_call_keeping) */
	uint64_t faults;     /* runs aborted on call-depth overflow (ebpf_exec__jit_faults) */
};

/* Options for ebpf_exec__jit_opts (size-prefixed). */
#define EBPF_JIT_F_NO_INLINE 0x1u /* call the lookup helper even for constant ARRAY maps */
#define EBPF_JIT_F_FAR_CALLS 0x2u /* helper calls always through an absolute address (tests) */
#define EBPF_JIT_F_BASELINE  0x4u /* only baseline ISA instructions (x86-64: no BMI2) (tests) */
struct ebpf_jit_opts {
	size_t sz;
	uint32_t flags; /* EBPF_JIT_F_* */
};

/* 1 when this build has a JIT backend for the host architecture. */
int ebpf_jit_available(void);

/* Compiles the program; afterwards ebpf_exec__jit_fn returns the native entry point. Code
 * pages are never writable and executable at once. Returns 0 or -errno with err filled
 * (-ENOTSUP without a backend). Compiling an already compiled program returns 0. Not
 * thread-safe against concurrent runs or compiles of the same program: call it before the
 * program is published. */
int ebpf_exec__jit(struct ebpf_exec *prog, struct ebpf_jit_stats *stats, char *err, size_t err_len);
int ebpf_exec__jit_opts(struct ebpf_exec *prog, const struct ebpf_jit_opts *opts,
			struct ebpf_jit_stats *stats, char *err, size_t err_len);
/* The compiled function (call it as fn(r1, r2)), or NULL when not compiled. */
ebpf_jit_fn ebpf_exec__jit_fn(const struct ebpf_exec *prog);
/* Statistics of the last compile (zeros when not compiled). */
struct ebpf_jit_stats ebpf_exec__jit_stats(const struct ebpf_exec *prog);
/* Number of compiled runs aborted on call-depth overflow since compilation. */
uint64_t ebpf_exec__jit_faults(const struct ebpf_exec *prog);

/* Register-keeping entries. A compiled program that calls nothing (no helper call, no
 * bpf-to-bpf call; an inlined map lookup calls nothing) saves, besides the callee-saved
 * registers, r9, r10 and r11 when its code may change them, and touches no vector or x87
 * register but xmm0 and xmm1 (which converted context loads use, ebpf_ctx_from_f32). Its stats
 * say keeps_regs = 1. Called through ebpf_jit_call_keeping, the caller's compiler may keep
 * values in r9-r11 across the call instead of saving callee-saved registers around it: the
 * saves and restores are what a plain call of an otherwise empty program costs most (about a
 * nanosecond on the tuner's hot path). rax, rdi, rsi, rdx, rcx and r8 (eBPF r0-r5) are the
 * caller's to lose: most programs use r2-r5, which the entry would otherwise save and restore
 * on every call (three registers for size_aware, about 0.3 ns), while three registers are all
 * the tuner's keeping path keeps there. Any other entry must be called as a plain C
 * function. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EBPF_JIT_HAVE_KEEPING_CALL 1
static inline uint64_t ebpf_jit_call_keeping(ebpf_jit_fn fn, uint64_t r1, uint64_t r2)
{
	register uint64_t a1 __asm__("rdi") = r1;
	register uint64_t a2 __asm__("rsi") = r2;
	uint64_t r0;
	/* The 128 bytes below rsp are the caller's red zone: the call must not push into it. */
	__asm__ volatile("sub $128, %%rsp\n\tcall *%[fn]\n\tadd $128, %%rsp"
			 : "=a"(r0), "+r"(a1), "+r"(a2)
			 : [fn] "r"(fn)
			 : "memory", "cc", "rcx", "rdx", "r8", "xmm0", "xmm1");
	return r0;
}
#endif

/* Runs with the chosen engine (EBPF_ENGINE_DEFAULT: the JIT when compiled and opts asks for
 * nothing only the interpreter does, else the interpreter). EBPF_ENGINE_JIT on a program that
 * is not compiled, or with checked mode, an instruction limit or EBPF_RUN_F_UNINIT_REGS, returns
 * -ENOEXEC / -EOPNOTSUPP.
 * Returns 0, or -EFAULT with opts->fault filled when the run faulted.
 * ebpf_exec__run is inline so that its common case (compiled, no options, no abort to detect)
 * costs one load and one indirect call over calling the code directly; everything else goes
 * through ebpf_exec__run_full. */
int ebpf_exec__run_full(const struct ebpf_exec *prog, enum ebpf_engine engine, uint64_t r1,
			uint64_t r2, const struct ebpf_run_opts *opts, uint64_t *r0);

/* The first member of every struct ebpf_exec: what the inline fast path reads. fast_fn is the
 * compiled entry when no run can abort (no bpf-to-bpf calls), else NULL. */
struct ebpf_exec_hot {
	ebpf_jit_fn fast_fn;
};

static inline int ebpf_exec__run(const struct ebpf_exec *prog, enum ebpf_engine engine, uint64_t r1,
				 uint64_t r2, const struct ebpf_run_opts *opts, uint64_t *r0)
{
	if (prog && r0 && !opts && engine != EBPF_ENGINE_INTERP) {
		ebpf_jit_fn fn = __atomic_load_n(
		    &((const struct ebpf_exec_hot *)(const void *)prog)->fast_fn, __ATOMIC_ACQUIRE);
		if (fn) {
			*r0 = fn(r1, r2);
			return 0;
		}
	}
	return ebpf_exec__run_full(prog, engine, r1, r2, opts, r0);
}

#ifdef __cplusplus
}
#endif
#endif
