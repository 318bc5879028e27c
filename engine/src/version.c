#include "ebpf/version.h"

const char *ebpf_engine_version(void)
{
	return "0.1.0";
}
