#!/bin/bash
# Device run M (2026-12-03, third session): runL again after the post time moved behind the
# hand-over to the transport (commit "net hooks: take a post's time after handing it..."):
# net_counters.o and net_time_only.o against noop.o, 250 pairs.
. "$(dirname "$0")/ab-lib.sh" rM
{ ab counters 4K-64K 300 250 $P/noop.o $P/net_counters.o
  ab time-only 4K-64K 300 250 $P/noop.o $B/net_time_only.o; } 2>&1 | tee $R/ab.txt
ab_end
