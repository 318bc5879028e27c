#!/usr/bin/env bash
# docs/quickstart.md on a GPU machine (CUDA, PyTorch with its NCCL, cmake and a C compiler; no
# clang needed): builds and installs this checkout the way the page says (policies taken from
# POLICY_DIR, built elsewhere with clang), prints PyTorch's NCCL version, then runs the page's
# jobs through `ncclbpf run` with scripts/quickstart_allreduce.py:
#   single node: torchrun --nproc-per-node NPROC (all ranks on GPU 0, each with its own
#                NCCL_HOSTID, when the machine has fewer GPUs than NPROC);
#   two "nodes": two torchrun launchers (--nnodes 2, --node-rank 0 and 1, c10d rendezvous on
#                127.0.0.1) sharing one --dir, as two hosts would.
# While each job runs, `ncclbpf ps` must list every rank live with size_aware.o and `ncclbpf
# stat PID` of every rank must show the tuner program with runs > 0; the job must finish with
# correct results. Ends with "gpu-quickstart: OK" (exit 0) or the failures (exit 1).
# Usage: scripts/gpu-quickstart.sh POLICY_DIR [OUTDIR] [NPROC]
set -uo pipefail
. "$(dirname "$0")/gpu-usage.sh"
[ $# -ge 1 ] && [ -f "$1/size_aware.o" ] || {
	echo "usage: scripts/gpu-quickstart.sh POLICY_DIR [OUTDIR] [NPROC] (POLICY_DIR holds size_aware.o)" >&2
	exit 2
}
POLICY_DIR=$(cd "$1" && pwd)
OUT=${2:-/tmp/gpu-quickstart}
cd "$(dirname "$0")/.."
SRC=$PWD
PY=${PYTHON:-python3}
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
NPROC=${3:-$((GPUS >= 2 ? GPUS : 2))}
ONE_GPU=""
[ "$GPUS" -lt "$NPROC" ] && ONE_GPU=--one-gpu
mkdir -p "$OUT"
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
export HOME_PREFIX=$OUT/ncclbpf
echo "== PyTorch's NCCL: $($PY -c 'import torch; print(torch.cuda.nccl.version())' 2>&1)"
echo "== build and install ($GPUS GPUs, $NPROC ranks${ONE_GPU:+, all on GPU 0})"
cmake -S . -B "$OUT/build" -DNCCLBPF_SANITIZERS=OFF -DBUILD_TESTING=OFF \
	-DNCCLBPF_BUILD_POLICIES=OFF >"$OUT/cmake.log" 2>&1 || { tail -20 "$OUT/cmake.log"; exit 1; }
cmake --build "$OUT/build" -j"$(nproc)" >"$OUT/build.log" 2>&1 || {
	grep error "$OUT/build.log" | head
	exit 1
}
cmake --install "$OUT/build" --prefix "$HOME_PREFIX" >"$OUT/install.log" 2>&1 || exit 1
mkdir -p "$HOME_PREFIX/share/ncclbpf/policies"
cp "$POLICY_DIR"/*.o "$HOME_PREFIX/share/ncclbpf/policies/"
export PATH="$HOME_PREFIX/bin:$PATH"
P=$HOME_PREFIX/share/ncclbpf/policies
ncclbpf --version
ncclbpf verify "$P/size_aware.o" 2>&1 | tail -1

# watch_job NAME DIR NRANKS JOBPID: while the job runs, ps and stat must show every rank
# running the policy (the caller then checks that the job ends with correct results).
watch_job() {
	local name=$1 dir=$2 n=$3 job=$4 ok=0
	for _ in $(seq 1 120); do
		sleep 1
		kill -0 "$job" 2>/dev/null || break
		ncclbpf ps --dir "$dir" --json >"$OUT/$name.ps.json" 2>/dev/null || continue
		local pids
		pids=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(" ".join(str(p["pid"]) for p in d["processes"] if p["state"] == "live" and p.get("bundle", "").endswith("size_aware.o") and p.get("calls", 0) > 0))' "$OUT/$name.ps.json")
		[ "$(wc -w <<<"$pids")" -ge "$n" ] || continue
		ok=1
		for pid in $pids; do
			ncclbpf stat "$pid" --dir "$dir" --json >"$OUT/$name.stat.$pid.json" 2>&1 &&
				$PY -c 'import json,sys; d=json.load(open(sys.argv[1]))
t=[p for p in d["progs"] if p["hook"] == "tuner"]
sys.exit(0 if t and t[0]["runs"] > 0 else 1)' "$OUT/$name.stat.$pid.json" || ok=0
		done
		[ $ok -eq 1 ] && break
	done
	if [ $ok -eq 1 ]; then
		echo "   ps: $n ranks live with size_aware.o; stat: the tuner program ran on each:"
		ncclbpf ps --dir "$dir" | sed 's/^/   | /'
		ncclbpf stat "$(echo $pids | cut -d' ' -f1)" --dir "$dir" | grep -E "^policy|program|applied" | sed 's/^/   | /'
	else
		fail "$name: ps/stat never showed $n ranks running the policy (see $OUT/$name.*)"
	fi
}

echo "== single node: torchrun --nproc-per-node $NPROC"
D1=/dev/shm/ncclbpf-$(id -u)/quickstart1
ncclbpf run --dir "$D1" --policy "$P/size_aware.o" -- \
	torchrun --nproc-per-node "$NPROC" scripts/quickstart_allreduce.py --seconds 30 $ONE_GPU \
	>"$OUT/single.log" 2>&1 &
job=$!
watch_job single "$D1" "$NPROC" "$job"
wait $job || fail "single-node job exit $?: $(tail -5 "$OUT/single.log")"
grep -q "all results correct" "$OUT/single.log" || fail "single-node job: no correct end"
grep "quickstart:" "$OUT/single.log" | sed -n '1p;$p' | sed 's/^/   /'

echo "== two nodes on this host: torchrun --nnodes 2, one --dir"
D2=$OUT/shared-dir
mkdir -p "$D2" && chmod 700 "$D2"
PER=$((NPROC / 2 > 0 ? NPROC / 2 : 1))
for r in 0 1; do
	ncclbpf run --dir "$D2" --policy "$P/size_aware.o" -- \
		torchrun --nnodes 2 --node-rank $r --nproc-per-node $PER --rdzv-backend c10d \
		--rdzv-endpoint 127.0.0.1:29517 scripts/quickstart_allreduce.py --seconds 30 --one-gpu \
		>"$OUT/node$r.log" 2>&1 &
	eval "node$r=\$!"
done
watch_job twonodes "$D2" $((2 * PER)) "$node0"
wait "$node0" || fail "node 0 exit $?: $(tail -5 "$OUT/node0.log")"
wait "$node1" || fail "node 1 exit $?: $(tail -5 "$OUT/node1.log")"
grep -q "all results correct" "$OUT/node0.log" || fail "two-node job: no correct end"
grep "quickstart:" "$OUT/node0.log" | sed -n '1p;$p' | sed 's/^/   /'
[ $fails -eq 0 ] && echo "gpu-quickstart: OK" || echo "gpu-quickstart: $fails failure(s)"
exit $((fails > 0))
