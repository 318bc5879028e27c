/* The net plugin's token bucket (adapters/nccl/src/net_hooks.c, net_pace): paced messages start
 * at their rate after an allowed burst, and unpaced messages between them change nothing (they
 * once reset the bucket when the isend program read the time, which let the next paced message
 * start at once: a rate violation). */
#include <stdint.h>

#include "check.h"
#include "net_hooks.h"

int main(void)
{
	const uint64_t t = 1000000000ull, mb = 1000000; /* 1 s; 1 MB */
	uint64_t vt = 0;

	/* Unpaced: starts now, bucket untouched. */
	CHECK_EQ_U64(net_pace(&vt, 0, mb, t), t);
	CHECK_EQ_U64(vt, 0);

	/* An idle connection may start at once, with a burst of NET_PACE_BURST_NS worth of bytes
	 * credited: 1 MB at 100 MB/s costs 10 ms, counted from now - burst. */
	uint64_t s1 = net_pace(&vt, 100, mb, t);
	CHECK_EQ_U64(s1, t - NET_PACE_BURST_NS);
	CHECK_EQ_U64(vt, t - NET_PACE_BURST_NS + 10000000ull);
	uint64_t debt = vt;

	/* Small unpaced messages right after: start now, the debt stays. */
	for (int i = 1; i <= 3; i++)
		CHECK_EQ_U64(net_pace(&vt, 0, 4096, t + (uint64_t)i * 1000),
			     t + (uint64_t)i * 1000);
	CHECK_EQ_U64(vt, debt);

	/* The next paced message waits for the debt: it may start only when the first one's
	 * 10 ms are over, not at once. */
	uint64_t s2 = net_pace(&vt, 100, mb, t + 5000);
	CHECK_EQ_U64(s2, debt);
	CHECK_EQ_U64(vt, debt + 10000000ull);

	/* After a long idle time the debt is forgotten beyond the burst allowance. */
	uint64_t later = vt + 1000000000ull;
	CHECK_EQ_U64(net_pace(&vt, 100, mb, later), later - NET_PACE_BURST_NS);
	return check_summary("test_net_pace");
}
