#!/bin/bash
# Device run AB (2026-12-03, fifth session): runZ/runAA shared one lease; this is the same
# comparison on a fresh one: net_counters.o as shipped (one request in 8 timed) and with every
# message timed (NCCLBPF_NET_TIME_EVERY=1) against noop.o at 64 and 16 KiB, alternating, 300
# pairs each; then as shipped at 256 KiB (60 pairs).
. "$(dirname "$0")/ab-lib.sh" rAB
{ for s in 64K 16K; do
    ab s$s $s-$s 300 300 $P/noop.o $P/net_counters.o
    AB_ENV=NCCLBPF_NET_TIME_EVERY=1 ab a$s $s-$s 300 300 $P/noop.o $P/net_counters.o
  done
  ab s64Kb 64K-64K 300 300 $P/noop.o $P/net_counters.o
  ab s256K 256K-256K 200 60 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
ab_end
