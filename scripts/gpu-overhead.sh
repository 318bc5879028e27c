#!/usr/bin/env bash
# Plugin overhead on real NCCL: no plugin vs the plugin with policies/noop.o vs the plugin with
# policies/size_aware.o, small sizes (8 B..256 KiB: where a tuner call could show) and large
# sizes (1 MiB..MAXB), interleaved repetitions (order reversed every other repetition).
# OUTDIR/overhead.md: per size, each configuration minus no-plugin (mean ± sd, [min…max],
# relative), paired per repetition (scripts/gpubench_report.py overhead).
#
# Usage: scripts/gpu-overhead.sh OUTDIR
# Settings: RANKS 2, COLLS "allreduce", SMALL_MAXB 256K, LARGE_MINB 1M, MAXB 64M, ITERS 200
#   (at most, per size), WARMUP 5, TARGET_MS 20, REPS 10 (at most: a repetition starts only if
#   the last one would fit again), BUDGET_S 240 (build excluded; a run that no longer fits is
#   skipped: OUTDIR/skipped.txt), RUN_TIMEOUT_S 60, MPS 1, SKIP_BUILD 0.
set -uo pipefail
. "$(dirname "$0")/gpu-usage.sh"
OUT=${1:?usage: gpu-overhead.sh OUTDIR}
# shellcheck source=scripts/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
RUNDIR=$OUT
: >"$OUT/runs.log"
: >"$OUT/skipped.txt"
RANKS=${RANKS:-2} COLLS=${COLLS:-allreduce}
SMALL_MAXB=${SMALL_MAXB:-256K} LARGE_MINB=${LARGE_MINB:-1M} MAXB=${MAXB:-64M}
ITERS=${ITERS:-200} WARMUP=${WARMUP:-5} TARGET_MS=${TARGET_MS:-20} REPS=${REPS:-10}
BUDGET_S=${BUDGET_S:-240} RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-60}

if [ "${SKIP_BUILD:-0}" != 1 ]; then gpu_build "$OUT" || exit 1; fi
NOOP=$(need_policy noop) || exit 1
SIZE_AWARE=$(need_policy size_aware) || exit 1
budget_init "$BUDGET_S"
mps_start

colls_csv=$(echo $COLLS | tr ' ' ',') # word-split: no stray commas
COMMON=(-n "$RANKS" -o "$colls_csv" -f 2 -i "$ITERS" -w "$WARMUP" -r 1 --target-ms "$TARGET_MS" --no-check)
cat >"$OUT/runs.txt" <<EOF
none_small -b 8 -e $SMALL_MAXB --no-plugin
noop_small -b 8 -e $SMALL_MAXB --plugin $PLUGIN --policy $NOOP
size_aware_small -b 8 -e $SMALL_MAXB --plugin $PLUGIN --policy $SIZE_AWARE
none_large -b $LARGE_MINB -e $MAXB --no-plugin
noop_large -b $LARGE_MINB -e $MAXB --plugin $PLUGIN --policy $NOOP
size_aware_large -b $LARGE_MINB -e $MAXB --plugin $PLUGIN --policy $SIZE_AWARE
EOF
run_reps "$REPS" "$OUT/runs.txt"
$REPORT overhead --baseline default "$OUT"/rep*/*.csv >"$OUT/overhead.md" || exit 1
cat "$OUT/overhead.md"
