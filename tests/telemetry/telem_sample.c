/* Prints the Prometheus text the plugin exports after a few collectives (the profiler tables
 * driven as NCCL drives them), so that checks of what consumes it (the Grafana dashboard,
 * tests/telemetry/grafana_check.py) compare against the real metric and label names, not a
 * copy of them. With a policy, one zeroed element (key and value of at most 4 KiB) is put into
 * its map MAP so that an exported map's samples, and so its labels, show too.
 *
 * usage: telem_sample [POLICY MAP] */
#include <stdio.h>
#include <stdlib.h>

#include "ncclbpf/runtime.h"
#include "ncclbpf/telemetry.h"
#include "telem_harness.h"

int main(int argc, char **argv)
{
	th_env_clear();
	setenv("NCCLBPF_TELEMETRY", "1", 1);
	if (argc == 3)
		setenv("NCCLBPF_POLICY", argv[1], 1);
	else if (argc != 1)
		return 2;
	setenv("SLURM_JOB_ID", "1", 1);
	void *c = th_comm(0x5a3, "sample", 2, 0);
	th_coll(c, 0, 0, "AllReduce", 262144, "ncclFloat32", 2, "RING", "SIMPLE", 1000, 90000);
	th_coll(c, 0, 1, "AllGather", 1024, "ncclBfloat16", 2, "TREE", "LL", 2000, 5000);
	if (argc == 3) {
		static uint8_t zeros[4096];
		if (ncclbpf_rt_map_update(argv[2], zeros, zeros) != 0) {
			fprintf(stderr, "telem_sample: cannot update map %s of %s\n", argv[2],
				argv[1]);
			return 1;
		}
	}
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	size_t n = buf ? ncclbpf_telem_prometheus(buf, cap) : 0;
	if (n)
		fwrite(buf, 1, n, stdout);
	free(buf);
	th_finalize(c);
	return n ? 0 : 1;
}
