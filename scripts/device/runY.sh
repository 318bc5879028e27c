#!/bin/bash
# Device run Y (2026-12-03, fifth session): does writing a queued completion into lines that
# were asked for beforehand (prefetchw, net_defer.c) take the queueing cost off? Two plugin
# builds from this machine (gpu-carry/bench/libnccl-ncclbpf-base.so: HEAD 3a1e398; -new: with
# the prefetch), each against noop.o in the same call, alternating, 300 pairs each.
. "$(dirname "$0")/ab-lib.sh" rY
{ for rep in 1 2; do
    for v in base new; do
      AB_ENV=NCCL_NET_PLUGIN=$B/libnccl-ncclbpf-$v.so ab e64$v$rep 64K-64K 300 300 $P/noop.o $B/net_empty.o; done
    for v in base new; do
      AB_ENV=NCCL_NET_PLUGIN=$B/libnccl-ncclbpf-$v.so ab c64$v$rep 64K-64K 300 300 $P/noop.o $P/net_counters.o; done
  done
  for v in base new; do
    AB_ENV=NCCL_NET_PLUGIN=$B/libnccl-ncclbpf-$v.so ab c16$v 16K-16K 300 300 $P/noop.o $P/net_counters.o; done
} 2>&1 | tee $R/ab.txt
ab_end
