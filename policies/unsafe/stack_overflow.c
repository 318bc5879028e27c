/* UNSAFE: reads below the 512-byte stack frame. clang refuses large C arrays on the BPF stack,
 * so the access is written in assembly. Expected: rejected (stack access out of bounds). */
#include "ncclbpf.h"

SEC("tuner")
int stack_overflow(struct ncclbpf_tuner_ctx *ctx)
{
	__u64 v;

	asm volatile("%0 = *(u64 *)(r10 - 520)" : "=r"(v)); /* BUG: frame is 512 bytes */
	return v & 0;
}
