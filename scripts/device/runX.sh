#!/bin/bash
# Device run X (2026-12-03, fifth session): where net_counters.o's cost at 16 and 64 KiB comes
# from, all against noop.o in one call, 300 pairs each: net_empty.o (a completion program that
# does nothing: the queueing alone), the same inline (NCCLBPF_NET_DEFER=0: a control),
# net_time_only.o (clocks + queueing), net_count_only.o (map work, no clocks), net_counters.o.
. "$(dirname "$0")/ab-lib.sh" rX
{ hold_stat $P/net_counters.o 16K-16K
  for s in 16K 64K; do
    ab e$s $s-$s 300 300 $P/noop.o $B/net_empty.o
    AB_ENV=NCCLBPF_NET_DEFER=0 ab ei$s $s-$s 300 300 $P/noop.o $B/net_empty.o
    ab t$s $s-$s 300 300 $P/noop.o $B/net_time_only.o
    ab n$s $s-$s 300 300 $P/noop.o $B/net_count_only.o
    ab c$s $s-$s 300 300 $P/noop.o $P/net_counters.o
  done; } 2>&1 | tee $R/ab.txt
ab_end
