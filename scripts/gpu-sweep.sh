#!/usr/bin/env bash
# Configuration sweep for `ncclbpf tune`: for every rank count and collective, NCCL's default and
# every forced ALGO x PROTO x CHANNELS configuration over a size range, one ncclbpf-gpubench CSV
# per run (OUTDIR/runs/*.csv) and the merged OUTDIR/sweep.csv that `ncclbpf tune` reads.
# Runs without the plugin (NCCL_TUNER_PLUGIN=none); forced settings go through NCCL_ALGO,
# NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS.
#
# Usage: scripts/gpu-sweep.sh OUTDIR
# Settings (environment):
#   RANKS_LIST "2 4"    COLLS "allreduce allgather reducescatter"   ALGOS "ring tree" (+ pat)
#   PROTOS "ll ll128 simple"   CHANNELS "4 2 8 1" (priority order: the budget drops the last)
#   MINB 8   MAXB 256M   FACTOR 2   LL_MAXB 4M (LL is forced only up to this size)
#   ITERS 50 (at most, per size)   WARMUP 3   TARGET_MS 20 (per size; big sizes run fewer
#   iterations, at least 2)   CHECK 0 (1: verify results; slower at big sizes)
#   BUDGET_S 330 (whole script, build excluded)   RUN_TIMEOUT_S 90   MPS 1   SKIP_BUILD 0
# Invalid combinations are not run: tree only for allreduce, pat only for allgather and
# reducescatter with simple (pat with CHECK=1 fails: the wrong-count exchange is an allreduce). The budget: the default runs go first and time the machine; the
# forced runs are then planned at that cost (x1.5); while the plan exceeds the budget the
# lowest-priority channel count is dropped, then the largest size for forced runs is divided by
# 4 (not below 1M); each run's --timeout is what is left, and a run that no longer fits is
# skipped (listed in OUTDIR/skipped.txt).
set -uo pipefail
. "$(dirname "$0")/gpu-usage.sh"
OUT=${1:?usage: gpu-sweep.sh OUTDIR}
# shellcheck source=scripts/gpu-common.sh
. "$(dirname "$0")/gpu-common.sh"
mkdir -p "$OUT/runs"
OUT=$(cd "$OUT" && pwd)
RUNDIR=$OUT/runs
: >"$RUNDIR/runs.log"
: >"$OUT/skipped.txt"

RANKS_LIST=${RANKS_LIST:-"2 4"}
COLLS=${COLLS:-"allreduce allgather reducescatter"}
ALGOS=${ALGOS:-"ring tree"}
PROTOS=${PROTOS:-"ll ll128 simple"}
CHANNELS=${CHANNELS:-"4 2 8 1"}
MINB=${MINB:-8} MAXB=${MAXB:-256M} FACTOR=${FACTOR:-2} LL_MAXB=${LL_MAXB:-4M}
ITERS=${ITERS:-50} WARMUP=${WARMUP:-3} TARGET_MS=${TARGET_MS:-20} CHECK=${CHECK:-0}
BUDGET_S=${BUDGET_S:-330} RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-90}

if [ "${SKIP_BUILD:-0}" != 1 ]; then gpu_build "$OUT" || exit 1; fi
budget_init "$BUDGET_S"
mps_start

bytes_of() { # 8, 4K, 256M -> bytes
	local v=$1
	case $v in
	*[kK]) echo $((${v%?} << 10)) ;; *[mM]) echo $((${v%?} << 20)) ;;
	*[gG]) echo $((${v%?} << 30)) ;; *) echo "$v" ;;
	esac
}
MAXB_B=$(bytes_of "$MAXB")
LL_MAXB_B=$(bytes_of "$LL_MAXB")
COMMON=(-b "$MINB" -f "$FACTOR" -i "$ITERS" -w "$WARMUP" -r 1 --target-ms "$TARGET_MS" --no-plugin)
[ "$CHECK" = 1 ] || COMMON+=(--no-check)

valid_colls() { # ALGO PROTO -> the collectives of COLLS it applies to, comma-separated
	local a=$1 p=$2 c out=""
	for c in $COLLS; do
		case $a in
		tree) [ "$c" = allreduce ] || continue ;;
		pat) [ "$c" != allreduce ] && [ "$p" = simple ] || continue ;;
		esac
		out=${out:+$out,}$c
	done
	echo "$out"
}

