#!/bin/bash
# Device run AA (2026-12-03, fifth session): run Z again on another lease (the host's state
# moves these figures by a few tenths of a percent between calls): net_counters.o as shipped
# (one request in 8 timed) and with every message timed (NCCLBPF_NET_TIME_EVERY=1), against
# noop.o at 64 and 16 KiB, alternating, 300 pairs each; then as shipped at 4 and 1 KiB.
. "$(dirname "$0")/ab-lib.sh" rAA
{ for rep in 1 2; do
    for s in 64K 16K; do
      ab s$s$rep $s-$s 300 300 $P/noop.o $P/net_counters.o
      AB_ENV=NCCLBPF_NET_TIME_EVERY=1 ab a$s$rep $s-$s 300 300 $P/noop.o $P/net_counters.o
    done
  done
  ab s4K 4K-4K 1000 200 $P/noop.o $P/net_counters.o
  ab s1K 1K-1K 1000 200 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
ab_end
