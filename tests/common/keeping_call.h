/* Calling a register-keeping JIT entry (ebpf/jit.h) with a sentinel in each register it must
 * keep, for the tests that check the promise (jit_diff, test_ctx_convert). */
#ifndef NCCLBPF_TEST_KEEPING_CALL_H
#define NCCLBPF_TEST_KEEPING_CALL_H

#include <stdint.h>

#include "ebpf/jit.h"

#ifdef EBPF_JIT_HAVE_KEEPING_CALL
/* Runs fn as ebpf_jit_call_keeping does, with a sentinel in each register a keeping entry must
 * keep (r9-r11; the callee-saved ones are the plain ABI's). Returns r0; *lost is the index in
 * KEPT_NAMES of the first register that came back changed, or -1. */
static const char *const KEPT_NAMES[3] = {"r9", "r10", "r11"};
static inline uint64_t call_keeping_checked(ebpf_jit_fn fn, uint64_t r1, uint64_t r2, int *lost)
{
	uint64_t in[3], out[3], r0;

	for (int i = 0; i < 3; i++)
		in[i] = 0x5e5e5e5e00000000ull | (uint64_t)(i + 1) * 0x01010101u;
	register const uint64_t *pin __asm__("r12") = in;
	register uint64_t *pout __asm__("r13") = out;
	register ebpf_jit_fn pfn __asm__("r14") = fn;
	register uint64_t a1 __asm__("rdi") = r1;
	register uint64_t a2 __asm__("rsi") = r2;
	__asm__ volatile("mov 0(%%r12), %%r9\n\t"
			 "mov 8(%%r12), %%r10\n\t"
			 "mov 16(%%r12), %%r11\n\t"
			 "sub $128, %%rsp\n\t"
			 "call *%%r14\n\t"
			 "add $128, %%rsp\n\t"
			 "mov %%r9, 0(%%r13)\n\t"
			 "mov %%r10, 8(%%r13)\n\t"
			 "mov %%r11, 16(%%r13)"
			 : "=a"(r0), "+r"(a1), "+r"(a2)
			 : "r"(pin), "r"(pout), "r"(pfn)
			 : "rcx", "rdx", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "memory", "cc");
	*lost = -1;
	for (int i = 0; i < 3 && *lost < 0; i++)
		if (out[i] != in[i])
			*lost = i;
	return r0;
}
#endif

#endif
