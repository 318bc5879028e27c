#!/bin/bash
# Device run W (2026-12-03, fourth session): net_counters.o (now counting timed completions)
# against noop.o at 64 KiB and 16 KiB, final code (drain thread), every message timed vs
# sampled timing (NCCLBPF_NET_TIME_EVERY=8), alternating, 300 pairs each.
. "$(dirname "$0")/ab-lib.sh" rW
{ ab all64 64K-64K 300 300 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_TIME_EVERY=8 ab s64 64K-64K 300 300 $P/noop.o $P/net_counters.o
  ab all16 16K-16K 300 300 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_TIME_EVERY=8 ab s16 16K-16K 300 300 $P/noop.o $P/net_counters.o
  ab all64b 64K-64K 300 300 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_TIME_EVERY=8 ab s64b 64K-64K 300 300 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
ab_end
