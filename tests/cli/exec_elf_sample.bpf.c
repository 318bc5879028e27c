/* An object for `ncclbpf exec --elf` tests (cli_test.sh): two programs, global data (a map the
 * loader creates with its initial value) and a static subprogram. Net programs, because their
 * return value is a rate (any u32) where tuner and profiler programs must return 0. */
#include "ncclbpf.h"

static volatile int base = 40;

static __attribute__((noinline)) int add2(int x)
{
	return x + 2;
}

SEC("net/isend")
int answer(struct ncclbpf_net_ctx *ctx)
{
	return add2(base);
}

SEC("net/complete")
int seven(struct ncclbpf_net_ctx *ctx)
{
	return 7;
}
