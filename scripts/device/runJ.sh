#!/bin/bash
# Device run J (2026-12-03, third session): what a small AllReduce costs in net messages.
# Clock costs on the host (clock_probe.c); the net hook path per message (in-process); and, for
# 1 KiB / 4 KiB / 64 KiB AllReduces through our transport with net_counters.o, the messages
# each rank sends and receives, read from the policy's own map while the ranks hold after the
# run (ncclbpf-gpubench --hold): two iteration counts, so setup traffic cancels in the
# difference. Then the GPU e2e check on the current code.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/rJ; mkdir -p $R; B=$PWD/gpu-carry/bench; P=$PWD/gpu-carry/policies
cat /sys/devices/system/clocksource/clocksource0/current_clocksource /sys/devices/system/clocksource/clocksource0/available_clocksource > $R/clock.txt
grep -o -w "constant_tsc\|nonstop_tsc\|tsc_known_freq\|rdtscp" /proc/cpuinfo | sort | uniq -c >> $R/clock.txt
lscpu | grep -E "Model name|MHz|Hypervisor" >> $R/clock.txt
gcc -O2 -o $R/clock_probe scripts/device/clock_probe.c && $R/clock_probe >> $R/clock.txt; rm -f $R/clock_probe
cat $R/clock.txt
for i in 1 2 3; do $B/ncclbpf-net-bench --lib $B/libnccl-ncclbpf.so --policy $P/net_counters.o --inner $B/libnccl-net-fake.so --reps 7 --hook-path-only; done | tee $R/hookpath.txt
NCCL_HOME=${NCCL_HOME:-$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)}
( cmake -S . -B build-gpu -DNCCLBPF_SANITIZERS=OFF -DNCCLBPF_BUILD_POLICIES=OFF -DBUILD_TESTING=OFF -DNCCL_HOME="$NCCL_HOME" &&
  cmake --build build-gpu -j16 ) > $R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
G=$PWD/build-gpu/bin/ncclbpf-gpubench; L=$PWD/build-gpu/lib/libnccl-ncclbpf.so; CLI=$PWD/build-gpu/bin/ncclbpf
( export NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_TUNER_PLUGIN=none NCCL_PROFILER_PLUGIN=none NCCL_ENV_PLUGIN=none
  export NCCL_NET_PLUGIN=$L NCCL_NET=NCCLbpf NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2
  for size in 1K 4K 64K; do for it in 1000 3000; do
    f=$R/g.$size.$it.txt
    NCCLBPF_POLICY=$P/net_counters.o timeout 120 $G -n 2 -b $size -e $size -i $it -w 5 --hold 4 > $f 2>&1 & bp=$!
    for t in $(seq 1 200); do [ "$(grep -c holding $f)" -ge 2 ] && break; kill -0 $bp 2>/dev/null || break; sleep 0.3; done
    echo "== size $size iters $it"
    for pid in $(sed -n 's/.*rank [0-9]* pid \([0-9]*\) holding.*/\1/p' $f); do
      echo "-- pid $pid"; timeout 10 $CLI map dump $pid net_peers 2>&1 | head -4; done
    wait $bp; echo "bench rc=$?"; grep -A1 "size(B)" $f | tail -1
  done; done ) 2>&1 | tee $R/maps.txt
POLICY_DIR=$P timeout 300 scripts/gpu-e2e.sh $R/e2e > $R/e2e.txt 2>&1; echo "e2e rc=$?" >> $R/e2e.txt
echo quit | nvidia-cuda-mps-control
grep -E "^==|^OK|^FAIL|^!!|decisions:|rank .: |switched|gpu-e2e|e2e rc" $R/e2e.txt
cd $OUT && tar czf rJ.tgz rJ && rm -rf rJ
