#!/bin/bash
# Device run P (2026-12-03, third session): 64 KiB only, net_counters.o, net_time_only.o,
# net_count_only.o, net_counters.o again (run-to-run spread at 64 KiB), 300 pairs each.
. "$(dirname "$0")/ab-lib.sh" rP
{ ab c1 64K-64K 300 300 $P/noop.o $P/net_counters.o
  ab t 64K-64K 300 300 $P/noop.o $B/net_time_only.o
  ab n 64K-64K 300 300 $P/noop.o $B/net_count_only.o
  ab c2 64K-64K 300 300 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
ab_end
