#!/bin/bash
# Device run B: the forced-configuration sweep (2 ranks; 4 ranks where budget allows) and ncclbpf tune.
set -u
export NCCL_NVLS_ENABLE=0
SB=0; [ -x build-gpu/bin/ncclbpf-gpubench ] && SB=1
SKIP_BUILD=$SB BUDGET_S=${SWB:-300} timeout 560 scripts/gpu-sweep.sh $OUT/sweep > $OUT/sweep.txt 2>&1; echo "sweep rc=$?" >> $OUT/sweep.txt
tail -40 $OUT/sweep.txt; tail -30 $OUT/sweep/tune.txt 2>/dev/null
cd $OUT && tar czf sweep.tgz sweep sweep.txt && rm -rf sweep
