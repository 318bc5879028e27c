#!/bin/bash
# Device run G (2026-12-03, second session): the runtime entry with paired rounds; the net hook
# cost per message (in-process, device host); and, in a real NCCL run through our transport with
# net_counters.o, the messages NCCL actually sends (size, count, time per message, from the
# policy's own map read live with `ncclbpf map dump`), to put the per-message hook cost against
# the collective's time.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/rG; mkdir -p $R; B=$PWD/gpu-carry/bench; P=$PWD/gpu-carry/policies
NCCL_HOME=${NCCL_HOME:-$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)}
( cmake -S . -B build-gpu -DNCCLBPF_SANITIZERS=OFF -DNCCLBPF_BUILD_POLICIES=OFF -DBUILD_TESTING=OFF -DNCCL_HOME="$NCCL_HOME" &&
  cmake --build build-gpu -j16 --target nccl_ncclbpf ncclbpf-gpubench ncclbpf ) > $R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
for i in 1 2 3; do $B/jit_bench $B/jit_kernels $P 2>&1 | sed -n '/runtime entry, /,/hook through/p'; done | tee $R/entry.txt
for i in 1 2 3; do $B/ncclbpf-net-bench --lib $B/libnccl-ncclbpf.so --policy $P/net_counters.o --inner $B/libnccl-net-fake.so --reps 7 --sizes 8 --time 0.05 2>&1 | grep "hook path"; done | tee $R/hookpath.txt
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
G=$PWD/build-gpu/bin/ncclbpf-gpubench; L=$PWD/build-gpu/lib/libnccl-ncclbpf.so; CLI=$PWD/build-gpu/bin/ncclbpf
export NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_TUNER_PLUGIN=none NCCL_PROFILER_PLUGIN=none NCCL_ENV_PLUGIN=none
export NCCL_NET_PLUGIN=$L NCCL_NET=NCCLbpf NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2
D=/dev/shm/ncclbpf-$(id -u)/procs
for spec in "1M 20000" "16M 1500" "64M 500"; do
  set -- $spec
  NCCLBPF_POLICY=$P/net_counters.o timeout 90 $G -n 2 -b $1 -e $1 -i $2 -w 5 --csv $R/g.$1.csv > $R/g.$1.txt 2>&1 &
  bp=$!
  sleep 6
  echo "== size $1"
  for s in $D/*.sock; do pid=${s%.sock}; pid=${pid##*.}; kill -0 $pid 2>/dev/null || continue
    echo "-- pid $pid"; timeout 10 $CLI map dump $pid net_peers 2>&1 | head -20; done
  wait $bp; echo "bench rc=$?"; tail -3 $R/g.$1.txt
done 2>&1 | tee $R/maps.txt
echo quit | nvidia-cuda-mps-control
cd $OUT && tar czf rG.tgz rG && rm -rf rG
