#!/bin/bash
# Device run V (2026-12-03, fourth session): 1 MiB with more pairs than runU (60 pairs left
# -0.64..+2.29 %): net_counters.o against noop.o, queued for the drain thread and inline
# (NCCLBPF_NET_DEFER=0), 200 pairs of 200 operations each.
. "$(dirname "$0")/ab-lib.sh" rV
{ ab d1m 1M-1M 200 200 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_DEFER=0 ab i1m 1M-1M 200 200 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
ab_end
