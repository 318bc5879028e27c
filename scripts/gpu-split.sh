#!/usr/bin/env bash
# GPU run of per-communicator decision state (docs/writing-policies.md, "Per-communicator
# maps"): a job where every rank belongs to two communicators, the whole job and a half
# (ncclCommSplit by rank parity: ncclbpf-gpubench --split), whose calls interleave on each rank
# as its GPU work dictates. The policy, policies/explore_protocols.c, counts each
# communicator's calls per (collective, size bucket) in a per-communicator map and tries the
# protocols in turn. Checks: every result is exact (gpubench's #wrong, its exit status), and per
# communicator every rank made the same calls with the same decisions in the same order
# (gpu_e2e_check.py split on the ranks' traces, which also wants the decisions to vary). The
# baseline is the same job through the same library without a policy (NCCL's own decisions,
# the same transports): it must be exact too. A run without the plugin is printed for
# information. The ranks share the GPU WITHOUT CUDA MPS unless MPS=1: under MPS, NCCL 2.28.9
# gave wrong results at 1-4 MiB in all three configurations, its own transports without this
# project included, and none without MPS (docs/gpu-results.md, 2026-12-04 afternoon), so a
# correctness check cannot run under MPS. Policy objects are built beforehand with clang
# (POLICY_DIR).
# Usage: scripts/gpu-split.sh [OUTDIR]     (RANKS=4, MAXB=16M, ITERS=5; SKIP_BUILD=1 reuses
# BUILD_DIR)
set -uo pipefail
. "$(dirname "$0")/gpu-usage.sh"
. "$(dirname "$0")/gpu-common.sh"
OUT=${1:-/tmp/gpu-split}
RUNDIR=$OUT
mkdir -p "$OUT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
	gpu_build "$OUT" || exit 1
fi
EXPLORE=$(need_policy explore_protocols) || exit 1
MPS=${MPS:-0} mps_start
N=${RANKS:-4}
ARGS=(-n "$N" --split -o allreduce,allgather -b 8 -e "${MAXB:-16M}" -i "${ITERS:-5}" -w 2)
status=0
gb_run nopolicy 600 "${ARGS[@]}" --plugin "$PLUGIN" || status=1
mkdir -p "$OUT/explore"
GPUBENCH_TRACE_DIR="$OUT/explore" gb_run explore 600 "${ARGS[@]}" --plugin "$PLUGIN" \
	--policy "$EXPLORE" || status=1
gb_run noplugin 600 "${ARGS[@]}" --no-plugin
grep -vE "^#.*iters" "$OUT/explore.txt" | tail -40
wrong_of() { awk '!/^#/ && NF > 10 { s += $11 } END { print s + 0 }' "$OUT/$1.txt"; }
for run in nopolicy explore; do
	wrong=$(wrong_of $run)
	rows=$(grep -cvE "^#|^$" "$OUT/$run.txt")
	echo "$run: $rows rows, $wrong wrong elements over both communicators"
	[ "$rows" -gt 0 ] && [ "$wrong" -eq 0 ] || status=1
done
echo "noplugin (information only, NCCL's own transports): $(wrong_of noplugin) wrong elements"
echo "== per communicator, identical decisions on every rank"
python3 "$GPU_ROOT/scripts/gpu_e2e_check.py" split "$OUT/explore" || status=1
[ $status -eq 0 ] && echo "gpu-split: OK" || echo "gpu-split: FAILED"
exit $status
