#!/bin/bash
# Device run Z (2026-12-03, fifth session): the shipped net_counters.o now times one request in
# 8 per connection (SEC(NCCLBPF_NET_COMPLETE_SAMPLED(8))); against noop.o at 64 and 16 KiB, as
# shipped and with every message timed (NCCLBPF_NET_TIME_EVERY=1, the operator's override), in
# the same call, alternating, 300 pairs each; queued completions written into prefetched lines.
# Then the GPU end-to-end check on this code.
. "$(dirname "$0")/ab-lib.sh" rZ
{ for rep in 1 2; do
    for s in 64K 16K; do
      ab s$s$rep $s-$s 300 300 $P/noop.o $P/net_counters.o
      AB_ENV=NCCLBPF_NET_TIME_EVERY=1 ab a$s$rep $s-$s 300 300 $P/noop.o $P/net_counters.o
    done
  done; } 2>&1 | tee $R/ab.txt
POLICY_DIR=$P timeout 240 scripts/gpu-e2e.sh $R/e2e > $R/e2e.txt 2>&1; echo "e2e rc=$?" >> $R/e2e.txt
ab_end
tar xzf $OUT/rZ.tgz -C /tmp && grep -E "^==|^OK|^FAIL|^!!|decisions:|rank .: |switched|gpu-e2e|e2e rc" /tmp/rZ/e2e.txt | tail -20
