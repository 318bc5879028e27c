#!/bin/bash
# Device run F (2026-12-03, second session): after the inline runtime entry, the TLS epoch
# record, the profiler and net hot-path work. CPU benchmarks on the 16-core host (runtime entry,
# profiler event cost, net transport A/B + in-process hook path), the GPU e2e check (tuner,
# profiler, env, hot reload through real NCCL), net hook cost on the GPU (interleaved pairs).
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/rF; mkdir -p $R; B=$PWD/gpu-carry/bench; P=$PWD/gpu-carry/policies
lscpu | grep -E "Model name|MHz|^CPU\(s\)" > $R/cpu.txt
for i in 1 2 3; do $B/jit_bench $B/jit_kernels $P 2>&1 | grep -E "C function|runtime entry|hook through"; done > $R/entry.txt
$B/jit_bench $B/jit_kernels $P > $R/jit_bench.txt 2>&1
for i in 1 2 3; do $B/profiler_bench $B/libnccl-ncclbpf.so $P/noop.o $B/prof_noop.o $P/profiler_latency.o 200000 2>&1 | tail -7; done > $R/profiler_bench.txt
timeout 240 $B/ncclbpf-net-bench --lib $B/libnccl-ncclbpf.so --policy $P/net_counters.o --inner $B/libnccl-net-fake.so --reps 7 --sizes 8,1K,64K,1M,8M,32M --time 0.2 > $R/net_bench.txt 2>&1
cat $R/cpu.txt $R/entry.txt $R/profiler_bench.txt $R/net_bench.txt
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
POLICY_DIR=$P timeout 300 scripts/gpu-e2e.sh $R/e2e > $R/e2e.txt 2>&1; echo "e2e rc=$?" >> $R/e2e.txt
grep -E "^==|^OK|^FAIL|^!!|decisions:|rank .: |switched|gpu-e2e|e2e rc" $R/e2e.txt
# Net hook cost through NCCL: our transport with and without net_counters.o, interleaved pairs.
G=$PWD/build-gpu/bin/ncclbpf-gpubench; L=$PWD/build-gpu/lib/libnccl-ncclbpf.so
( export NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_TUNER_PLUGIN=none NCCL_PROFILER_PLUGIN=none NCCL_ENV_PLUGIN=none
  export NCCL_NET_PLUGIN=$L NCCL_NET=NCCLbpf NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2
  for r in $(seq 1 ${NPAIRS:-8}); do
    timeout 60 $G -n 2 -b 1K -e 64M -f 4 -i 100 -w 10 --csv $R/none.$r.csv >/dev/null 2>&1
    NCCLBPF_POLICY=$P/net_counters.o timeout 60 $G -n 2 -b 1K -e 64M -f 4 -i 100 -w 10 --csv $R/hook.$r.csv >/dev/null 2>&1
  done )
echo quit | nvidia-cuda-mps-control
python3 - $R <<'PY' | tee $R/net_gpu.txt
import csv,glob,sys,statistics as st
R=sys.argv[1]; d={}
for k in ("none","hook"):
  for f in sorted(glob.glob(f"{R}/{k}.*.csv")):
    for row in csv.DictReader(open(f)): d.setdefault((k,int(row["bytes"])),[]).append(float(row["time_us_mean"]))
print("size none_us(med) hook_us(med) hook/none median-of-paired-ratios q1..q3 n")
for b in sorted({b for _,b in d}):
  a,h=d.get(("none",b),[]),d.get(("hook",b),[])
  rs=sorted(y/x for x,y in zip(a,h))
  if not rs: continue
  q=st.quantiles(rs,n=4) if len(rs)>1 else [rs[0]]*3
  print(b, round(st.median(a),1), round(st.median(h),1), round(st.median(rs),3), f"{q[0]:.3f}..{q[2]:.3f}", len(rs))
PY
cd $OUT && tar czf rF.tgz rF && rm -rf rF
