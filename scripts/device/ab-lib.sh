# Shared by the in-job A/B device runs (runK..runP): `. scripts/device/ab-lib.sh rX` builds
# the plugin and ncclbpf-gpubench in build-gpu, starts MPS and defines
#   R (output folder $OUT/rX), P (gpu-carry/policies), B (gpu-carry/bench),
#   ab LABEL MIN-MAX ITERS PAIRS BASE TEST   one ncclbpf-gpubench --ab run, 2 ranks through
#       our transport (2 channels), sizes MIN..MAX by x4; $AB_ENV adds settings (runN: NCCL_DEBUG)
#   ab_end                                    stops MPS.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/$1; mkdir -p $R; P=$PWD/gpu-carry/policies; B=$PWD/gpu-carry/bench
NCCL_HOME=${NCCL_HOME:-$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)}
( cmake -S . -B build-gpu -DNCCLBPF_SANITIZERS=OFF -DNCCLBPF_BUILD_POLICIES=OFF -DBUILD_TESTING=OFF -DNCCL_HOME="$NCCL_HOME" &&
  cmake --build build-gpu -j16 --target nccl_ncclbpf ncclbpf-gpubench ) > $R/build.log 2>&1 || { tail -20 $R/build.log; exit 1; }
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
G=$PWD/build-gpu/bin/ncclbpf-gpubench; L=$PWD/build-gpu/lib/libnccl-ncclbpf.so
NET="NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_TUNER_PLUGIN=none NCCL_PROFILER_PLUGIN=none NCCL_ENV_PLUGIN=none NCCL_NET_PLUGIN=$L NCCL_NET=NCCLbpf NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2"
ab() {
  echo "== ab $1: $2 x$3 ops, $4 pairs"
  env $NET ${AB_ENV:-} timeout 200 $G -n 2 -b ${2%-*} -e ${2#*-} -f 4 -i $3 -w 3 -r $4 --ab $5,$6 > $R/ab.$1.txt 2>&1; echo "rc=$?"
  grep "^# ab\|FAIL\|durations timed" $R/ab.$1.txt | sort | uniq -c | head -12
}
ab_end() { echo quit | nvidia-cuda-mps-control; }
