#!/usr/bin/env bash
# The big test campaigns behind the figures the docs quote (CI runs each driver at a small
# count). Runs the campaigns one after another at the lowest priority (nice -n 19) and writes one
# summary line per campaign to $OUT/summary.txt: verdict, the driver's own totals, the exact
# command, the commit and the duration. Docs quote only lines this script wrote.
#
#   scripts/campaign.sh [CAMPAIGN...]        (default: all, in this order)
#
# Campaigns and their size (environment):
#   soundness      verifier_soundness until SOUNDNESS_ACCEPTED (1,000,000) accepted programs call
#                  helpers (maps, ring buffers, ...); every accepted program runs 3 times in the
#                  bounds-checking interpreter; any trap fails
#   kernel_verdict verifier_soundness --kernel over KERNEL_VERDICT (100,000) programs: verdicts
#                  against Linux's bpf(); a "we accept, Linux rejects" case not classified as
#                  Linux's imprecision (docs/verifier.md) fails; accepted programs also run checked
#   kernel_accept  KERNEL_ACCEPT (100,000) generated programs with maps and helpers through Linux's
#                  verifier: at most 1 % rejected
#   diff_kernel    diff_interp_kernel over DIFF_KERNEL (1,000,000) programs: interpreter vs kernel,
#                  r0 and memory; any mismatch fails
#   jit            jit_diff over JIT_DIFF (10,000,000) programs: JIT vs interpreter
#   fuzz_loader, fuzz_verifier
#                  the libFuzzer targets for FUZZ_SECONDS (600) each from the committed corpus
#                  (tests/fuzz/corpus/), clang build in $BUILD-fuzz
#   SHARDS=N (default 1) splits the soundness campaign over N processes side by side: process k
#   starts at seed SEED + k * 1,000,000,000 and stops at its share of SOUNDNESS_ACCEPTED, so the
#   seed ranges never overlap; the summary line adds up their totals. SOUNDNESS_SECONDS=S stops
#   every process after S seconds with the totals so far (a machine lent for a bounded time);
#   the next run takes another SEED (say SEED + N * 1,000,000,000) and the docs add the lines.
# SEED (default 1) is the first seed of every generated campaign. Builds: $BUILD (default
# build-campaign, no sanitizers: speed) and $BUILD-fuzz; OUT defaults to $BUILD/campaign.
# The verifier campaigns log a progress line ("... N programs") every 100,000 / 10,000 programs
# in $OUT/<campaign>.log, so a run stopped early shows how far it got.
# Exit status: 0 when every campaign run passed.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-campaign}
OUT=${OUT:-$BUILD/campaign}
SEED=${SEED:-1}
SOUNDNESS_ACCEPTED=${SOUNDNESS_ACCEPTED:-1000000}
KERNEL_VERDICT=${KERNEL_VERDICT:-100000}
KERNEL_ACCEPT=${KERNEL_ACCEPT:-100000}
DIFF_KERNEL=${DIFF_KERNEL:-1000000}
JIT_DIFF=${JIT_DIFF:-10000000}
FUZZ_SECONDS=${FUZZ_SECONDS:-600}
SHARDS=${SHARDS:-1}
SOUNDNESS_SECONDS=${SOUNDNESS_SECONDS:-0}
SHARD_STRIDE=1000000000
ALL="soundness kernel_verdict kernel_accept diff_kernel jit fuzz_loader fuzz_verifier"
CAMPAIGNS=${*:-$ALL}
for c in $CAMPAIGNS; do
	case " $ALL " in *" $c "*) ;; *)
		echo "unknown campaign '$c' (have: $ALL)" >&2
		exit 2
		;;
	esac
done

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit+changes"
mkdir -p "$OUT"
JOBS=${JOBS:-2}
NICE="nice -n 19"

build_main() {
	cmake -S . -B "$BUILD" -DNCCLBPF_SANITIZERS=OFF >/dev/null &&
		$NICE cmake --build "$BUILD" -j"$JOBS" --target verifier_soundness diff_kernel_accept \
			diff_interp_kernel jit_diff >"$OUT/build.log" 2>&1
}
build_fuzz() {
	CC=clang cmake -S . -B "$BUILD-fuzz" -DNCCLBPF_FUZZ=ON -DNCCLBPF_SANITIZERS=OFF >/dev/null &&
		$NICE cmake --build "$BUILD-fuzz" -j"$JOBS" --target fuzz_loader fuzz_verifier policies \
			loader_test_objects >"$OUT/build-fuzz.log" 2>&1
}

# run NAME COMMAND...: runs the campaign, keeps its log, appends its summary line.
status=0
summary() { # NAME VERDICT TOTALS CMD SECONDS
	local line="$1: $2: $3 | command: $4 | commit $commit, $(date -u +%Y-%m-%d), $5 s"
	echo "$line" | tee -a "$OUT/summary.txt"
}
run() {
	local name=$1 pattern=$2
	shift 2
	local log=$OUT/$name.log t0 rc totals
	t0=$(date +%s)
	$NICE "$@" >"$log" 2>&1
	rc=$?
	totals=$(grep -E "$pattern" "$log" | tr '\n' ' ' | sed 's/  */ /g; s/ $//')
	local verdict=PASS
	if [ $rc -ne 0 ]; then
		verdict="FAIL (exit status $rc, see $log)"
		status=1
	fi
	summary "$name" "$verdict" "${totals:-no totals printed}" "$*" $(($(date +%s) - t0))
}

