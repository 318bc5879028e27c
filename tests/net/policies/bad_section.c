/* test_net_clock: a misspelt net section. The engine takes any "net/..." section as a net
 * program; the runtime must refuse a bundle whose program no hook would ever run. */
#include "ncclbpf.h"

SEC("net/complte")
int bad_section(struct ncclbpf_net_ctx *ctx)
{
	return ctx->op == 0;
}
