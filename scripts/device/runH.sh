#!/bin/bash
# Device run H (2026-12-03, second session): the runtime entry with the one-word TLS epoch
# record (jit_bench_word) against the previous two-field record (jit_bench), alternating; the
# profiler event cost with the final library; and the GPU e2e check on the final code.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/rH; mkdir -p $R; B=$PWD/gpu-carry/bench; P=$PWD/gpu-carry/policies
lscpu | grep -E "Model name|MHz" | tee $R/cpu.txt
for i in 1 2 3; do
  echo "== two-field"; $B/jit_bench $B/jit_kernels $P 2>&1 | sed -n '/runtime entry, /,/hook through/p' | tail -3
  echo "== one-word"; $B/jit_bench_word $B/jit_kernels $P 2>&1 | sed -n '/runtime entry, /,/hook through/p' | tail -3
done | tee $R/entry.txt
for i in 1 2 3; do $B/profiler_bench $B/libnccl-ncclbpf.so $P/noop.o $B/prof_noop.o $P/profiler_latency.o 200000 2>&1 | tail -6; done | tee $R/profiler_bench.txt
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
POLICY_DIR=$P timeout 300 scripts/gpu-e2e.sh $R/e2e > $R/e2e.txt 2>&1; echo "e2e rc=$?" >> $R/e2e.txt
# Messages NCCL sends through our transport for small AllReduces (net_counters' map, live).
G=$PWD/build-gpu/bin/ncclbpf-gpubench; L=$PWD/build-gpu/lib/libnccl-ncclbpf.so; CLI=$PWD/build-gpu/bin/ncclbpf
D=/dev/shm/ncclbpf-$(id -u)/procs
( export NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_TUNER_PLUGIN=none NCCL_PROFILER_PLUGIN=none NCCL_ENV_PLUGIN=none
  export NCCL_NET_PLUGIN=$L NCCL_NET=NCCLbpf NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2
  for spec in "1K 400000" "64K 80000"; do set -- $spec
    NCCLBPF_POLICY=$P/net_counters.o timeout 60 $G -n 2 -b $1 -e $1 -i $2 -w 5 --csv $R/g.$1.csv > $R/g.$1.txt 2>&1 & bp=$!
    sleep 6; echo "== size $1"
    for s in $D/*.sock; do pid=${s%.sock}; pid=${pid##*.}; kill -0 $pid 2>/dev/null || continue
      echo "-- pid $pid"; timeout 10 $CLI map dump $pid net_peers 2>&1 | head -5; done
    wait $bp; echo "bench rc=$?"; tail -2 $R/g.$1.txt
  done ) 2>&1 | tee $R/maps.txt
echo quit | nvidia-cuda-mps-control
grep -E "^==|^OK|^FAIL|^!!|decisions:|rank .: |switched|gpu-e2e|e2e rc" $R/e2e.txt
cd $OUT && tar czf rH.tgz rH && rm -rf rH
