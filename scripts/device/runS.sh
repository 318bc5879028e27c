#!/bin/bash
# Device run S (2026-12-03, fourth session): completion programs run by the runtime's drain
# thread (one queue per communicator; the proxy thread only stamps and queues) vs inline
# (NCCLBPF_NET_DEFER=0): in-job A/B of net_counters.o against noop.o, 300 pairs, alternating
# deferred/inline at 64 KiB (twice each) and 16 KiB, then net_time_only.o deferred at 64 KiB
# (the clock reads and queueing alone). Then the queue counters of a real job while it holds.
. "$(dirname "$0")/ab-lib.sh" rS
{ ab d64 64K-64K 300 300 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_DEFER=0 ab i64 64K-64K 300 300 $P/noop.o $P/net_counters.o
  ab d16 16K-16K 300 300 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_DEFER=0 ab i16 16K-16K 300 300 $P/noop.o $P/net_counters.o
  ab d64b 64K-64K 300 300 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_DEFER=0 ab i64b 64K-64K 300 300 $P/noop.o $P/net_counters.o
  ab t64 64K-64K 300 300 $P/noop.o $B/net_time_only.o; } 2>&1 | tee $R/ab.txt
hold_stat $P/net_counters.o 64K-64K
ab_end
