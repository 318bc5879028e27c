#!/bin/bash
# Device run N (2026-12-03, third session): the net hooks after posting stamps moved to the TSC
# (this host's clocksource is tsc, so the plugin uses it by default): in-job A/B (250 pairs) of
# net_counters.o and net_time_only.o against noop.o at 1-64 KiB, the NCCL log line that says
# which clock is used, and the in-process hook path with the TSC and with NCCLBPF_NET_TSC=0.
. "$(dirname "$0")/ab-lib.sh" rN
AB_ENV="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET,INIT"
{ ab counters 1K-64K 300 250 $P/noop.o $P/net_counters.o
  ab time-only 1K-64K 300 250 $P/noop.o $B/net_time_only.o; } 2>&1 | tee $R/ab.txt
ab_end
for m in 1 0 1 0; do echo "NCCLBPF_NET_TSC=$m"; NCCLBPF_NET_TSC=$m $B/ncclbpf-net-bench --lib $B/libnccl-ncclbpf.so --policy $P/net_counters.o --policy2 $B/net_time_only.o --inner $B/libnccl-net-fake.so --reps 7 --hook-path-only; done 2>&1 | tee $R/hookpath.txt
