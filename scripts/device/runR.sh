#!/bin/bash
# Device run R (2026-12-03, fourth session): completion programs queued on one queue per
# communicator (receives' idle polls also run sends' programs; up to 4 per idle poll) vs inline
# (NCCLBPF_NET_DEFER=0): in-job A/B against noop.o, 300 pairs, of net_counters.o at 64 and
# 16 KiB, and at 64 KiB of net_time_only.o (clock reads, trivial program) and net_count_only.o
# (map work, no clock). Then the queue counters of a real job (`ncclbpf stat` while holding).
. "$(dirname "$0")/ab-lib.sh" rR
{ ab d64 64K-64K 300 300 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_DEFER=0 ab i64 64K-64K 300 300 $P/noop.o $P/net_counters.o
  ab d16 16K-16K 300 300 $P/noop.o $P/net_counters.o
  ab t64 64K-64K 300 300 $P/noop.o $B/net_time_only.o
  ab n64 64K-64K 300 300 $P/noop.o $B/net_count_only.o
  ab d64b 64K-64K 300 300 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
hold_stat $P/net_counters.o 64K-64K
ab_end
