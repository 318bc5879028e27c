#include <stdio.h>

#include "cli.h"
#include "ebpf/version.h"

static int cmd_version(int argc, char **argv)
{
	if (argc > 1)
		return cli_usage_error("unexpected argument '%s'", argv[1]);
	printf("ncclbpf %s\n", ebpf_engine_version());
	return 0;
}

NCCLBPF_COMMAND(version_cmd, .name = "version", .args = "",
		.summary = "print the version (also ncclbpf --version)", .run = cmd_version);
