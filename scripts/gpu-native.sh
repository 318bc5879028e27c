#!/usr/bin/env bash
# Our library minus native plugins making the same decisions, on a GPU host, both loaded the way
# NCCL loads them:
# (1) OUTDIR/bench.txt (and bench.json): `ncclbpf bench` on the host's CPU. Each shipped policy
#     in our library against its native C plugin (lib/ncclbpf-bench/), called through the
#     exported ncclTunerPlugin_v5 / ncclProfiler_v5 tables in interleaved rounds in one process:
#     ours minus native in ns per call (tuner) or per event (profiler), median [p25, p75].
# (2) OUTDIR/nccl.md: real NCCL through ncclbpf-gpubench, RANKS ranks, small sizes (where a
#     per-call cost could show). For each case, jobs with our library (NCCL_TUNER_PLUGIN, for the
#     profiler case also NCCL_PROFILER_PLUGIN, and the policy) and jobs with the native plugin
#     alternate, the order reversed every other repetition; per size, ours minus native in us per
#     operation, paired per repetition (scripts/gpubench_report.py overhead). Before that, each
#     case runs once per side with NCCL's TUNING log on, and the algorithm, protocol and channels
#     NCCL took at every size are compared (OUTDIR/decisions.md, also at the end of nccl.md); a
#     case whose sides decide differently is not timed. Cases: noop,
#     size_aware (tuner) and profiler_latency (profiler; the native side loads the native no-op
#     tuner beside the native profiler). Job-to-job spread on a shared host is several percent:
#     this part shows that NCCL runs both the same, (1) resolves the nanoseconds.
#     On a shared (virtual) host a CPU whose physical core another tenant keeps busy runs every
#     plugin slower, and ours, which does more per call, about twice as slow against 1.3x for
#     the native no-op (docs/gpu-results.md, 2026-12-06): with --cpu auto (the default) the
#     bench runs pinned to the CPU whose native no-op call is cheapest in a short probe of each
#     CPU (OUTDIR/cpus.txt), and bench.txt says which, with that CPU's figure before and after.
# (3) With --before LIB: (1) runs LIB (another build of libnccl-ncclbpf.so, e.g. of an older
#     commit, built on a development machine and carried) as one more interleaved side with
#     each policy (`ncclbpf bench --before`): bench.txt's last column is ours minus LIB per
#     round, a before/after on the same host in one process (absolute figures differ between
#     hosts, and between states of one host). Build one with: git worktree add /tmp/old
#     REV && cmake -S /tmp/old -B /tmp/old/b -DNCCLBPF_BUILD_POLICIES=OFF -DBUILD_TESTING=OFF &&
#     cmake --build /tmp/old/b --target nccl_ncclbpf  (then LIB is /tmp/old/b/lib/libnccl-ncclbpf.so).
#
# Usage: scripts/gpu-native.sh [--rounds N] [--reps N] [--no-nccl] [--before LIB] [--cpu C] OUTDIR
#   --rounds N  rounds of `ncclbpf bench` (default 41); --reps N repetitions of (2) (default 6);
#   --no-nccl   only (1) (and (3)); --before LIB  also (3);
#   --cpu C     where (1) and (3) run: auto (the quietest CPU, default), a CPU number, or none.
# Settings: POLICY_DIR (gpu-carry/policies: noop.o size_aware.o profiler_latency.o, and
#   table_tuner.o two_lookups.o when present), RANKS 2, MAXB 64K, ITERS 200, WARMUP 5,
#   TARGET_MS 20, BUDGET_S 300 for (2) (build excluded), RUN_TIMEOUT_S 60, MPS 1, SKIP_BUILD 0.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"

rounds=41 reps=6 nccl=1 before='' cpu=auto
usage() { sed -n '/^# Usage/,/^#   TARGET_MS/p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=${2:-}; shift ;;
	--reps) reps=${2:-}; shift ;;
	--no-nccl) nccl=0 ;;
	--before) before=${2:-}; shift ;;
	--cpu) cpu=${2:-}; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "gpu-native: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 1 ] || { usage >&2; exit 2; }
for n in "$rounds" "$reps"; do
	case $n in '' | *[!0-9]*) echo "gpu-native: not a count: '$n'" >&2; exit 2 ;; esac
done
case $cpu in
auto | none) ;;
'' | *[!0-9]*) echo "gpu-native: --cpu: want auto, none or a CPU number, not '$cpu'" >&2; exit 2 ;;
esac
# Everything the run needs is checked before anything is built or started.
if [ -n "$before" ] && [ ! -r "$before" ]; then
	echo "gpu-native: --before $before: cannot read" >&2
	exit 1
fi
policies=()
for p in noop size_aware profiler_latency; do
	q=$(need_policy "$p") || exit 1
	policies+=("$q")
