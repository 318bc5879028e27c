#include <string.h>

#include "ebpf/version.h"
#include "check.h"

int main(void)
{
	CHECK(strcmp(ebpf_engine_version(), "0.1.0") == 0);
	return check_summary("version");
}
