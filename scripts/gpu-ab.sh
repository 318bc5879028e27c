#!/usr/bin/env bash
# In-job A/B of two policy bundles on a GPU host: one ncclbpf-gpubench job whose blocks of
# collectives alternate between BASE and TEST, switched by hot reload inside the job, so both are
# measured under the same host state (job-to-job comparisons spread by several percent). Prints
# the median paired ratio TEST/BASE per size with its 95 % confidence interval ("# ab" lines).
#
# Two ranks run as processes on GPU 0 with distinct NCCL_HOSTIDs under CUDA MPS. With --net (the
# default) every byte goes through our net plugin's transport (P2P and SHM off, loopback,
# NCCL_NET=NCCLbpf, 2 channels): the set-up that measures the net hooks' cost. With --tuner the
# library is loaded as tuner and profiler over NCCL's own transports instead.
#
# Usage: scripts/gpu-ab.sh [--net|--tuner] [--iters N] [--pairs N] [--env VAR=VALUE]...
#                          SIZES BASE.o TEST.o [OUTDIR]
#   SIZES: one size (64K) or MIN-MAX (1K-64K, by factors of 4). BASE.o/TEST.o: policy objects
#   built beforehand with clang (the GPU host has none). --env adds a setting to both (e.g.
#   NCCLBPF_NET_TIME_EVERY=1). Defaults: 300 iterations per block, 300 pairs of blocks.
# Example (the net hook cost figures of docs/gpu-results.md):
#   scripts/gpu-ab.sh 64K gpu-carry/policies/noop.o gpu-carry/policies/net_counters.o
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"

mode=net iters=300 pairs=300 extra=()
usage() { sed -n '/^# Usage/,/^#   NCCLBPF_NET_TIME_EVERY/p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--net) mode=net ;;
	--tuner) mode=tuner ;;
	--iters) iters=$2; shift ;;
	--pairs) pairs=$2; shift ;;
	--env) extra+=("$2"); shift ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "gpu-ab: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 3 ] || { usage >&2; exit 2; }
sizes=$1 base=$2 test=$3
OUTDIR=${4:-/tmp/gpu-ab}
for f in "$base" "$test"; do
	[ -r "$f" ] || { echo "gpu-ab: $f: cannot read" >&2; exit 1; }
done
mkdir -p "$OUTDIR"
RUNDIR=$(cd "$OUTDIR" && pwd)

if [ "${SKIP_BUILD:-0}" != 1 ]; then
	gpu_build "$RUNDIR" || exit 1
fi
mps_start

case $mode in
net) settings=(NCCL_SOCKET_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
	NCCL_TUNER_PLUGIN=none NCCL_PROFILER_PLUGIN=none NCCL_ENV_PLUGIN=none
	NCCL_NET_PLUGIN="$PLUGIN" NCCL_NET=NCCLbpf NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2) ;;
tuner) settings=(NCCL_TUNER_PLUGIN="$PLUGIN" NCCL_PROFILER_PLUGIN="$PLUGIN") ;;
esac
lo=${sizes%-*} hi=${sizes#*-}
log "A/B ($mode): $sizes, $iters iterations per block, $pairs pairs: $(basename "$base") vs $(basename "$test")"
timeout 580 env "${settings[@]}" "${extra[@]}" "$BENCH" -n 2 -b "$lo" -e "$hi" -f 4 -i "$iters" -w 3 \
	-r "$pairs" --ab "$base,$test" >"$RUNDIR/ab.txt" 2>&1
rc=$?
grep "^# ab\|FAIL" "$RUNDIR/ab.txt"
[ $rc -eq 0 ] || { log "ncclbpf-gpubench failed (rc=$rc): $(tail -3 "$RUNDIR/ab.txt" | tr '\n' ' ')"; }
exit $rc
