#!/usr/bin/env bash
# The GPU scripts on a CPU: (1) bash -n of every scripts/gpu-*.sh; (2) the report helper on the
# checked-in sample CSVs (tests/gpubench/data), exact table lines computed by hand; (3) the whole
# pass gpu-sweep.sh -> ncclbpf tune -> gpu-compare.sh and gpu-overhead.sh against
# fake_gpubench.py (real ncclbpf and policies, made-up times), checking what each produces.
# Usage: gpu_scripts.sh SOURCE_DIR NCCLBPF POLICY_DIR WORKDIR
set -u
SRC=$1 NCCLBPF=$2 POLICIES=$3 W=$4
rm -rf "$W"
mkdir -p "$W"
fail=0
bad() {
	echo "FAIL: $*" >&2
	fail=1
}
for s in "$SRC"/scripts/gpu-*.sh; do
	bash -n "$s" || bad "bash -n $s"
done
# --help: every script's usage on stdout (its own, or its leading comment through
# gpu-usage.sh), exit 0, nothing built or written (run in an empty directory with the output
# defaults pointed into it).
for s in "$SRC"/scripts/gpu-*.sh; do
	case ${s##*/} in gpu-common.sh | gpu-usage.sh) continue ;; esac
	mkdir -p "$W/help"
	# run as a user runs it: a script that lost its executable bit fails here
	[ -x "$s" ] || bad "${s##*/} is not executable"
	out=$(cd "$W/help" && TMPDIR=$W/help BUILD_DIR=$W/help/build "$s" --help 2>"$W/help.err")
	rc=$?
	[ $rc -eq 0 ] || bad "${s##*/} --help: exit $rc"
	[ -n "$(printf '%s\n' "$out" | head -1)" ] || bad "${s##*/} --help: no usage on stdout"
	[ ! -s "$W/help.err" ] || bad "${s##*/} --help wrote to stderr: $(head -2 "$W/help.err")"
	[ -z "$(ls -A "$W/help")" ] || bad "${s##*/} --help left files: $(ls -A "$W/help")"
	rm -rf "$W/help"
done

# (2) The report helper on the samples.
R="python3 $SRC/scripts/gpubench_report.py"
D=$SRC/tests/gpubench/data
has() { # file line
	grep -qxF -- "$2" "$1" || { bad "$1 lacks: $2"; sed 's/^/  | /' "$1" >&2; }
}
$R compare --sweep "$D/sweep.csv" --policy policy:tuned.o "$D"/compare/rep*/*.csv >"$W/compare.md" ||
	bad "report compare rc"
has "$W/compare.md" "| allreduce | 2 | 1 KiB | 15.00 ± 1.41 | 10.45 ± 0.07 | ring/ll/2 | ring/ll/2 | 10.25 ± 0.35 | 0.700 [0.650–0.750] (2) | 1.020 [1.000–1.040] (2) |"
has "$W/compare.md" "| allreduce | 2 | 1 MiB | 99.00 ± 1.41 | 99.50 ± 2.12 | ring/simple/- | default | 99.00 ± 1.41 | 1.005 [1.000–1.010] (2) | 1.005 [1.000–1.010] (2) |"
has "$W/compare.md" "| allreduce | 2 | 0.839 | 1.012 | 2 |"
$R overhead "$D"/overhead/rep*/*.csv >"$W/overhead.md" || bad "report overhead rc"
has "$W/overhead.md" "| allreduce | 2 | 8 B | 11.00 ± 1.41 | +0.30 ± 0.28 [+0.10…+0.50] (2) | +2.7% | ring/ll/- |"
has "$W/overhead.md" "| allreduce | 2 | 1 MiB | 100.50 ± 0.71 | +0.00 ± 0.28 [-0.20…+0.20] (2) | +0.0% | ring/simple/- |"
[ "$($R oracle "$D/sweep.csv")" = "2 ring/ll/2 allreduce 1024 1024" ] || bad "report oracle"
$R merge -o "$W/merged.csv" "$D"/compare/rep*/*.csv 2>"$W/merge.err" || bad "report merge rc"
[ "$(wc -l <"$W/merged.csv")" -eq 11 ] || bad "merge: want header + 10 rows"
grep -q "dropped 1 incomplete/malformed line(s): .*rep2/tuned_n2.csv:4" "$W/merge.err" ||
	bad "merge: the short line is not reported"
: >"$W/empty.csv"
msg=$($R compare --sweep "$W/empty.csv" --policy x "$D/sweep.csv" 2>&1)
[ $? -eq 1 ] && [ "$msg" = "gpubench_report: $W/empty.csv: no ncclbpf-gpubench CSV header (empty file?)" ] ||
	bad "empty sweep: '$msg'"
msg=$($R overhead --baseline nothing "$D"/overhead/rep1/*.csv 2>&1)
[ $? -eq 1 ] && [ "$msg" = "gpubench_report: no rows with config 'nothing'" ] || bad "no baseline: '$msg'"

# (3) The scripts end to end against the fake benchmark.
FB=$W/fakebuild
mkdir -p "$FB/bin" "$FB/lib"
ln -s "$SRC/tests/gpubench/fake_gpubench.py" "$FB/bin/ncclbpf-gpubench"
ln -s "$NCCLBPF" "$FB/bin/ncclbpf"
: >"$FB/lib/libnccl-ncclbpf.so"
export BUILD_DIR=$FB POLICY_DIR=$POLICIES SKIP_BUILD=1 MPS=0 FAKE_NCCLBPF=$NCCLBPF NCCL_HOME=$W
# The functional runs get a budget they cannot exhaust (the budget logic has its own check below):
# a loaded machine must not change what they do.
RANKS_LIST="2 4" MAXB=256K CHANNELS="2 8" BUDGET_S=100000 bash "$SRC/scripts/gpu-sweep.sh" "$W/sweep" \
	>"$W/sweep.log" 2>&1 || bad "gpu-sweep.sh rc"
# default: 2 ranks x 3 collectives x 16 sizes; forced: per ranks and channel count, ring x 3
# protocols x 3 collectives (LL up to 4M: all sizes) + tree x 3 protocols x allreduce.
want=$((2 * 3 * 16 + 2 * 2 * (3 * 3 + 3) * 16))
got=$(($(wc -l <"$W/sweep/sweep.csv") - 1))
[ "$got" -eq "$want" ] || { bad "sweep.csv: $got rows, want $want"; tail -20 "$W/sweep.log" >&2; }
[ -s "$W/sweep/tuned.o" ] || bad "gpu-sweep.sh did not build tuned.o"
[ ! -s "$W/sweep/skipped.txt" ] || bad "sweep skipped runs: $(cat "$W/sweep/skipped.txt")"
grep -q "pat" "$W/sweep/plan.txt" && bad "pat planned without ALGOS"
RANKS_LIST=2 REPS=2 BUDGET_S=100000 bash "$SRC/scripts/gpu-compare.sh" "$W/sweep/sweep.csv" "$W/compare" \
	>"$W/compare.log" 2>&1 || { bad "gpu-compare.sh rc"; tail -20 "$W/compare.log" >&2; }
rows=$(grep -c "^| allreduce \|^| allgather \|^| reducescatter " "$W/compare/compare.md")
[ "$rows" -eq $((3 * 16 + 3)) ] || bad "compare.md: $rows rows, want $((3 * 16 + 3)) (3 x 16 sizes, 3 geomeans)"
# The tuned policy reproduces the sweep's oracle: policy/oracle within the model's noise.
awk -F'|' '$2 ~ /allreduce|allgather|reducescatter/ && NF > 10 {
	split($11, r, " "); if (r[1] < 0.95 || r[1] > 1.05) { print "policy/oracle " r[1] ": " $0; bad = 1 } }
	END { exit bad }' "$W/compare/compare.md" >&2 || bad "tuned policy does not match the oracle"
grep -q "ring/ll/8" "$W/compare/compare.md" || bad "compare.md: the policy never used ring/ll/8"
RANKS=2 REPS=3 MAXB=4M BUDGET_S=100000 bash "$SRC/scripts/gpu-overhead.sh" "$W/overhead" \
	>"$W/overhead.log" 2>&1 || { bad "gpu-overhead.sh rc"; tail -20 "$W/overhead.log" >&2; }
rows=$(grep -c "^| allreduce | 2 |" "$W/overhead/overhead.md")
[ "$rows" -eq 19 ] || bad "overhead.md: $rows rows, want 19 (8 B..256 KiB, 1..4 MiB)"
grep -qF "policy:noop.o − baseline" "$W/overhead/overhead.md" || bad "overhead.md: no noop column"
grep -qF "policy:size_aware.o − baseline" "$W/overhead/overhead.md" || bad "overhead.md: no size_aware column"

# The budget: slow runs make the plan drop channel counts; a failing configuration (the first
# forced run, so that it runs however loaded the machine is) is reported
# and its measured rows kept; no run starts once the budget is spent. Checked by counting, not by
# the wall clock: every fake run lasts at least FAKE_SLEEP, and a run starts only while 5 s of the
# budget are left (whole seconds: 4 s and a fraction), so at most (BUDGET_S - 4) / FAKE_SLEEP
# forced runs fit after the default one (a loaded machine only makes it fewer).
RANKS_LIST=2 MAXB=4K CHANNELS="4 2 8 1" BUDGET_S=25 FAKE_SLEEP=1.5 FAKE_FAIL=ring/ll/4 \
	bash "$SRC/scripts/gpu-sweep.sh" "$W/budget" >"$W/budget.log" 2>&1 || bad "budget sweep rc"
runs=$(wc -l <"$W/budget/runs/runs.log")
[ "$runs" -le $((1 + (25 - 4) * 2 / 3 + 1)) ] || bad "budget sweep started $runs runs in a 25 s budget"
grep -q "^channels=4 2 8 1 " "$W/budget/plan.txt" && bad "budget: no channel count dropped"
grep -q "dropping channels" "$W/budget.log" || bad "budget: trimming not logged"
grep -q "ring_ll_4 rc=1" "$W/budget/runs/runs.log" || bad "budget: the failing run is not logged"
grep -q "[1-9][0-9]* run(s) failed" "$W/budget.log" || bad "budget: failures not counted"
grep -q ",ring/ll/4," "$W/budget/sweep.csv" || bad "budget: the failed run's rows are lost"
# gpu-ab.sh's command line: help on stdout with 0, a usage error 2, an unreadable bundle 1 naming
# it, and none of them builds or starts anything (no build-gpu appears).
AB="$SRC/scripts/gpu-ab.sh"
out=$(bash "$AB" --help) || bad "gpu-ab.sh --help rc"
grep -q "^Usage: scripts/gpu-ab.sh" <<<"$out" || bad "gpu-ab.sh --help: no usage"
bash "$AB" 64K >/dev/null 2>&1
[ $? -eq 2 ] || bad "gpu-ab.sh with too few arguments: want rc 2"
bash "$AB" --bogus 64K a.o b.o >/dev/null 2>&1
[ $? -eq 2 ] || bad "gpu-ab.sh --bogus: want rc 2"
msg=$(BUILD_DIR="$W/ab-build" bash "$AB" 64K "$W/missing.o" "$POLICIES/noop.o" 2>&1)
[ $? -eq 1 ] || bad "gpu-ab.sh with a missing bundle: want rc 1"
grep -q "missing.o: cannot read" <<<"$msg" || bad "gpu-ab.sh: the missing bundle is not named: $msg"
[ -e "$W/ab-build" ] && bad "gpu-ab.sh built before checking its arguments"
# gpu-native.sh: the same command-line checks, then a whole run against the fake benchmark with
# the real library, native plugins and `ncclbpf bench` (one round: what it prints, not timing).
GN="$SRC/scripts/gpu-native.sh"
out=$(bash "$GN" --help) || bad "gpu-native.sh --help rc"
grep -q "^Usage: scripts/gpu-native.sh" <<<"$out" || bad "gpu-native.sh --help: no usage"
bash "$GN" >/dev/null 2>&1
[ $? -eq 2 ] || bad "gpu-native.sh without OUTDIR: want rc 2"
bash "$GN" --bogus "$W/gn" >/dev/null 2>&1
[ $? -eq 2 ] || bad "gpu-native.sh --bogus: want rc 2"
bash "$GN" --rounds x "$W/gn" >/dev/null 2>&1
[ $? -eq 2 ] || bad "gpu-native.sh --rounds x: want rc 2"
bash "$GN" --cpu x "$W/gn" >/dev/null 2>&1
[ $? -eq 2 ] || bad "gpu-native.sh --cpu x: want rc 2"
msg=$(BUILD_DIR="$W/gn-build" POLICY_DIR="$W/nopolicies" bash "$GN" "$W/gn" 2>&1)
[ $? -eq 1 ] || bad "gpu-native.sh without policies: want rc 1"
grep -q "nopolicies/noop.o" <<<"$msg" || bad "gpu-native.sh: the missing policy is not named: $msg"
[ -e "$W/gn-build" ] && bad "gpu-native.sh built before checking its arguments"
msg=$(BUILD_DIR="$W/gn-build" bash "$GN" --before "$W/old.so" "$W/gn" 2>&1)
[ $? -eq 1 ] || bad "gpu-native.sh --before with a missing library: want rc 1"
grep -q "old.so: cannot read" <<<"$msg" || bad "gpu-native.sh: the missing library is not named: $msg"
[ -e "$W/gn-build" ] && bad "gpu-native.sh built before checking --before"
LIBDIR=$(cd "$(dirname "$NCCLBPF")/../lib" && pwd)
GB=$W/gnbuild
mkdir -p "$GB/bin" "$GB/lib"
ln -s "$SRC/tests/gpubench/fake_gpubench.py" "$GB/bin/ncclbpf-gpubench"
ln -s "$NCCLBPF" "$GB/bin/ncclbpf"
ln -s "$LIBDIR/libnccl-ncclbpf.so" "$GB/lib/libnccl-ncclbpf.so"
ln -s "$LIBDIR/ncclbpf-bench" "$GB/lib/ncclbpf-bench"
cp "$LIBDIR/libnccl-ncclbpf.so" "$W/before.so" # another file: another instance
BUILD_DIR=$GB BUDGET_S=100000 bash "$GN" --rounds 1 --reps 2 --before "$W/before.so" \
	"$W/gn" >"$W/gn.log" 2>&1 ||
	{ bad "gpu-native.sh rc"; tail -20 "$W/gn.log" >&2; }
# --before: the other build as a further interleaved side, ours minus it in the last column.
for p in '\(no policy\)' noop size_aware profiler_latency; do
	grep -qE "^  $p .* [+-][0-9]+\.[0-9] \[.* [+-][0-9]+\.[0-9] \[[-+][0-9.]+, [-+][0-9.]+\]$" \
		"$W/gn/bench.txt" || bad "gpu-native.sh: bench.txt has no ours - native and ours - before for $p"
done
grep -q '"ours_minus_before"' "$W/gn/bench.json" || bad "gpu-native.sh: bench.json has no ours_minus_before"
for p in noop size_aware profiler_latency; do
	# one row per size, 8 B..64 KiB: 14
	n=$(sed -n "/^#### $p\$/,/^#### [a-z]/p" "$W/gn/nccl.md" | grep -c "^| allreduce | 2 |")
	[ "$n" -eq 14 ] || bad "gpu-native.sh: nccl.md has $n rows for $p, want 14"
done
grep -q "policy:size_aware.o − baseline" "$W/gn/nccl.md" || bad "gpu-native.sh: no ours - native column"
# --cpu auto: every CPU probed (its native no-op figure), the bench pinned to the cheapest.
ncpu=$(python3 -c 'import os; print(min(64, len(os.sched_getaffinity(0))))')
n=$(grep -cE '^[0-9]+ [0-9]+\.[0-9]$' "$W/gn/cpus.txt")
[ "$n" -eq "$ncpu" ] || bad "gpu-native.sh: cpus.txt has $n probed CPUs, want $ncpu: $(cat "$W/gn/cpus.txt")"
best=$(sort -k2 -n "$W/gn/cpus.txt" | awk 'NR == 1 { print $1 }')
grep -qE "^# pinned to CPU $best: native no-op [0-9.]+ ns per call before, [0-9.]+ ns after" \
	"$W/gn/bench.txt" || bad "gpu-native.sh: bench.txt does not say it ran on CPU $best: $(head -1 "$W/gn/bench.txt")"
# The decisions NCCL logged with each side, compared before the timing: here the same.
for p in noop size_aware profiler_latency; do
	grep -qxF -- "- $p: identical at every size (14 decisions)" "$W/gn/decisions.md" ||
		bad "gpu-native.sh: decisions.md does not find $p's sides identical: $(cat "$W/gn/decisions.md")"
done
grep -qF "## Decisions NCCL takes" "$W/gn/nccl.md" || bad "gpu-native.sh: nccl.md lacks the decisions"
# A native plugin that makes NCCL take another protocol: its case is reported and not timed.
FAKE_OTHER=native-size_aware BUILD_DIR=$GB BUDGET_S=100000 bash "$GN" --rounds 1 --reps 1 --cpu none \
	"$W/gn2" >"$W/gn2.log" 2>&1 || { bad "gpu-native.sh (other decisions) rc"; tail -20 "$W/gn2.log" >&2; }
grep -q "pinned" "$W/gn2/bench.txt" && bad "gpu-native.sh --cpu none: the bench was pinned"
grep -qxF -- "- size_aware: **the sides decide differently** (not timed; < ours, > native):" \
	"$W/gn2/decisions.md" || bad "gpu-native.sh: differing decisions not reported: $(cat "$W/gn2/decisions.md")"
grep -qF "> AllReduce: 8 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..1}" "$W/gn2/decisions.md" ||
	bad "gpu-native.sh: the differing decision is not shown"
grep -q "^#### size_aware" "$W/gn2/nccl.md" && bad "gpu-native.sh: timed a case whose sides decide differently"
grep -q "^#### noop" "$W/gn2/nccl.md" || bad "gpu-native.sh: the matching cases were not timed"

[ $fail -eq 0 ] && echo "gpu_scripts: OK"
exit $fail
