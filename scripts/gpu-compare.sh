#!/usr/bin/env bash
# Tuned policy vs NCCL's default vs the sweep's oracle, in one run: `ncclbpf tune` turns
# SWEEP.csv into OUTDIR/tuned.o; then repetitions alternate (order reversed every other
# repetition) NCCL's default (no plugin), the plugin with tuned.o, and each forced configuration
# that the sweep found fastest somewhere (over the sizes where it was), all with the same sizes.
# OUTDIR/compare.md: policy/default and policy/oracle per size with their spread
# (scripts/gpubench_report.py compare). One traced run first records what the policy decided
# (OUTDIR/decisions.csv: the table's "policy used" column); timed runs are not traced.
#
# Usage: scripts/gpu-compare.sh SWEEP.csv OUTDIR
# Settings: RANKS_LIST (default: the sweep's), COLLS (default: the sweep's), MINB 8, MAXB
#   (default: the sweep's largest), FACTOR 2, ITERS 50, WARMUP 3, TARGET_MS 20, REPS 5 (at
#   most: a repetition starts only if the last one would fit again), BUDGET_S 360 (build and
#   tune excluded; a run that no longer fits is skipped: OUTDIR/skipped.txt), RUN_TIMEOUT_S 90,
#   MARGIN 0.02 (see tune_policy in gpu-common.sh), MPS 1, SKIP_BUILD 0.
set -uo pipefail
. "$(dirname "$0")/gpu-usage.sh"
SWEEP=${1:?usage: gpu-compare.sh SWEEP.csv OUTDIR}
OUT=${2:?usage: gpu-compare.sh SWEEP.csv OUTDIR}
# shellcheck source=scripts/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SWEEP=$(cd "$(dirname "$SWEEP")" && pwd)/$(basename "$SWEEP")
RUNDIR=$OUT
: >"$OUT/runs.log"
: >"$OUT/skipped.txt"

col() { # values of one CSV column of the sweep, sorted unique
	awk -F, -v name="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		c && $c != "" { print $c }' "$SWEEP" | sort -u
}
RANKS_LIST=${RANKS_LIST:-$(col ranks | sort -n | tr '\n' ' ')}
COLLS=${COLLS:-$(col coll | tr '\n' ' ')}
MINB=${MINB:-8} FACTOR=${FACTOR:-2}
MAXB=${MAXB:-$(col bytes | sort -n | tail -1)}
ITERS=${ITERS:-50} WARMUP=${WARMUP:-3} TARGET_MS=${TARGET_MS:-20} REPS=${REPS:-5}
BUDGET_S=${BUDGET_S:-360} RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-90}
[ -n "$RANKS_LIST" ] && [ -n "$COLLS" ] && [ -n "$MAXB" ] ||
	{ log "$SWEEP: no rows (ranks/coll/bytes)"; exit 1; }

if [ "${SKIP_BUILD:-0}" != 1 ]; then gpu_build "$OUT" || exit 1; fi
tune_policy "$SWEEP" "$OUT/tuned.o" "$OUT/tune.txt" || exit 1
"$NCCLBPF" verify "$OUT/tuned.o" >>"$OUT/tune.txt" 2>&1 || { log "tuned.o does not verify"; exit 1; }
$REPORT oracle "$SWEEP" >"$OUT/oracle-plan.txt" || exit 1
budget_init "$BUDGET_S"
mps_start

colls_csv=$(echo $COLLS | tr ' ' ',') # word-split: no stray commas
COMMON=(-b "$MINB" -f "$FACTOR" -i "$ITERS" -w "$WARMUP" -r 1 --target-ms "$TARGET_MS" --no-check)

# What the policy decided, per size (traced; not timed).
for n in $RANKS_LIST; do
	mkdir -p "$OUT/trace-n$n"
	GPUBENCH_TRACE_DIR=$OUT/trace-n$n gb_run "decisions_n$n" "$RUN_TIMEOUT_S" -n "$n" \
		-o "$colls_csv" -b "$MINB" -e "$MAXB" -f "$FACTOR" -i 2 -w 1 --no-check \
		--plugin "$PLUGIN" --policy "$OUT/tuned.o" --csv "$OUT/decisions_n$n.csv"
done
$REPORT merge -o "$OUT/decisions.csv" "$OUT"/decisions_n*.csv 2>/dev/null

runs() { # one repetition's runs: "name args..."
	local n
	for n in $RANKS_LIST; do
		echo "default_n$n -n $n -o $colls_csv -e $MAXB --no-plugin"
		echo "tuned_n$n -n $n -o $colls_csv -e $MAXB --plugin $PLUGIN --policy $OUT/tuned.o"
		awk -v n="$n" '$1 == n' "$OUT/oracle-plan.txt" | while read -r _ cfg cs lo hi; do
			IFS=/ read -r a p ch <<<"$cfg"
			local f=""
			[ "$a" != - ] && f="$f --algo $a"
			[ "$p" != - ] && f="$f --proto $p"
			[ "$ch" != - ] && f="$f --channels $ch"
			echo "oracle_n${n}_${a}_${p}_${ch} -n $n -o $cs -b $lo -e $hi --no-plugin$f"
		done
	done
}
runs >"$OUT/runs.txt"
run_reps "$REPS" "$OUT/runs.txt"

dec=()
[ "$(wc -l <"$OUT/decisions.csv" 2>/dev/null || echo 0)" -gt 1 ] && dec=(--decisions "$OUT/decisions.csv")
$REPORT compare --sweep "$SWEEP" --policy "policy:tuned.o" "${dec[@]}" \
	"$OUT"/rep*/*.csv >"$OUT/compare.md" || exit 1
cat "$OUT/compare.md"
