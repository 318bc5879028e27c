/* Prints the Prometheus text the plugin exports after a few collectives (the profiler tables
 * driven as NCCL drives them), so that checks of what consumes it (the Grafana dashboard,
 * tests/telemetry/grafana_check.py) compare against the real metric and label names, not a
 * copy of them.
 *
 * usage: telem_sample */
#include <stdio.h>
#include <stdlib.h>

#include "ncclbpf/telemetry.h"
#include "telem_harness.h"

int main(void)
{
	th_env_clear();
	setenv("NCCLBPF_TELEMETRY", "1", 1);
	setenv("SLURM_JOB_ID", "1", 1);
	void *c = th_comm(0x5a3, "sample", 2, 0);
	th_coll(c, 0, 0, "AllReduce", 262144, "ncclFloat32", 2, "RING", "SIMPLE", 1000, 90000);
	th_coll(c, 0, 1, "AllGather", 1024, "ncclBfloat16", 2, "TREE", "LL", 2000, 5000);
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	size_t n = buf ? ncclbpf_telem_prometheus(buf, cap) : 0;
	if (n)
		fwrite(buf, 1, n, stdout);
	free(buf);
	th_finalize(c);
	return n ? 0 : 1;
}