# run_shards NAME COMMAND...: COMMAND --seed S --count C --min-accepted A in SHARDS processes
# with disjoint seed ranges; one summary line with the sums of their "programs N: ..." lines.
run_shards() {
	local name=$1
	shift
	local t0 rc k share pids=() verdict=PASS
	t0=$(date +%s)
	share=$(((SOUNDNESS_ACCEPTED + SHARDS - 1) / SHARDS))
	for ((k = 0; k < SHARDS; k++)); do
		$NICE "$@" --seed $((SEED + k * SHARD_STRIDE)) --count $SHARD_STRIDE \
			--min-accepted $share >"$OUT/$name.$k.log" 2>&1 &
		pids+=($!)
	done
	for k in "${!pids[@]}"; do
		wait "${pids[$k]}"
		rc=$?
		if [ $rc -ne 0 ]; then
			verdict="FAIL (shard $k: exit status $rc, see $OUT/$name.$k.log)"
			status=1
		fi
	done
	local totals
	totals=$(for ((k = 0; k < SHARDS; k++)); do cat "$OUT/$name.$k.log"; done | awk '
		/^programs [0-9]+:/ {
			for (i = 1; i <= NF; i++) { w = $i; gsub(/[^0-9]/, "", w); v[i] = w }
			# programs N: accepted A (H calling helpers), rejected R; checked runs C,
			# faults F, cost-bound overruns O, ebpf_prog__new refusals P; ...
			p += v[2]; a += v[4]; h += v[5]; r += v[9]; c += v[12]; f += v[14]; o += v[17]
			n += v[20]; shards++
		}
		/^stopped at the --seconds limit/ { stopped++ }
		END {
			printf "%d shards (%d stopped by SOUNDNESS_SECONDS): programs %d: accepted %d (%d calling helpers), rejected %d; checked runs %d, faults %d, cost-bound overruns %d, ebpf_prog__new refusals %d", shards, stopped, p, a, h, r, c, f, o, n
		}')
	summary "$name" "$verdict" "$totals" \
		"SHARDS=$SHARDS x $* --seed $SEED+k*$SHARD_STRIDE --count $SHARD_STRIDE --min-accepted $share" \
		$(($(date +%s) - t0))
}

need_main=0 need_fuzz=0
for c in $CAMPAIGNS; do
	case $c in fuzz_*) need_fuzz=1 ;; *) need_main=1 ;; esac
done
if [ $need_main = 1 ] && ! build_main; then
	echo "build of $BUILD failed: $OUT/build.log" >&2
	exit 1
fi
if [ $need_fuzz = 1 ] && ! build_fuzz; then
	echo "build of $BUILD-fuzz failed: $OUT/build-fuzz.log" >&2
	exit 1
fi
T=$BUILD/tests
F=$BUILD-fuzz/tests
for c in $CAMPAIGNS; do
	case $c in
	soundness)
		limits=(--limit 100000 --progress 100000)
		[ "$SOUNDNESS_SECONDS" = 0 ] || limits+=(--seconds "$SOUNDNESS_SECONDS")
		if [ "$SHARDS" -gt 1 ]; then
			run_shards soundness "$T/verifier_soundness" "${limits[@]}"
		else
			run soundness "^programs [0-9]+:|^stopped at" "$T/verifier_soundness" \
				--seed "$SEED" --count 1000000000 --min-accepted "$SOUNDNESS_ACCEPTED" \
				"${limits[@]}"
		fi
		;;
	kernel_verdict)
		run kernel_verdict "^programs [0-9]+:|^kernel differential:" \
			"$T/verifier_soundness" --kernel --seed "$SEED" --count "$KERNEL_VERDICT" \
			--limit 100000 --progress 10000
		;;
	kernel_accept)
		run kernel_accept "^kernel_accept:" "$T/diff_kernel_accept" --seed "$SEED" \
			--count "$KERNEL_ACCEPT"
		;;
	diff_kernel)
		run diff_kernel "^diff_interp_kernel:" "$T/diff_interp_kernel" --seed "$SEED" \
			--count "$DIFF_KERNEL"
		;;
	jit)
		run jit "^jit_diff:" "$T/jit_diff" --seed "$SEED" --count "$JIT_DIFF" --quiet
		;;
	fuzz_loader | fuzz_verifier)
		t=${c#fuzz_}
		work=$OUT/corpus_$t
		rm -rf "$work"
		mkdir -p "$work"
		extra=()
		[ "$t" = loader ] && extra=(-dict=tests/fuzz/loader.dict)
		[ "$t" = verifier ] && extra=(-max_len=4098)
		run "$c" "^Done [0-9]+ runs|stat::number_of_executed_units|artifact_prefix" \
			"$F/fuzz_$t" -error_exitcode=1 -timeout_exitcode=1 -max_total_time="$FUZZ_SECONDS" \
			-rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$OUT/$c-" \
			"${extra[@]}" "$work" "tests/fuzz/corpus/$t"
		;;
	esac
done
exit $status
