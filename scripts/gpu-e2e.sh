#!/usr/bin/env bash
# GPU end-to-end run (H200 machine: CUDA, NCCL in PyTorch's venv, no clang). Builds the project
# and ncclbpf-gpubench there, then runs real NCCL with several ranks on one GPU (distinct
# NCCL_HOSTID per rank) without the plugin, with the no-op policy and with the size-aware policy,
# checks every result, checks that all ranks made identical decisions, and records traces.
# Policy objects are built beforehand with clang (POLICY_DIR, default gpu-carry/policies).
# Usage: scripts/gpu-e2e.sh [OUTDIR]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/gpu-e2e}}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
POLICY_DIR=${POLICY_DIR:-$PWD/gpu-carry/policies}
NCCL_HOME=${NCCL_HOME:-$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)}
echo "NCCL_HOME=$NCCL_HOME"; ls "$NCCL_HOME"/lib "$NCCL_HOME"/include 2>&1 | head
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
cmake -S . -B build-gpu -DNCCLBPF_SANITIZERS=OFF -DNCCLBPF_BUILD_POLICIES=OFF -DBUILD_TESTING=OFF \
  -DNCCL_HOME="$NCCL_HOME" >"$OUT/cmake.log" 2>&1 || { tail -20 "$OUT/cmake.log"; exit 1; }
cmake --build build-gpu -j16 >"$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -20; exit 1; }
BENCH=build-gpu/bin/ncclbpf-gpubench
PLUGIN=$PWD/build-gpu/lib/libnccl-ncclbpf.so
export LD_LIBRARY_PATH="$NCCL_HOME/lib:${LD_LIBRARY_PATH:-}"
[ -x "$BENCH" ] || { echo "gpubench not built"; grep gpubench "$OUT/cmake.log"; exit 1; }
status=0
run() { # name, args...
  local name=$1; shift
  echo "== $name: $*"
  mkdir -p "$OUT/$name"
  GPUBENCH_TRACE_DIR="$OUT/$name" timeout 300 "$BENCH" "$@" >"$OUT/$name/bench.txt" 2>"$OUT/$name/stderr.txt"
  local rc=$?
  tail -n +1 "$OUT/$name/bench.txt" | grep -vE "^#.*iters" | tail -40
  [ $rc -eq 0 ] || { echo "!! $name failed rc=$rc"; tail -20 "$OUT/$name/stderr.txt"; status=1; }
  # Identical decisions on every rank: compare the recorded (seq, collective, bytes, decision).
  local first=""
  for t in "$OUT/$name"/trace.rank*; do
    [ -f "$t" ] || continue
    grep '^call ' "$t" | sed -E 's/^call c=[^ ]+ //; s/ cost=[^ ]+//; s/ reg=[0-9]+//' >"$t.decisions"
    if [ -z "$first" ]; then first=$t.decisions
    elif ! cmp -s "$first" "$t.decisions"; then echo "!! $name: ranks decided differently ($t)"; status=1; fi
  done
  [ -n "$first" ] && echo "   $(wc -l <"$first") tuner calls per rank, identical on all ranks"
}
N=${RANKS:-2}
SWEEP="-n $N -b 8 -e ${MAXB:-16M} -i ${ITERS:-10} -w 3"
run noplugin $SWEEP --no-plugin
run noop $SWEEP --plugin "$PLUGIN" --policy "$POLICY_DIR/noop.o"
run size_aware $SWEEP --plugin "$PLUGIN" --policy "$POLICY_DIR/size_aware.o"
# NCCL's own log: the plugin loaded and its decisions are the ones NCCL used.
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV GPUBENCH_TRACE_DIR="$OUT/log" \
  timeout 120 "$BENCH" -n $N -b 8 -e 1M -i 2 -w 1 --plugin "$PLUGIN" --policy "$POLICY_DIR/size_aware.o" \
  >"$OUT/nccl-info.txt" 2>&1
grep -iE "tuner|ncclbpf" "$OUT/nccl-info.txt" | sort | uniq -c | sort -rn | head -20
grep -E "AllReduce: [0-9]+ Bytes -> Algo" "$OUT/nccl-info.txt" | head -20
exit $status
