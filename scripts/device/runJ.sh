#!/bin/bash
# Device run J (2026-12-03, third session): the net hooks' cost on small collectives.
# 1. In-job A/B (ncclbpf-gpubench --ab): 2 ranks through our transport, blocks alternating
#    between a bundle without net programs (noop.o) and net_counters.o, switched by hot reload
#    inside one job; an A/A control (noop/noop) shows the method's own spread.
# 2. The net messages per AllReduce (1 KiB, 4 KiB, 64 KiB), read from net_counters' map while
#    the ranks hold after the run (--hold), at two iteration counts (setup traffic cancels).
# 3. Host clocks (clock_probe.c) and the in-process hook path per message.
# 4. The GPU e2e check on the current code.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/rJ; mkdir -p $R; B=$PWD/gpu-carry/bench; P=$PWD/gpu-carry/policies
NCCL_HOME=${NCCL_HOME:-$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)}
( cmake -S . -B build-gpu -DNCCLBPF_SANITIZERS=OFF -DNCCLBPF_BUILD_POLICIES=OFF -DBUILD_TESTING=OFF -DNCCL_HOME="$NCCL_HOME" &&
  cmake --build build-gpu -j16 ) > $R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
G=$PWD/build-gpu/bin/ncclbpf-gpubench; L=$PWD/build-gpu/lib/libnccl-ncclbpf.so; CLI=$PWD/build-gpu/bin/ncclbpf
NET="NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_TUNER_PLUGIN=none NCCL_PROFILER_PLUGIN=none NCCL_ENV_PLUGIN=none NCCL_NET_PLUGIN=$L NCCL_NET=NCCLbpf NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2"
ab() { # label sizes iters reps base test
  echo "== ab $1: $2 x$3 ops, $4 pairs"
  env $NET timeout 150 $G -n 2 -b ${2%-*} -e ${2#*-} -f 4 -i $3 -w 3 -r $4 --ab $5,$6 > $R/ab.$1.txt 2>&1; echo "rc=$?"
  grep "^# ab\|FAIL\|rank" $R/ab.$1.txt | head -12
}
{ ab aa-small 1K-4K 1000 40 $P/noop.o $P/noop.o
  ab small 1K-64K 1000 40 $P/noop.o $P/net_counters.o
  ab count-only 1K-4K 1000 40 $P/noop.o $B/net_count_only.o
  ab mid 256K-1M 200 30 $P/noop.o $P/net_counters.o
  ab large 16M-64M 10 20 $P/noop.o $P/net_counters.o; } 2>&1 | tee $R/ab.txt
( export $NET
  for size in 1K 64K; do for it in 1000 3000; do
    f=$R/g.$size.$it.txt
    NCCLBPF_POLICY=$P/net_counters.o timeout 120 $G -n 2 -b $size -e $size -i $it -w 5 --hold 4 > $f 2>&1 & bp=$!
    for t in $(seq 1 200); do [ "$(grep -c holding $f 2>/dev/null)" -ge 2 ] && break; kill -0 $bp 2>/dev/null || break; sleep 0.3; done
    echo "== size $size iters $it"
    for pid in $(sed -n 's/.*rank [0-9]* pid \([0-9]*\) holding.*/\1/p' $f); do
      echo "-- pid $pid"; timeout 10 $CLI map dump $pid net_peers 2>&1 | head -4; done
    wait $bp; echo "bench rc=$?"; grep -A1 "size(B)" $f | tail -1
  done; done ) 2>&1 | tee $R/maps.txt
{ cat /sys/devices/system/clocksource/clocksource0/current_clocksource /sys/devices/system/clocksource/clocksource0/available_clocksource
  grep -o -w "constant_tsc\|nonstop_tsc\|tsc_known_freq\|rdtscp" /proc/cpuinfo | sort | uniq -c
  lscpu | grep -E "Model name|MHz|Hypervisor"
  gcc -O2 -o /tmp/clock_probe scripts/device/clock_probe.c && /tmp/clock_probe; } 2>&1 | tee $R/clock.txt
for i in 1 2 3; do $B/ncclbpf-net-bench --lib $B/libnccl-ncclbpf.so --policy $P/net_counters.o --policy2 $B/net_count_only.o --inner $B/libnccl-net-fake.so --reps 7 --hook-path-only; done | tee $R/hookpath.txt
POLICY_DIR=$P timeout 200 scripts/gpu-e2e.sh $R/e2e > $R/e2e.txt 2>&1; echo "e2e rc=$?" >> $R/e2e.txt
echo quit | nvidia-cuda-mps-control
grep -E "^==|^OK|^FAIL|^!!|decisions:|rank .: |switched|gpu-e2e|e2e rc" $R/e2e.txt