# 1. NCCL's default per rank count (also times the machine).
colls_csv=$(echo $COLLS | tr ' ' ',') # word-split: no stray commas
declare -A DEFAULT_WALL
for n in $RANKS_LIST; do
	gb_run "n${n}_default" "$RUN_TIMEOUT_S" -n "$n" -o "$colls_csv" -e "$MAXB" \
		--csv "$RUNDIR/n${n}_default.csv" "${COMMON[@]}"
	DEFAULT_WALL[$n]=$GB_LAST_WALL
done
if ! grep -q "_default rc=0" "$RUNDIR/runs.log"; then
	log "every default run failed (see $RUNDIR/*.err): not sweeping"
	exit 1
fi

# 2. Plan the forced runs: channel count (priority order) x rank count x algorithm x protocol.
plan() { # prints "ranks algo proto ch colls maxbytes"
	local ch n a p cs mb
	for ch in $CHANNELS; do
		for n in $RANKS_LIST; do
			for a in $ALGOS; do
				for p in $PROTOS; do
					cs=$(valid_colls "$a" "$p")
					[ -n "$cs" ] || continue
					mb=$FORCED_MAXB
					[ "$p" = ll ] && [ "$LL_MAXB_B" -lt "$mb" ] && mb=$LL_MAXB_B
					echo "$n $a $p $ch $cs $mb"
				done
			done
		done
	done
}
estimate() { # plan lines on stdin -> projected seconds (default wall x 1.5 x share of collectives x size share)
	local ncolls
	ncolls=$(echo "$COLLS" | wc -w)
	awk -v walls="$(for n in "${!DEFAULT_WALL[@]}"; do echo -n "$n=${DEFAULT_WALL[$n]} "; done)" \
		-v ncolls="$ncolls" -v maxb="$MAXB_B" '
		BEGIN { k = split(walls, w, " "); for (i = 1; i <= k; i++) { split(w[i], kv, "="); wall[kv[1]] = kv[2] } }
		{ c = split($5, x, ","); share = $6 >= maxb ? 1 : ($6 / maxb) ^ 0.5
		  t += 1.5 * wall[$1] * c / ncolls * (share < 0.25 ? 0.25 : share) }
		END { printf "%d\n", t + 0.5 }'
}
FORCED_MAXB=$MAXB_B
while :; do
	need=$(plan | estimate)
	left=$(budget_left)
	nch=$(echo "$CHANNELS" | wc -w)
	[ "$need" -le "$left" ] && break
	if [ "$nch" -gt 1 ]; then
		log "budget: ~${need}s needed, ${left}s left: dropping channels ${CHANNELS##* }"
		CHANNELS=${CHANNELS% *}
	elif [ "$FORCED_MAXB" -gt $((1 << 20)) ]; then
		FORCED_MAXB=$((FORCED_MAXB / 4))
		log "budget: ~${need}s needed, ${left}s left: forced runs up to $FORCED_MAXB bytes"
	else
		log "budget: ~${need}s needed, ${left}s left: running what fits"
		break
	fi
done
log "plan: $(plan | wc -l) forced runs, channels '$CHANNELS', forced sizes up to $FORCED_MAXB, ~${need}s"
echo "channels=$CHANNELS forced_maxb=$FORCED_MAXB target_ms=$TARGET_MS iters=$ITERS" >"$OUT/plan.txt"
plan >>"$OUT/plan.txt"

# 3. Run them; a run gets the budget that is left (at most RUN_TIMEOUT_S).
failed=0
while read -r n a p ch cs mb; do
	name="n${n}_${a}_${p}_${ch}"
	left=$(budget_left)
	t=$RUN_TIMEOUT_S
	[ "$left" -lt "$t" ] && t=$left
	if [ "$t" -lt 5 ]; then
		echo "$name (budget spent)" >>"$OUT/skipped.txt"
		continue
	fi
	gb_run "$name" "$t" -n "$n" -o "$cs" -e "$mb" --algo "$a" --proto "$p" --channels "$ch" \
		--csv "$RUNDIR/$name.csv" "${COMMON[@]}" || failed=$((failed + 1))
done < <(plan)

# 4. Merge (complete rows of every run, failed runs included: their rows were measured).
# shellcheck disable=SC2086
$REPORT merge -o "$OUT/sweep.csv" "$RUNDIR"/*.csv
log "sweep: $(($(wc -l <"$OUT/sweep.csv") - 1)) rows in $OUT/sweep.csv; $failed run(s) failed;" \
	"$(wc -l <"$OUT/skipped.txt") skipped; $(budget_left)s of the budget left"
if [ -r "$POLICY_DIR/tuned_table.o" ]; then tune_policy "$OUT/sweep.csv" "$OUT/tuned.o" "$OUT/tune.txt"; fi
exit 0