done
for p in table_tuner two_lookups; do
	[ -r "$POLICY_DIR/$p.o" ] && policies+=("$POLICY_DIR/$p.o")
done
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
if [ "${SKIP_BUILD:-0}" != 1 ]; then gpu_build "$OUT" || exit 1; fi
NATIVE_DIR=$BUILD_DIR/lib/ncclbpf-bench

# (1) The CPU cost per call, interleaved in one process.
native_noop_ns() { # CPU: the native no-op plugin's ns per call in a short bench on that CPU
	taskset -c "$1" "$NCCLBPF" bench --reloads 0 --rounds 3 --calls 50000 --plugin "$PLUGIN" \
		"$POLICY_DIR/noop.o" 2>/dev/null | awk '$1 == "noop" { print $3; exit }'
}
pin=()
if [ "$cpu" != none ] && ! command -v taskset >/dev/null; then
	log "taskset not found: the bench runs unpinned"
	cpu=none
fi
if [ "$cpu" = auto ]; then
	: >"$OUT/cpus.txt"
	for c in $(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:64])'); do
		echo "$c $(native_noop_ns "$c")" >>"$OUT/cpus.txt"
	done
	cpu=$(awk 'NF == 2 { print $2, $1 }' "$OUT/cpus.txt" | sort -n | awk 'NR == 1 { print $2 }')
	[ -n "$cpu" ] || { log "no CPU probe succeeded (OUTDIR/cpus.txt): the bench runs unpinned"; cpu=none; }
fi
if [ "$cpu" != none ]; then
	pin=(taskset -c "$cpu")
	pin_before=$(native_noop_ns "$cpu")
fi
log "ncclbpf bench --rounds $rounds${pin[*]:+ (${pin[*]})}: ${policies[*]##*/}"
# (3) With --before: the other build of our library as one more side of the same rounds.
bargs=(--rounds "$rounds" --plugin "$PLUGIN")
[ -n "$before" ] && bargs+=(--before "$before")
"${pin[@]}" "$NCCLBPF" bench "${bargs[@]}" "${policies[@]}" >"$OUT/bench.txt" 2>&1 ||
	{ log "ncclbpf bench failed: $(tail -3 "$OUT/bench.txt" | tr '\n' ' ')"; exit 1; }
"${pin[@]}" "$NCCLBPF" bench --json "${bargs[@]}" "${policies[@]}" >"$OUT/bench.json" 2>/dev/null ||
	log "ncclbpf bench --json failed (bench.txt has the figures)"
if [ "$cpu" != none ]; then
	note="# pinned to CPU $cpu: native no-op ${pin_before:-?} ns per call before, $(native_noop_ns "$cpu") ns after"
	[ -s "$OUT/cpus.txt" ] && note="$note (the cheapest of $(wc -l <"$OUT/cpus.txt") CPUs probed, OUTDIR/cpus.txt)"
	{ echo "$note"; cat "$OUT/bench.txt"; } >"$OUT/bench.txt.tmp" && mv "$OUT/bench.txt.tmp" "$OUT/bench.txt"
fi
cat "$OUT/bench.txt"
[ "$nccl" = 1 ] || exit 0

# (2) Real NCCL: case, our side's extra settings, the native side's.
RANKS=${RANKS:-2} MAXB=${MAXB:-64K} ITERS=${ITERS:-200} WARMUP=${WARMUP:-5}
TARGET_MS=${TARGET_MS:-20} BUDGET_S=${BUDGET_S:-300} RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-60}
COMMON=(-n "$RANKS" -o allreduce -f 2 -b 8 -e "$MAXB" -i "$ITERS" -w "$WARMUP" -r 1
	--target-ms "$TARGET_MS" --no-check)
cases=(noop size_aware profiler_latency)
ours_args() { echo "--plugin $PLUGIN --policy $POLICY_DIR/$1.o"; }
native_args() {
	case $1 in
	profiler_latency) echo "--plugin $NATIVE_DIR/libnccl-native-noop.so" ;;
	*) echo "--plugin $NATIVE_DIR/libnccl-native-$1.so" ;;
	esac
}
profiler_env() { # case side: NCCL_PROFILER_PLUGIN for the profiler case
	[ "$1" = profiler_latency ] || return 0
	if [ "$2" = ours ]; then echo "NCCL_PROFILER_PLUGIN=$PLUGIN"; else
		echo "NCCL_PROFILER_PLUGIN=$NATIVE_DIR/libnccl-native-profiler_latency.so"; fi
}
for c in "${cases[@]}"; do
	for f in "$NATIVE_DIR/libnccl-native-$c.so" "$NATIVE_DIR/libnccl-native-noop.so"; do
		[ -e "$f" ] || { log "not built: $f"; exit 1; }
	done
