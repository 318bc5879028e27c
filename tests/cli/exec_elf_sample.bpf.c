/* An object for `ncclbpf exec --elf` tests (cli_test.sh): two programs, global data (a map the
 * loader creates with its initial value) and a static subprogram. */
#include "ncclbpf.h"

static volatile int base = 40;

static __attribute__((noinline)) int add2(int x)
{
	return x + 2;
}

SEC("tuner")
int answer(struct ncclbpf_tuner_ctx *ctx)
{
	return add2(base);
}

SEC("profiler")
int seven(struct ncclbpf_profiler_ctx *ctx)
{
	return 7;
}
