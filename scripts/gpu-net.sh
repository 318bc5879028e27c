#!/usr/bin/env bash
# GPU run of the net plugin (H200 host: CUDA, NCCL in PyTorch's venv, no clang). Builds the
# plugin, ncclbpf-gpubench and ncclbpf-net-bench, then, with 2 ranks (processes) on GPU 0 and
# distinct NCCL_HOSTIDs, P2P and SHM off and NCCL_SOCKET_IFNAME=lo, so that every byte goes
# through the network transport:
#   main   AllReduce 1 KiB..256 MiB, interleaved rounds of three configurations:
#            socket  NCCL's built-in Socket transport (NCCL_NET=Socket, no net plugin)
#            ours    our transport (NCCL_NET_PLUGIN=<lib>, NCCL_NET=NCCLbpf), no policy
#            hook    ours with policies/net_counters.o attached (hook cost)
#   floor  issue #9's latency floor, 1 KiB..4 MiB: Socket with 1 and 4 channels, LL and
#          SIMPLE, ours with LL (docs/net-plugin.md, "The latency floor", says how to read it)
# each without and with CUDA MPS (MPS=0 skips the MPS phase); plus the transport's own CPU
# loopback latency (net_bench) and NCCL's algorithm/protocol choice per size for both
# transports. Every run's NCCL log must show the intended network ("Using network X", channels
# "via NET/X/", no P2P/SHM), else the run is flagged. Prints markdown tables at the end.
# Policy objects are built beforehand with clang (POLICY_DIR, default gpu-carry/policies,
# needs net_counters.o).
# Usage: scripts/gpu-net.sh [OUTDIR]   env: MPS=1 BUDGET=450 (s, whole script) ROUNDS=2 CH=2
#   ITERS=5; SKIP_BUILD=1 with BENCH/NETBENCH/PLUGIN reuses binaries.
set -uo pipefail
. "$(dirname "$0")/gpu-usage.sh"
cd "$(dirname "$0")/.."
T0=$SECONDS
BUDGET=${BUDGET:-450}
ROUNDS=${ROUNDS:-2}
CH=${CH:-2}
MPS=${MPS:-1}
OUT=${1:-${OUT:-/tmp/gpu-net}}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export NCCL_NVLS_ENABLE=0
left() { echo $((BUDGET - (SECONDS - T0))); }
POLICY_DIR=${POLICY_DIR:-$PWD/gpu-carry/policies}
HOOK_POLICY=$POLICY_DIR/net_counters.o
NCCL_HOME=${NCCL_HOME:-$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)}
echo "NCCL_HOME=$NCCL_HOME  out=$OUT  budget=${BUDGET}s rounds=$ROUNDS channels=$CH MPS=$MPS"
nvidia-smi --query-gpu=name,driver_version,compute_mode,memory.total --format=csv,noheader
pgrep -a nvidia-cuda-mps >/dev/null 2>&1 && echo "note: an MPS daemon was already running"
[ -f "$HOOK_POLICY" ] || echo "!! $HOOK_POLICY missing: the hook configuration is skipped"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cmake -S . -B build-gpu -DNCCLBPF_SANITIZERS=OFF -DNCCLBPF_BUILD_POLICIES=OFF -DBUILD_TESTING=OFF \
    -DNCCL_HOME="$NCCL_HOME" >"$OUT/cmake.log" 2>&1 || { tail -20 "$OUT/cmake.log"; exit 1; }
  cmake --build build-gpu -j16 --target nccl_ncclbpf ncclbpf-gpubench ncclbpf-net-bench \
    >"$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -20; exit 1; }
fi
BENCH=${BENCH:-$PWD/build-gpu/bin/ncclbpf-gpubench}
NETBENCH=${NETBENCH:-$PWD/build-gpu/bin/ncclbpf-net-bench}
PLUGIN=${PLUGIN:-$PWD/build-gpu/lib/libnccl-ncclbpf.so}
export LD_LIBRARY_PATH="$NCCL_HOME/lib:${LD_LIBRARY_PATH:-}"
[ -x "$BENCH" ] || { echo "gpubench not built"; grep gpubench "$OUT/cmake.log"; exit 1; }
echo "build done at $((SECONDS - T0)) s"

