#!/bin/bash
# `ncclbpf bench` as an operator meets it: --help/-h on stdout with exit 0 and nothing measured,
# usage errors exit 2, a policy that does not load (missing, rejected by the verifier) exits 1
# with one line naming it and prints no row, --json output parsed and checked, and a short
# run whose rows are the policies given (found by path, native baselines beside the plugin).
#   cli_bench.sh NCCLBPF POLICY-DIR
set -u
bin=$1
pol=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# run WANT-RC NAME ARGS...: the exit status; stdout in $tmp/out, stderr in $tmp/err.
run() {
	local want=$1 name=$2
	shift 2
	"$bin" bench "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc -eq "$want" ] || fail "$name: exit $rc, want $want (stderr: $(head -c 300 "$tmp/err"))"
}

for h in --help -h; do
	run 0 "$h" "$h" --calls 1000 "$tmp/nothing.o"
	grep -q '^usage: ncclbpf bench' "$tmp/out" || fail "$h: no usage on stdout"
	[ -s "$tmp/err" ] && fail "$h: wrote to stderr"
	grep -q 'minus a native' "$tmp/out" && fail "$h: measured something"
	# every option is in the help (it used to show only --json and --rounds)
	for o in --rounds --calls --reloads --trace --plugin --before --baselines --interp --json \
		--stress --threads --stress-reloads; do
		grep -q -- "^  $o " "$tmp/out" || fail "$h: $o is not in the help"
	done
done

run 2 "unknown option" --frobnicate
grep -q 'usage:' "$tmp/err" || fail "unknown option: no usage on stderr"
[ -s "$tmp/out" ] && fail "unknown option: wrote to stdout"
run 2 "--calls abc" --calls abc
grep -q -- '--calls needs a number' "$tmp/err" || fail "--calls abc: $(cat "$tmp/err")"
run 2 "--calls below the minimum" --calls 10
run 2 "--rounds 0" --rounds 0
run 2 "--stress without bundles" --stress
for o in --rounds --trace --plugin --baselines --before; do
	run 2 "$o without a value" "$o"
	grep -q -- "^ncclbpf bench: $o needs a value; usage: ncclbpf bench" "$tmp/err" ||
		fail "$o without a value: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$o without a value: not one line"
done

run 1 "missing policy" --rounds 1 --calls 1000 --reloads 0 "$tmp/missing.o"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "missing policy: not one line: $(cat "$tmp/err")"
grep -q "$tmp/missing.o" "$tmp/err" || fail "missing policy: the file is not named"
[ -s "$tmp/out" ] && fail "missing policy: printed a table"

run 1 "rejected policy" --rounds 1 --calls 1000 --reloads 0 "$pol/noop.o" "$pol/unsafe/div_zero.o"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "rejected policy: not one line: $(cat "$tmp/err")"
grep -q "div_zero.o not loaded" "$tmp/err" || fail "rejected policy: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "rejected policy: printed rows"

# A native baseline that decides otherwise (the no-op plugin standing in for size_aware's):
# refused before anything is measured, with one line naming the first call that differs.
mkdir -p "$tmp/base"
natives=$(dirname "$bin")/../lib/ncclbpf-bench
cp "$natives/libnccl-native-noop.so" "$tmp/base/libnccl-native-noop.so"
cp "$natives/libnccl-native-noop.so" "$tmp/base/libnccl-native-size_aware.so"
run 1 "baseline deciding otherwise" --baselines "$tmp/base" --rounds 1 --calls 1000 --reloads 0 \
	"$pol/size_aware.o"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "baseline deciding otherwise: not one line: $(cat "$tmp/err")"
grep -q "size_aware.o: ours and the native baseline decide differently on call 0 of the trace" \
	"$tmp/err" || fail "baseline deciding otherwise: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "baseline deciding otherwise: printed rows"
# ... and the same baselines for a policy they do match (noop) measure as usual.
run 0 "matching baseline" --baselines "$tmp/base" --rounds 1 --calls 1000 --reloads 0 "$pol/noop.o"

