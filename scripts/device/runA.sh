#!/bin/bash
# Device run A: CPU benchmarks on the 16-core host, the e2e script, the overhead script.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/rA; mkdir -p $R; B=$PWD/gpu-carry/bench; P=$PWD/gpu-carry/policies
lscpu | grep -E "Model name|MHz|^CPU\(s\)" > $R/cpu.txt
$B/jit_bench $B/jit_kernels $P > $R/jit_bench.txt 2>&1
$B/jit_bench $B/jit_kernels $P > $R/jit_bench2.txt 2>&1
$B/profiler_bench $B/libnccl-ncclbpf.so $P/noop.o $B/prof_noop.o $P/profiler_latency.o 200000 > $R/profiler_bench.txt 2>&1
cat $R/cpu.txt; grep -A7 "^2\." $R/jit_bench.txt; grep runtime $R/jit_bench2.txt; head -20 $R/jit_bench.txt
tail -14 $R/profiler_bench.txt
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
POLICY_DIR=$P timeout 300 scripts/gpu-e2e.sh $R/e2e > $R/e2e.txt 2>&1; echo "e2e rc=$?" >> $R/e2e.txt
echo quit | nvidia-cuda-mps-control; sleep 1
grep -E "^==|^OK|^FAIL|^!!|decisions:|rank .: |switched|gpu-e2e|e2e rc" $R/e2e.txt
SKIP_BUILD=1 BUDGET_S=${OVB:-150} timeout 280 scripts/gpu-overhead.sh $R/overhead > $R/overhead.txt 2>&1; echo "overhead rc=$?" >> $R/overhead.txt
tail -45 $R/overhead.txt
cd $OUT && tar czf rA.tgz rA && rm -rf rA