# Every byte through the network transport; no other plugin than the one under test.
export NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
export NCCL_PROFILER_PLUGIN=none NCCL_ENV_PLUGIN=none NCCLBPF_WATCH=0
unset NCCL_ALGO NCCL_PROTO NCCL_MIN_NCHANNELS NCCL_MAX_NCHANNELS NCCL_NET NCCL_NET_PLUGIN NCCLBPF_POLICY

# CPU only: our transport's own loopback latency/bandwidth (no GPU, no NCCL).
if [ -f "$HOOK_POLICY" ] && [ "$(left)" -gt 200 ]; then
  timeout 60 "$NETBENCH" --lib "$PLUGIN" --policy "$HOOK_POLICY" --reps 3 --sizes 8,1K,64K,1M,4M \
    --time 0.1 >"$OUT/net_bench.txt" 2>&1 || echo "!! net_bench failed (see $OUT/net_bench.txt)"
fi

status=0
# run PHASE NAME CONFIG SECS gpubench-args...: one gpubench run with a per-run NCCL log.
run() {
  local phase=$1 name=$2 cfg=$3 cap=$4; shift 4
  local d=$OUT/$phase/$name
  local t=$(( $(left) - 25 ))
  [ "$t" -gt "$cap" ] && t=$cap
  if [ "$t" -lt 15 ]; then echo "!! $phase/$name skipped: budget"; return; fi
  mkdir -p "$d"
  local net=Socket
  local -a env=(NCCL_NET=Socket NCCL_NET_PLUGIN=none)
  if [ "$cfg" != socket ]; then net=NCCLbpf; env=(NCCL_NET=NCCLbpf NCCL_NET_PLUGIN="$PLUGIN"); fi
  if [ "$cfg" = hook ]; then
    [ -f "$HOOK_POLICY" ] || return
    env+=(NCCLBPF_POLICY="$HOOK_POLICY")
  fi
  env "${env[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=${SUBSYS:-INIT,NET,ENV} \
    NCCL_DEBUG_FILE="$d/nccl.%h.%p.log" \
    "$BENCH" -n 2 --no-plugin --timeout "$t" --csv "$d/result.csv" "$@" \
    >"$d/bench.txt" 2>"$d/stderr.txt"
  local rc=$?
  # The intended transport, on both ranks, and nothing else.
  local logs=("$d"/nccl.*.log)
  local using other chans p2p hooked=""
  using=$(cat "${logs[@]}" 2>/dev/null | grep -c "Using network $net\$")
  other=$(cat "${logs[@]}" 2>/dev/null | grep "Using network" | grep -vc "Using network $net\$")
  chans=$(cat "${logs[@]}" 2>/dev/null | grep -c "via NET/$net/")
  p2p=$(cat "${logs[@]}" 2>/dev/null | grep -Ec "via (P2P|SHM)")
  if [ "$cfg" = hook ]; then
    hooked=$(cat "${logs[@]}" 2>/dev/null | grep -c "NCCLbpf: policy .* active as version")
    hooked=" policy-active=$hooked"
  elif [ "$cfg" = ours ]; then
    hooked=$(cat "${logs[@]}" 2>/dev/null | grep -c "the transport runs without hooks")
    hooked=" no-hooks-info=$hooked"
  fi
  local v="OK"
  if [ $rc -ne 0 ] || [ "$using" -lt 2 ] || [ "$other" -ne 0 ] || [ "$chans" -lt 1 ] ||
     [ "$p2p" -ne 0 ] || grep -q "FAILED" "$d/bench.txt"; then v="BAD"; status=1; fi
  printf '%-5s %-20s rc=%d t=%ds using=%s:%d other=%d via-NET=%d P2P/SHM=%d%s %s\n' \
    "$phase" "$name" $rc $((SECONDS - T0)) "$net" "$using" "$other" "$chans" "$p2p" "$hooked" "$v" \
    | tee -a "$OUT/verify.txt"
  [ $rc -eq 0 ] || tail -5 "$d/stderr.txt"
}

