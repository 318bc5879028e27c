/* A program in a section no hook knows. */
#include "ncclbpf.h"
SEC("xdp")
int wrong(void *ctx)
{
	return 0;
}
