#!/bin/bash
# Device run L (2026-12-03, third session): where net_counters.o's cost at 4-64 KiB comes from:
# in-job A/B (250 pairs) of net_counters.o, net_count_only.o (its map work, no clock) and
# net_time_only.o (its clock reads, no map work) against noop.o.
. "$(dirname "$0")/ab-lib.sh" rL
{ ab counters 4K-64K 300 250 $P/noop.o $P/net_counters.o
  ab count-only 4K-64K 300 250 $P/noop.o $B/net_count_only.o
  ab time-only 4K-64K 300 250 $P/noop.o $B/net_time_only.o; } 2>&1 | tee $R/ab.txt
ab_end
