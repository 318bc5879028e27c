#!/bin/bash
# Device run U (2026-12-03, fourth session): the final code (completion programs on the drain
# thread) at the sizes runS/runT did not cover: net_counters.o against noop.o at 4 KiB and
# 256 KiB-1 MiB, in-job A/B; then the GPU end-to-end check (tuner, profiler, env plugin, hot
# reload under the control plane) on this code.
. "$(dirname "$0")/ab-lib.sh" rU
{ ab d4 4K-4K 1000 200 $P/noop.o $P/net_counters.o
  ab d256 256K-1M 200 60 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
POLICY_DIR=$P timeout 240 scripts/gpu-e2e.sh $R/e2e > $R/e2e.txt 2>&1; echo "e2e rc=$?" >> $R/e2e.txt
ab_end
grep -E "^==|^OK|^FAIL|^!!|decisions:|rank .: |switched|gpu-e2e|e2e rc" $R/e2e.txt | tail -20
