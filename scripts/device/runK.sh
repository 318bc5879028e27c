#!/bin/bash
# Device run K (2026-12-03, third session): the net hooks' cost on small and mid AllReduces to
# a few tenths of a percent. runJ's in-job A/B (40 pairs) had block-to-block spread of about
# ±3 %, so a median of 40 paired ratios is known to ~±0.7 %; here 400 pairs of shorter blocks,
# with the median's 95 % confidence interval, and an A/A control (noop/noop).
. "$(dirname "$0")/ab-lib.sh" rK
{ ab small 1K-16K 500 400 $P/noop.o $P/net_counters.o
  ab aa 1K-1K 500 400 $P/noop.o $P/noop.o
  ab mid 256K-1M 100 300 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
ab_end