MAIN=(-b 1K -e 256M -f 4 -i ${ITERS:-5} -w 2 -r 3 --channels "$CH")
FLOOR=(-b 1K -e 4M -f 4 -i 20 -w 5 -r 3)
phase() { # PHASE
  local p=$1
  for r in $(seq 1 "$ROUNDS"); do
    for cfg in socket ours hook; do run "$p" "main-$cfg-r$r" $cfg 120 "${MAIN[@]}"; done
  done
  run "$p" floor-socket-ch1 socket 60 "${FLOOR[@]}" --channels 1
  run "$p" floor-socket-ch4 socket 60 "${FLOOR[@]}" --channels 4
  run "$p" floor-socket-ll socket 60 "${FLOOR[@]}" --channels "$CH" --proto ll
  run "$p" floor-socket-simple socket 60 "${FLOOR[@]}" --channels "$CH" --proto simple
  run "$p" floor-ours-ll ours 60 "${FLOOR[@]}" --channels "$CH" --proto ll
}

phase nomps
# What NCCL chose per size for each transport (per-call TUNING lines: a separate, untimed run).
for cfg in socket ours; do
  SUBSYS=INIT,NET,TUNING run nomps "algo-$cfg" $cfg 60 -b 1K -e 256M -f 4 -i 1 -w 0 -r 1 \
    --no-check --channels "$CH"
done

