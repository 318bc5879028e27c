#!/bin/bash
# Device run C: the tuned policy against NCCL's default and the oracle (sweep from run B).
set -u
export NCCL_NVLS_ENABLE=0
SB=0; [ -x build-gpu/bin/ncclbpf-gpubench ] && SB=1
SKIP_BUILD=$SB BUDGET_S=${CMB:-300} timeout 560 scripts/gpu-compare.sh gpu-carry/sweep.csv $OUT/compare > $OUT/compare.txt 2>&1; echo "compare rc=$?" >> $OUT/compare.txt
tail -60 $OUT/compare.txt
cd $OUT && tar czf compare.tgz compare compare.txt && rm -rf compare