# Two policies given by path (no '.o.o'): exactly their rows, with a native baseline each.
run 0 "text" --rounds 3 --calls 2000 --reloads 2 "$pol/size_aware.o" "$pol/profiler_latency.o"
for row in '(no policy)' size_aware profiler_latency; do
	grep -F "  $row " "$tmp/out" | grep -qE ' [-+][0-9.]+ \[[-+][0-9.]+, [-+][0-9.]+\]' ||
		fail "text: no row with a difference for $row"
done
grep -qE '^  (noop|table_tuner|two_lookups) ' "$tmp/out" && fail "text: a row for a policy not given"

run 0 "json" --json --rounds 3 --calls 2000 --reloads 2 "$pol/noop.o" "$pol/profiler_latency.o"
python3 - "$tmp/out" "$pol" <<'PY' || fail "json: $(head -c 600 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
pol = sys.argv[2]
tuner = d["tuner"]["cases"]
prof = d["profiler"]["cases"]
assert d["rounds"] == 3 and d["calls_per_round"] == 2000, d
assert [c["policy"] for c in tuner] == [None, pol + "/noop.o"], tuner
assert [c["policy"] for c in prof] == [pol + "/profiler_latency.o"], prof
assert d["tuner"]["unit"] == "call" and d["profiler"]["unit"] == "event"
for c in tuner + prof:
    assert c["ours_ns"] > 0 and c["native_ns"] > 0, c
    m = c["ours_minus_native"]
    assert m["p25"] <= m["ns"] <= m["p75"], c
    assert abs(c["ours_ns"] - c["native_ns"] - m["ns"]) < c["ours_ns"], c
    assert c["baseline"].endswith(".so"), c
assert "ebpf_minus_c_in_adapter_ns" in tuner[1], tuner[1]
assert [r["policy"] for r in d["reload_us"]] == [pol + "/noop.o", pol + "/profiler_latency.o"]
assert all(r["total"] > 0 for r in d["reload_us"])
PY

# --before LIB: another build of our library (here a copy: another file is another instance) as
# one more interleaved side, its per-round difference in a last column and in the JSON; our
# library itself is refused (dlopen would hand back the same instance), a missing one named.
lib=$(dirname "$bin")/../lib/libnccl-ncclbpf.so
cp "$lib" "$tmp/before.so"
run 0 "--before" --before "$tmp/before.so" --rounds 3 --calls 2000 --reloads 0 \
	"$pol/noop.o" "$pol/profiler_latency.o"
grep -qF "last column: ours minus $tmp/before.so" "$tmp/out" || fail "--before: no header line"
[ "$(grep -c 'ours - before$' "$tmp/out")" -eq 2 ] || fail "--before: column missing: $(cat "$tmp/out")"
for row in '(no policy)' noop profiler_latency; do
	grep -F "  $row " "$tmp/out" |
		grep -qE ' [-+][0-9.]+ \[[-+][0-9.]+, [-+][0-9.]+\] .* [-+][0-9.]+ \[[-+][0-9.]+, [-+][0-9.]+\]$' ||
		fail "--before: no ours - before for $row: $(grep -F "  $row " "$tmp/out")"
done
run 0 "--before json" --json --before "$tmp/before.so" --rounds 3 --calls 2000 --reloads 0 "$pol/noop.o"
python3 - "$tmp/out" "$tmp/before.so" <<'PY' || fail "--before json: $(head -c 600 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["before"] == sys.argv[2], d
for c in d["tuner"]["cases"]:
    m = c["ours_minus_before"]
    assert m["p25"] <= m["ns"] <= m["p75"], c
PY
run 2 "--before our own library" --before "$lib" --rounds 1 --calls 1000 --reloads 0 "$pol/noop.o"
grep -q -- "--before names our library itself" "$tmp/err" || fail "--before itself: $(cat "$tmp/err")"
run 1 "--before missing" --before "$tmp/none.so" --rounds 1 --calls 1000 --reloads 0 "$pol/noop.o"
grep -qF -- "--before $tmp/none.so: No such file" "$tmp/err" || fail "--before missing: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "--before missing: printed rows"

[ $fails -eq 0 ] && echo "cli_bench: all checks passed"
exit $((fails > 0))
