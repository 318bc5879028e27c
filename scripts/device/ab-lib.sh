# Shared by the in-job A/B device runs (runK..runP): `. scripts/device/ab-lib.sh rX` builds
# the plugin and ncclbpf-gpubench in build-gpu, starts MPS and defines
#   R (output folder $OUT/rX), P (gpu-carry/policies), B (gpu-carry/bench),
#   ab LABEL MIN-MAX ITERS PAIRS BASE TEST   one ncclbpf-gpubench --ab run, 2 ranks through
#       our transport (2 channels), sizes MIN..MAX by x4; $AB_ENV adds settings (runN: NCCL_DEBUG)
#   hold_stat POLICY MIN-MAX [F]              `ncclbpf stat` of each rank of a job that holds
#   ab_end                                    stops MPS and packs $R into $OUT/rX.tgz (at most
#                                             8 files come back from a device call).
# G, L, CLI: the gpubench, plugin and ncclbpf CLI built there; NET: the NCCL settings.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/$1; mkdir -p $R; P=$PWD/gpu-carry/policies; B=$PWD/gpu-carry/bench
NCCL_HOME=${NCCL_HOME:-$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)}
( cmake -S . -B build-gpu -DNCCLBPF_SANITIZERS=OFF -DNCCLBPF_BUILD_POLICIES=OFF -DBUILD_TESTING=OFF -DNCCL_HOME="$NCCL_HOME" &&
  cmake --build build-gpu -j16 --target nccl_ncclbpf ncclbpf-gpubench ncclbpf ) > $R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
G=$PWD/build-gpu/bin/ncclbpf-gpubench; L=$PWD/build-gpu/lib/libnccl-ncclbpf.so; CLI=$PWD/build-gpu/bin/ncclbpf
NET="NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_TUNER_PLUGIN=none NCCL_PROFILER_PLUGIN=none NCCL_ENV_PLUGIN=none NCCL_NET_PLUGIN=$L NCCL_NET=NCCLbpf NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2"
ab() {
  echo "== ab $1: $2 x$3 ops, $4 pairs"
  env $NET ${AB_ENV:-} timeout 200 $G -n 2 -b ${2%-*} -e ${2#*-} -f 4 -i $3 -w 3 -r $4 --ab $5,$6 > $R/ab.$1.txt 2>&1; echo "rc=$?"
  grep "^# ab\|FAIL\|durations timed" $R/ab.$1.txt | sort | uniq -c | head -12
}
# hold_stat POLICY SIZE-SIZE [FACTOR]: one 2-rank job with POLICY that holds after the run; while
# it holds, `ncclbpf stat` of each rank (the net completion queue counters).
hold_stat() {
  ( export $NET; f=$R/hold.txt
    NCCLBPF_POLICY=$1 timeout 120 $G -n 2 -b ${2%-*} -e ${2#*-} -f ${3:-4} -i 2000 -w 5 --hold 4 > $f 2>&1 & bp=$!
    for t in $(seq 1 200); do [ "$(grep -c holding $f 2>/dev/null)" -ge 2 ] && break; kill -0 $bp 2>/dev/null || break; sleep 0.3; done
    for pid in $(sed -n 's/.*rank [0-9]* pid \([0-9]*\) holding.*/\1/p' $f); do
      echo "-- pid $pid"; timeout 10 $CLI stat $pid 2>&1 | grep -E "net completions"; done
    wait $bp; echo "bench rc=$?" ) 2>&1 | tee $R/stat.txt
}
ab_end() { echo quit | nvidia-cuda-mps-control; tar czf $R.tgz -C $(dirname $R) $(basename $R) && rm -rf $R; }
