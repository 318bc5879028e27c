#include <stdio.h>

#include "cli.h"
#include "ncclbpf/version.h"

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("ncclbpf %s\n", ebpf_engine_version());
	return 0;
}

NCCLBPF_COMMAND(version_cmd, .name = "version", .args = "", .summary = "print the version",
		.run = cmd_version);
