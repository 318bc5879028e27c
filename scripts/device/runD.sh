#!/bin/bash
# Device run D: our net transport against NCCL's Socket transport, with and without MPS, and net_bench.
set -u
export NCCL_NVLS_ENABLE=0
BUDGET=${NB:-380} timeout 560 bash scripts/gpu-net.sh $OUT/gpu-net > $OUT/gpu-net.txt 2>&1; echo "net rc=$?" >> $OUT/gpu-net.txt
tail -90 $OUT/gpu-net.txt
cd $OUT && tar czf net.tgz gpu-net gpu-net.txt && rm -rf gpu-net
