#!/bin/bash
# Device run Q (2026-12-03, fourth session): completion programs queued and run from idle
# test() polls (runtime net_defer.c) vs inline (NCCLBPF_NET_DEFER=0), each as an in-job A/B of
# net_counters.o against noop.o at 64 KiB and 16 KiB, 300 pairs; 64 KiB deferred twice.
# Then what the queues did in a real NCCL job (`ncclbpf stat` while the ranks hold) and the
# in-process hook path (total CPU per message) with and without deferral.
. "$(dirname "$0")/ab-lib.sh" rQ
{ ab d64 64K-64K 300 300 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_DEFER=0 ab i64 64K-64K 300 300 $P/noop.o $P/net_counters.o
  ab d16 16K-16K 300 300 $P/noop.o $P/net_counters.o
  AB_ENV=NCCLBPF_NET_DEFER=0 ab i16 16K-16K 300 300 $P/noop.o $P/net_counters.o
  ab d64b 64K-64K 300 300 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
( export $NET
  f=$R/hold.txt
  NCCLBPF_POLICY=$P/net_counters.o timeout 120 $G -n 2 -b 64K -e 64K -i 2000 -w 5 --hold 4 > $f 2>&1 & bp=$!
  for t in $(seq 1 200); do [ "$(grep -c holding $f 2>/dev/null)" -ge 2 ] && break; kill -0 $bp 2>/dev/null || break; sleep 0.3; done
  for pid in $(sed -n 's/.*rank [0-9]* pid \([0-9]*\) holding.*/\1/p' $f); do
    echo "-- pid $pid"; timeout 10 $CLI stat $pid 2>&1 | grep -E "net completions|communicators"
    timeout 10 $CLI map dump $pid net_peers 2>&1 | head -3
    timeout 10 $CLI stat $pid 2>&1 | grep -E "net completions"; done
  wait $bp; echo "bench rc=$?" ) 2>&1 | tee $R/stat.txt
ab_end
for d in 1 0 1 0; do echo "NCCLBPF_NET_DEFER=$d"; NCCLBPF_NET_DEFER=$d $B/ncclbpf-net-bench --lib $L --policy $P/net_counters.o --inner $B/libnccl-net-fake.so --reps 7 --hook-path-only; done 2>&1 | tee $R/hookpath.txt
