/* Taking the address of a function (a callback for bpf_loop in Linux). */
#include "ncclbpf.h"
static __attribute__((noinline)) int cb(int x)
{
	return x + 1;
}
__u64 fnaddr;
SEC("tuner")
int takes_address(struct ncclbpf_tuner_ctx *ctx)
{
	fnaddr = (__u64)&cb;
	return 0;
}
