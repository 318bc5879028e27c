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
#   SHARDS=N (default 1) splits each generated campaign over N processes side by side: the
#   counted ones give process k the k-th of N consecutive seed ranges (together the seeds one
#   process would run), soundness starts process k at seed SEED + k * 1,000,000,000 and stops it
#   at its share of SOUNDNESS_ACCEPTED; the summary line adds up their totals (decimals become
#   their mean). SOUNDNESS_SECONDS=S stops every soundness process after S seconds with the
#   totals so far (a machine lent for a bounded time); the next run then takes another SEED
#   (say SEED + N * 1,000,000,000) and the docs add the lines.
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
	totals=$(grep -E "$pattern|^stopped at" "$log" | tr '\n' ' ' | sed 's/  */ /g; s/ $//')
	local verdict=PASS
	if [ $rc -ne 0 ]; then
		verdict="FAIL (exit status $rc, see $log)"
		status=1
	fi
	summary "$name" "$verdict" "${totals:-no totals printed}" "$*" $(($(date +%s) - t0))
}

# sum_shards PATTERN: the lines matching PATTERN in the shard logs on stdin, each kind (its first
# word) added up over the shards: integers are summed, a seed after "seed" or a range "A..B"
# spans the first shard to the last, decimals (averages, percentages, seconds) become the mean
# of the shards (said once at the front).
sum_shards() {
	grep -E "$1" | awk '
		{
			k = $1
			if (!(k in n)) order[++kinds] = k
			n[k]++
			nf[k] = NF
			for (i = 1; i <= NF; i++) tok[k, n[k], i] = $i
		}
		END {
			for (j = 1; j <= kinds; j++) {
				k = order[j]
				line = ""
				for (i = 1; i <= nf[k]; i++) {
					t = tok[k, 1, i]
					prev = i > 1 ? tok[k, 1, i - 1] : ""
					if (t ~ /^[0-9]+\.\.[0-9]+/) {
						split(tok[k, n[k], i], last, /\.\./)
						sub(/\.\.[0-9]+/, ".." last[2] + 0, t)
					} else if (prev ~ /^seeds?$/) {
						# the first shard starts the range
					} else if (match(t, /[0-9]+\.[0-9]+/)) {
						num = substr(t, RSTART, RLENGTH)
						dec = length(num) - index(num, ".")
						sum = 0
						for (s = 1; s <= n[k]; s++) {
							u = tok[k, s, i]
							match(u, /[0-9]+\.[0-9]+/)
							sum += substr(u, RSTART, RLENGTH)
						}
						t = substr(t, 1, RSTART - 1) sprintf("%." dec "f", sum / n[k]) \
						    substr(t, RSTART + RLENGTH)
					} else if (match(t, /[0-9]+/) && RLENGTH == length(t) - \
						   length(gensub_strip(t))) {
						sum = 0
						for (s = 1; s <= n[k]; s++) {
							u = tok[k, s, i]
							match(u, /[0-9]+/)
							sum += substr(u, RSTART, RLENGTH)
						}
						match(t, /[0-9]+/)
						t = substr(t, 1, RSTART - 1) sprintf("%d", sum) \
						    substr(t, RSTART + RLENGTH)
					}
					line = line (i > 1 ? " " : "") t
				}
				printf "%s%s", (j > 1 ? " " : ""), line
			}
		}
		# t without its digits: an integer token is digits with punctuation around them only
		function gensub_strip(t) { gsub(/[0-9]/, "", t); return t }'
}

# run_shards NAME PATTERN SIZE COMMAND...: COMMAND in SHARDS processes side by side, one summary
# line (sum_shards of PATTERN). SIZE "count N": shard k takes the seeds SEED + k * N/SHARDS on
# (--seed, --count), so the shards cover exactly the seeds one process would; SIZE "accepted N":
# shard k starts at SEED + k * SHARD_STRIDE and stops at its share of N (--min-accepted).
run_shards() {
	local name=$1 pattern=$2 mode=$3 size=$4
	shift 4
	local t0 rc k share seeds pids=() verdict=PASS
	t0=$(date +%s)
	share=$(((size + SHARDS - 1) / SHARDS))
	for ((k = 0; k < SHARDS; k++)); do
		if [ "$mode" = count ]; then
			seeds=(--seed $((SEED + k * share)) --count "$share")
		else
			seeds=(--seed $((SEED + k * SHARD_STRIDE)) --count $SHARD_STRIDE --min-accepted "$share")
		fi
		$NICE "$@" "${seeds[@]}" >"$OUT/$name.$k.log" 2>&1 &
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
	local totals how stopped=0
	for ((k = 0; k < SHARDS; k++)); do
		grep -q "^stopped at" "$OUT/$name.$k.log" && stopped=$((stopped + 1))
	done
	totals=$(for ((k = 0; k < SHARDS; k++)); do cat "$OUT/$name.$k.log"; done |
		sum_shards "$pattern")
	if [ "$mode" = count ]; then
		how="--seed $SEED+k*$share --count $share"
	else
		how="--seed $SEED+k*$SHARD_STRIDE --count $SHARD_STRIDE --min-accepted $share"
	fi
	summary "$name" "$verdict" \
		"$SHARDS shards ($stopped stopped at their time limit; decimals: the shards' mean): ${totals:-no totals printed}" \
		"SHARDS=$SHARDS, shard k=0..$((SHARDS - 1)): $* $how" $(($(date +%s) - t0))
}

# campaign NAME PATTERN SIZE COMMAND...: one process (run, with SIZE's seed options) or SHARDS.
campaign() {
	local name=$1 pattern=$2 mode=$3 size=$4
	shift 4
	if [ "$SHARDS" -gt 1 ]; then
		run_shards "$name" "$pattern" "$mode" "$size" "$@"
	elif [ "$mode" = count ]; then
		run "$name" "$pattern" "$@" --seed "$SEED" --count "$size"
	else
		run "$name" "$pattern" "$@" --seed "$SEED" --count 1000000000 --min-accepted "$size"
	fi
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
		campaign soundness "^programs [0-9]+:" accepted "$SOUNDNESS_ACCEPTED" \
			"$T/verifier_soundness" "${limits[@]}"
		;;
	kernel_verdict)
		campaign kernel_verdict "^programs [0-9]+:|^kernel differential:" count \
			"$KERNEL_VERDICT" "$T/verifier_soundness" --kernel --limit 100000 --progress 10000
		;;
	kernel_accept)
		campaign kernel_accept "^kernel_accept:" count "$KERNEL_ACCEPT" "$T/diff_kernel_accept"
		;;
	diff_kernel)
		campaign diff_kernel "^diff_interp_kernel:" count "$DIFF_KERNEL" "$T/diff_interp_kernel"
		;;
	jit)
		campaign jit "^jit_diff:" count "$JIT_DIFF" "$T/jit_diff" --quiet
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
