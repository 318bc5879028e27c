#!/bin/bash
# Device run E: hook cost of the net_counters policy on our transport (interleaved, MPS), runtime entry x3.
set -u
export NCCL_NVLS_ENABLE=0 NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_TUNER_PLUGIN=none NCCL_PROFILER_PLUGIN=none NCCL_ENV_PLUGIN=none
B=$PWD/gpu-carry/bench; P=$PWD/gpu-carry/policies; G=$PWD/build-gpu/bin/ncclbpf-gpubench; L=$PWD/build-gpu/lib/libnccl-ncclbpf.so
R=$OUT/rE; mkdir -p $R
for i in 1 2 3; do $B/jit_bench $B/jit_kernels $P 2>&1 | grep -E "C function|runtime entry"; done > $R/entry.txt
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log; mkdir -p /tmp/mps-pipe /tmp/mps-log; nvidia-cuda-mps-control -d
export NCCL_NET_PLUGIN=$L NCCL_NET=NCCLbpf NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2
for r in 1 2 3 4 5 6; do
  timeout 60 $G -n 2 -b 1K -e 4M -f 4 -i 200 -w 20 --csv $R/none.$r.csv >/dev/null 2>&1
  NCCLBPF_POLICY=$P/net_counters.o timeout 60 $G -n 2 -b 1K -e 4M -f 4 -i 200 -w 20 --csv $R/hook.$r.csv >/dev/null 2>&1
done
echo quit | nvidia-cuda-mps-control
cat $R/entry.txt
python3 - $R <<'PY'
import csv,glob,sys,statistics as st
R=sys.argv[1]; d={}
for k in ("none","hook"):
  for f in sorted(glob.glob(f"{R}/{k}.*.csv")):
    for row in csv.DictReader(open(f)): d.setdefault((k,int(row["bytes"])),[]).append(float(row["time_us_mean"]))
print("size none_us(med) hook_us(med) hook/none paired-ratios")
for b in sorted({b for _,b in d}):
  a,h=d.get(("none",b),[]),d.get(("hook",b),[])
  rs=[y/x for x,y in zip(a,h)]
  print(b, round(st.median(a),1), round(st.median(h),1), round(st.median(h)/st.median(a),3), [round(x,3) for x in rs])
PY
cd $OUT && tar czf rE.tgz rE && rm -rf rE