done
budget_init "$BUDGET_S"
mps_start
: >"$OUT/skipped.txt"

# Before any timing, the decisions NCCL takes with each side, from its own TUNING log (one short
# run per side, every size; the same decision logged twice counts once): a case whose sides differ is left out of the timing (a difference
# against a plugin that decides otherwise would measure nothing). OUTDIR/decisions.md.
nccl_choices() { # case side: "AllReduce: N Bytes -> Algo A proto P channel{Lo..Hi}={..}" lines
	local c=$1 side=$2 args penv
	args=$(${side}_args "$c")
	penv=$(profiler_env "$c" "$side")
	# shellcheck disable=SC2086 # args are words by construction
	(if [ -n "$penv" ]; then export "${penv?}"; fi
		export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING
		gb_run "$side-choices" "$RUN_TIMEOUT_S" -n "$RANKS" -o allreduce -f 2 -b 8 -e "$MAXB" \
			-i 1 -w 1 -r 1 --no-check $args >/dev/null) || return 1
	cat "$RUNDIR/$side-choices.txt" "$RUNDIR/$side-choices.err" |
		grep -oE '[A-Za-z]+: [0-9]+ Bytes -> Algo [A-Za-z_]+ proto [A-Za-z0-9_]+ channel\{Lo\.\.Hi\}=\{[0-9.]+\}' |
		sort -u
}
timed=()
{
	echo "## Decisions NCCL takes with our library and with the native plugin ($RANKS ranks)"
	echo
	for c in "${cases[@]}"; do
		RUNDIR=$OUT/$c/choices
		mkdir -p "$RUNDIR"
		if ! { nccl_choices "$c" ours >"$RUNDIR/ours.txt" &&
			nccl_choices "$c" native >"$RUNDIR/native.txt"; } || [ ! -s "$RUNDIR/ours.txt" ]; then
			echo "- $c: no decisions logged (see $RUNDIR); timed anyway"
			timed+=("$c")
		elif diff "$RUNDIR/ours.txt" "$RUNDIR/native.txt" >"$RUNDIR/diff.txt"; then
			echo "- $c: identical at every size ($(wc -l <"$RUNDIR/ours.txt") decisions)"
			timed+=("$c")
		else
			echo "- $c: **the sides decide differently** (not timed; < ours, > native):"
			sed 's/^/      /' "$RUNDIR/diff.txt"
		fi
	done
} >"$OUT/decisions.md"
cat "$OUT/decisions.md"
cases=("${timed[@]}")
rep_wall=""
for rep in $(seq 1 "$reps"); do
	left=$(budget_left)
	if [ -n "$rep_wall" ] && [ "$left" -lt "$rep_wall" ]; then
		log "budget: ${left}s left, a repetition takes ~${rep_wall}s: stopping after $((rep - 1))"
		break
	fi
	t0=$(date +%s)
	sides=(ours native)
	[ $((rep % 2)) -eq 0 ] && sides=(native ours)
	for c in "${cases[@]}"; do
		RUNDIR=$OUT/$c/rep$rep
		mkdir -p "$RUNDIR"
		for side in "${sides[@]}"; do
			t=$(budget_left)
			if [ "$t" -lt 5 ]; then
				echo "rep$rep $c $side (budget spent)" >>"$OUT/skipped.txt"
				continue
			fi
			[ "$t" -gt "$RUN_TIMEOUT_S" ] && t=$RUN_TIMEOUT_S
			args=$(${side}_args "$c")
			penv=$(profiler_env "$c" "$side")
			# shellcheck disable=SC2086 # args are words by construction
			(if [ -n "$penv" ]; then export "${penv?}"; fi
				gb_run "$side" "$t" "${COMMON[@]}" $args --csv "$RUNDIR/$side.csv") ||
				log "rep$rep $c $side: ncclbpf-gpubench failed (see $RUNDIR/$side.err)"
			# The native side has no policy: gpubench labels it "default".
			[ "$side" = native ] && [ -f "$RUNDIR/native.csv" ] &&
				sed -i 's/,default,/,native,/' "$RUNDIR/native.csv"
		done
	done
	rep_wall=$(($(date +%s) - t0))
	log "repetition $rep: ${#cases[@]} cases in ${rep_wall}s"
done
{
	echo "## Ours minus native plugins in real NCCL ($RANKS ranks, allreduce 8 B..$MAXB)"
	echo
	for c in "${cases[@]}"; do
		echo "#### $c"
		echo
		$REPORT overhead --baseline native "$OUT/$c"/rep*/*.csv || echo "(no complete pair)"
		echo
	done
	cat "$OUT/decisions.md"
} >"$OUT/nccl.md"
cat "$OUT/nccl.md"
