#!/bin/bash
# Device run T (2026-12-03, fourth session): a deliberately expensive completion program
# (benchmarks/policies/net_heavy.c, 64 map updates per completion, ~0.5 us on the dev box) run
# by the drain thread vs inline (NCCLBPF_NET_DEFER=0), in-job A/B against noop.o at 64 KiB and
# 1 KiB; net_counters.o deferred vs inline at 1 KiB. Then the queue counters with net_heavy.
. "$(dirname "$0")/ab-lib.sh" rT
{ ab hd64 64K-64K 300 300 $P/noop.o $B/net_heavy.o
  AB_ENV=NCCLBPF_NET_DEFER=0 ab hi64 64K-64K 300 300 $P/noop.o $B/net_heavy.o
  ab hd1 1K-1K 1000 200 $P/noop.o $B/net_heavy.o
  AB_ENV=NCCLBPF_NET_DEFER=0 ab hi1 1K-1K 1000 200 $P/noop.o $B/net_heavy.o
  ab d1 1K-1K 1000 200 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_DEFER=0 ab i1 1K-1K 1000 200 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
hold_stat $B/net_heavy.o 1K-64K 64
ab_end
