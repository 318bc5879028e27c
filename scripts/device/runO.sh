#!/bin/bash
# Device run O (2026-12-03, third session): runN's net_counters.o A/B again without NCCL_DEBUG
# (runN logged every reload at INFO; its net_counters blocks spread twice as wide), 300 pairs.
. "$(dirname "$0")/ab-lib.sh" rO
{ ab counters 4K-64K 300 300 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
ab_end