MPS_DIR=""
mps_stop() {
  [ -n "$MPS_DIR" ] || return 0
  echo quit | CUDA_MPS_PIPE_DIRECTORY=$MPS_DIR/pipe nvidia-cuda-mps-control >/dev/null 2>&1
  sleep 1
  MPS_DIR=""
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
trap mps_stop EXIT
if [ "$MPS" = 1 ] && [ "$(left)" -gt 60 ]; then
  if ! command -v nvidia-cuda-mps-control >/dev/null; then
    echo "!! nvidia-cuda-mps-control not found: no MPS phase"
  else
    MPS_DIR=$(mktemp -d /tmp/ncclbpf-mps-XXXXXX)
    mkdir -p "$MPS_DIR/pipe" "$MPS_DIR/log"
    export CUDA_MPS_PIPE_DIRECTORY=$MPS_DIR/pipe CUDA_MPS_LOG_DIRECTORY=$MPS_DIR/log
    if nvidia-cuda-mps-control -d; then
      echo "MPS daemon started ($MPS_DIR)"
      # A short probe first; NCCL with MPS may need NCCL_CUMEM_ENABLE=0 on some drivers.
      run mps probe socket 40 -b 1K -e 64K -f 4 -i 2 -w 1 -r 1
      if ! grep -q "OK$" <(tail -1 "$OUT/verify.txt"); then
        export NCCL_CUMEM_ENABLE=0
        echo "MPS probe failed: retrying the MPS phase with NCCL_CUMEM_ENABLE=0"
        run mps probe-nocumem socket 40 -b 1K -e 64K -f 4 -i 2 -w 1 -r 1
      fi
      if grep -q "OK$" <(tail -1 "$OUT/verify.txt"); then phase mps; fi
      cp -r "$MPS_DIR/log" "$OUT/mps-log" 2>/dev/null
    else
      echo "!! nvidia-cuda-mps-control -d failed: no MPS phase"
    fi
    mps_stop
  fi
fi

echo
CH=$CH python3 - "$OUT" <<'EOF'
import csv, glob, os, re, statistics, sys
out = sys.argv[1]

def rows(path):
    try:
        with open(path) as f:
            return [r for r in csv.DictReader(f)]
    except OSError:
        return []

def times(phase, prefix):
    """{bytes: [mean time us per run]} over the runs whose name starts with prefix."""
    t = {}
    for d in sorted(glob.glob(f"{out}/{phase}/{prefix}*")):
        for r in rows(f"{d}/result.csv"):
            if int(r["wrong"]) == 0:
                t.setdefault(int(r["bytes"]), []).append(float(r["time_us_mean"]))
    return t

def med(v):
    return statistics.median(v) if v else None

def fmt_size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1024 else f"{b} B"

def f(v, p=1):
    return "-" if v is None else f"{v:.{p}f}"

floors = {}
for phase, title in (("nomps", "without MPS"), ("mps", "with MPS")):
    s, o, h = (times(phase, f"main-{c}-") for c in ("socket", "ours", "hook"))
    if not s and not o:
        continue
    print(f"### AllReduce, 2 ranks on one GPU, net transport over lo, {title}"
          f" (median of per-run means, µs; busbw GB/s)\n")
    print("| size | Socket µs | ours µs | ours/Socket | Socket busbw | ours busbw | ours+hook µs | hook overhead % |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for b in sorted(set(s) | set(o)):
        ts, to, th = med(s.get(b, [])), med(o.get(b, [])), med(h.get(b, []))
        bw = lambda t: None if not t else b / t / 1e3  # bus factor 1 for 2 ranks
        ratio = to / ts if ts and to else None
        ov = (th / to - 1) * 100 if th and to else None
        print(f"| {fmt_size(b)} | {f(ts)} | {f(to)} | {f(ratio, 3)} | {f(bw(ts), 3)} | "
              f"{f(bw(to), 3)} | {f(th)} | {f(ov)} |")
    small = [b for b in s if b <= 65536]
    floors[phase] = {"socket": med([med(s[b]) for b in small]) if small else None,
                     "ours": med([med(o[b]) for b in o if b <= 65536]) if o else None}
    print()

variants = ["main-socket-", "main-ours-", "floor-socket-ch1", "floor-socket-ch4",
            "floor-socket-ll", "floor-socket-simple", "floor-ours-ll"]
for phase, title in (("nomps", "without MPS"), ("mps", "with MPS")):
    got = {v: times(phase, v) for v in variants}
    if not any(got.values()):
        continue
    sizes = sorted({b for t in got.values() for b in t if b <= 4 << 20})
    print(f"### Latency floor, {title}: time per AllReduce (µs)\n")
    print("| variant | " + " | ".join(fmt_size(b) for b in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for v in variants:
        if got[v]:
            ch = os.environ.get("CH", "2")
            name = {"main-socket-": f"Socket, ch{ch} (main runs)",
                    "main-ours-": f"ours, ch{ch} (main runs)",
                    "floor-socket-ch1": "Socket, ch1", "floor-socket-ch4": "Socket, ch4",
                    "floor-socket-ll": f"Socket, ch{ch}, LL",
                    "floor-socket-simple": f"Socket, ch{ch}, SIMPLE",
                    "floor-ours-ll": f"ours, ch{ch}, LL"}[v]
            print(f"| {name} | " + " | ".join(f(med(got[v].get(b, []))) for b in sizes) + " |")
    print()

for cfg in ("socket", "ours"):
    logs = glob.glob(f"{out}/nomps/algo-{cfg}/nccl.*.log")
    seen = {}
    for path in logs:
        for line in open(path, errors="replace"):
            m = re.search(r"AllReduce: (\d+) Bytes -> Algo (\S+) proto (\S+)", line)
            if m:
                seen.setdefault(int(m.group(1)), set()).add(f"{m.group(2)}/{m.group(3)}")
    if seen:
        print(f"NCCL's choice with {cfg}: " + ", ".join(
            f"{fmt_size(b)} {'|'.join(sorted(v))}" for b, v in sorted(seen.items()) if b >= 1024))
print()
try:
    print(open(f"{out}/net_bench.txt").read())
except OSError:
    pass
n, m = floors.get("nomps", {}), floors.get("mps", {})
if n.get("socket") and m.get("socket"):
    print(f"floor (median 1..64 KiB, Socket): {n['socket']:.1f} µs without MPS, "
          f"{m['socket']:.1f} µs with MPS (x{n['socket'] / m['socket']:.1f}); "
          f"ours: {f(n.get('ours'))} / {f(m.get('ours'))} µs")
    print("reading (docs/net-plugin.md): time slicing between the two CUDA contexts is the cause "
          "when the floor collapses with MPS and, without MPS, is the same for both transports, "
          "LL/SIMPLE and 1/4 channels; a transport cause keeps it with MPS.")
EOF
echo
cat "$OUT/verify.txt" 2>/dev/null | grep -c "BAD$" | sed 's/^/runs flagged BAD: /'
echo "total $((SECONDS - T0)) s; logs and CSVs under $OUT"
exit $status
