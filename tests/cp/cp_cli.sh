#!/bin/bash
# `ncclbpf run` and `ncclbpf reload --job` end to end: ranks started through `ncclbpf run` (the
# test program's "ranks" mode drives the real plugin), a whole-job reload that commits, one that
# aborts (a bundle every rank rejects), the environment `ncclbpf run` sets, and `ncclbpf map
# update` of a uniform map, which goes through the same consistent activation.
#   cp_cli.sh NCCLBPF TEST_CP PLUGIN VERSION_DIR INSPECT_POLICY UNSAFE_DIV_ZERO
set -u
bin=$1 test_cp=$2 plugin=$3 vdir=$4 mpol=$5 divz=$6
tmp=$(mktemp -d)
trap 'touch "$tmp/stop"; wait; rm -rf "$tmp"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# run: environment, the one line, default directory, errors.
"$bin" run --policy "$vdir/version1.o" --dir "$tmp/d0" --plugin "$plugin" -- env >"$tmp/env" 2>"$tmp/err"
grep -qx "NCCL_TUNER_PLUGIN=$(realpath "$plugin")" "$tmp/env" || fail "run: NCCL_TUNER_PLUGIN: $(grep TUNER "$tmp/env")"
grep -qx "NCCL_ENV_PLUGIN=$(realpath "$plugin")" "$tmp/env" || fail "run: NCCL_ENV_PLUGIN"
grep -qx "NCCL_PROFILER_PLUGIN=$(realpath "$plugin")" "$tmp/env" || fail "run: NCCL_PROFILER_PLUGIN"
grep -qx "NCCLBPF_POLICY=$(realpath "$vdir/version1.o")" "$tmp/env" || fail "run: NCCLBPF_POLICY"
grep -qx "NCCLBPF_CP_DIR=$tmp/d0" "$tmp/env" || fail "run: NCCLBPF_CP_DIR"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^ncclbpf run: plugin .*control plane $tmp/d0" "$tmp/err" ||
	fail "run: one line on stderr: $(cat "$tmp/err")"
[ "$(stat -c %a "$tmp/d0")" = 700 ] || fail "run: $tmp/d0 mode $(stat -c %a "$tmp/d0")"
job=cptest$$
out=$("$bin" run --job $job -- sh -c 'echo $NCCLBPF_CP_DIR $NCCLBPF_JOB' 2>/dev/null)
[ "$out" = "/dev/shm/ncclbpf-$(id -u)/$job $job" ] || fail "run: default directory: '$out'"
rm -rf "/dev/shm/ncclbpf-$(id -u)/$job"
"$bin" run --dir "$tmp/d0" 2>/dev/null; [ $? -eq 2 ] || fail "run without a command: not usage"
"$bin" run --policy "$tmp/none.o" -- true 2>/dev/null; [ $? -eq 1 ] || fail "run with a missing policy"
# A policy every rank would refuse: the job is not started, and the verifier's reason is shown.
"$bin" run --policy "$divz" --dir "$tmp/d0" --plugin "$plugin" -- touch "$tmp/started" 2>"$tmp/err"
[ $? -eq 1 ] || fail "run with a rejected policy: exit status"
[ -e "$tmp/started" ] && fail "run with a rejected policy started the command"
grep -q "would not load, the job is not started: .*may be 0; check it first" "$tmp/err" ||
	fail "run with a rejected policy: $(cat "$tmp/err")"
"$bin" run --dir "$tmp/d0" -- /nonexistent/cmd 2>/dev/null; [ $? -eq 127 ] || fail "run: exec failure"

# run: an option left out takes what the environment already says, checked as the option is.
# (The inherited policy was passed on unchecked while the banner said "none", and an inherited
# control-plane directory was replaced by a host-local one.)
NCCLBPF_POLICY=$divz "$bin" run --dir "$tmp/d0" --plugin "$plugin" -- touch "$tmp/started" 2>"$tmp/err"
[ $? -eq 1 ] || fail "run with a rejected NCCLBPF_POLICY: exit status"
[ -e "$tmp/started" ] && fail "run with a rejected NCCLBPF_POLICY started the command"
grep -q "would not load, the job is not started" "$tmp/err" ||
	fail "run with a rejected NCCLBPF_POLICY: $(cat "$tmp/err")"
mkdir -m 700 "$tmp/shared"
out=$(cd "$vdir" && NCCLBPF_POLICY=version1.o NCCLBPF_CP_DIR=$tmp/shared NCCLBPF_JOB=j7 \
	"$bin" run --plugin "$plugin" -- sh -c 'echo $NCCLBPF_POLICY $NCCLBPF_CP_DIR $NCCLBPF_JOB' 2>"$tmp/err")
[ "$out" = "$(realpath "$vdir/version1.o") $tmp/shared j7" ] || fail "run: inherited settings: '$out'"
grep -q "policy $(realpath "$vdir/version1.o"), control plane $tmp/shared (job j7)" "$tmp/err" ||
	fail "run: the banner does not name the inherited settings: $(cat "$tmp/err")"
out=$(NCCLBPF_CP_DIR=$tmp/shared NCCLBPF_JOB=j7 "$bin" run --dir "$tmp/d0" --job j8 --plugin "$plugin" \
	-- sh -c 'echo $NCCLBPF_CP_DIR $NCCLBPF_JOB' 2>/dev/null)
[ "$out" = "$tmp/d0 j8" ] || fail "run: options override the environment: '$out'"
NCCLBPF_JOB=../x "$bin" run --plugin "$plugin" -- true 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "NCCLBPF_JOB '../x'" "$tmp/err" || fail "run: bad NCCLBPF_JOB: $(cat "$tmp/err")"
NCCL_TUNER_PLUGIN=/opt/other/libtuner.so "$bin" run --dir "$tmp/d0" --plugin "$plugin" -- true 2>"$tmp/err"
grep -q "^ncclbpf run: NCCL_TUNER_PLUGIN was /opt/other/libtuner.so; the job gets $(realpath "$plugin") instead" \
	"$tmp/err" || fail "run: a replaced NCCL_TUNER_PLUGIN is not said: $(cat "$tmp/err")"

# A job of 3 ranks through ncclbpf run.
# A rank waits this long for a reload decision before it aborts it: long enough that a loaded
# machine never turns a commit into a time-out abort.
export NCCLBPF_CP_POLL_MS=2 NCCLBPF_CP_LEAD_CALLS=32 NCCLBPF_WATCH=0 NCCLBPF_CP_WAIT_MS=60000
"$bin" run --policy "$vdir/version1.o" --dir "$tmp/d" -- "$test_cp" ranks "$plugin" 3 "$tmp/stop" 2>"$tmp/ranks.err" &
for _ in $(seq 600); do # 60 s hang guard
	[ "$(ls "$tmp/d/comms/"*/members 2>/dev/null | wc -l)" -ge 3 ] && break
	sleep 0.1
done
"$bin" reload --job --timeout 120 --dir "$tmp/d" "$vdir/version2.o" >"$tmp/r1" 2>&1
rc=$?
cat "$tmp/r1"
[ $rc -eq 0 ] || fail "reload --job: exit $rc"
[ "$(grep -c ': active at seq [0-9]* (g=1)$' "$tmp/r1")" -eq 3 ] || fail "reload --job: three ranks active"
[ "$(grep -o 'active at seq [0-9]*' "$tmp/r1" | sort -u | wc -l)" -eq 1 ] || fail "reload --job: one seq"
grep -q "1 communicator: 1 committed, 0 aborted" "$tmp/r1" || fail "reload --job: summary"

printf 'not a bundle' >"$tmp/bad.o"
"$bin" reload --job --timeout 120 --dir "$tmp/d" "$tmp/bad.o" >"$tmp/r2" 2>&1
rc=$?
cat "$tmp/r2"
[ $rc -eq 1 ] || fail "reload --job of a bad bundle: exit $rc (want 1)"
# A rank that sees the abort before its own verdict reports the failing member's reason.
[ "$(grep -c ': not changed: \(abort member [^ ]* \)\?failed: ' "$tmp/r2")" -eq 3 ] || fail "reload --job bad: three ranks say why"

# A bundle the verifier rejects: every rank's line and the abort carry the verifier's message
# whole (it was cut at 150 and 250 characters, and the decision record at 300).
"$bin" reload --job --timeout 120 --dir "$tmp/d" "$divz" >"$tmp/r5" 2>&1
rc=$?
cat "$tmp/r5"
[ $rc -eq 1 ] || fail "reload --job of div_zero.o: exit $rc (want 1)"
whole="insn 2: R1 division by zero possible: divisor R1=scalar(.*var_off=(0x0; 0xffffffff)) may be 0; check it first"
[ "$(grep -c ": not changed: \(abort member [^ ]* \)\?failed: program 'div_zero'.*$whole" "$tmp/r5")" -eq 3 ] ||
	fail "reload --job div_zero: three ranks give the verifier's whole message"
grep -q ": abort member [^ ]* failed: program 'div_zero'.*$whole (reload " "$tmp/r5" ||
	fail "reload --job div_zero: the abort gives the whole message"

"$bin" reload --job --timeout 120 --dir "$tmp/d" "$tmp/missing.o" >"$tmp/r3" 2>&1
[ $? -eq 1 ] && grep -q "cannot read" "$tmp/r3" || fail "reload --job of a missing bundle: $(cat "$tmp/r3")"
"$bin" reload --job --timeout 120 --dir "$tmp/empty" "$vdir/version2.o" >"$tmp/r4" 2>&1
[ $? -eq 1 ] && grep -q "no job registered" "$tmp/r4" || fail "reload --job without a job: $(cat "$tmp/r4")"

touch "$tmp/stop"
wait
grep -q WARN "$tmp/ranks.err" && ! grep -q "refused here" "$tmp/ranks.err" && fail "ranks warned: $(cat "$tmp/ranks.err")"

# A uniform map (tuner_cfg: the tuner reads it, no program writes it) updated on one rank's PID
# changes on every rank of the job at one seq.
rm -f "$tmp/stop"
"$bin" run --policy "$mpol" --dir "$tmp/m" -- "$test_cp" ranks "$plugin" 2 "$tmp/stop" 2>"$tmp/mranks.err" &
for _ in $(seq 600); do # 60 s hang guard
	[ "$(ls "$tmp/m/procs/"*.sock 2>/dev/null | wc -l)" -ge 2 ] &&
		[ "$(ls "$tmp/m/comms/"*/members 2>/dev/null | wc -l)" -ge 2 ] && break
	sleep 0.1
done
pids=$(ls "$tmp/m/procs/"*.sock | sed 's/.*\.\([0-9]*\)\.sock$/\1/')
first=$(echo "$pids" | head -1)
"$bin" map update "$first" tuner_cfg u32:1 u64:7 --dir "$tmp/m" >"$tmp/m1" 2>&1
rc=$?
cat "$tmp/m1"
[ $rc -eq 0 ] || fail "map update of a uniform map: exit $rc"
[ "$(grep -c ': active at seq [0-9]* (g=1)$' "$tmp/m1")" -eq 2 ] || fail "map update: two ranks active"
[ "$(grep -o 'active at seq [0-9]*' "$tmp/m1" | sort -u | wc -l)" -eq 1 ] || fail "map update: one seq"
for p in $pids; do
	"$bin" map dump "$p" tuner_cfg --dir "$tmp/m" >"$tmp/m2" 2>&1
	grep -q '^  key 1: value 7$' "$tmp/m2" || fail "map dump of rank $p: $(cat "$tmp/m2")"
	"$bin" stat "$p" --dir "$tmp/m" >"$tmp/m3" 2>&1
	grep -q "^communicator 0: .*, control plane g=1 (bundle hash [0-9a-f]*)" "$tmp/m3" ||
		fail "stat of rank $p: no g=1: $(grep communicator "$tmp/m3")"
done
touch "$tmp/stop"
wait
# A communicator whose only member record a killed process left, under a pid the kernel has
# since given to another (live) process: no live communicator to reload. With the live
# process's own start time the record counts (the reload then waits for its acknowledgement
# and aborts at the time-out).
sleep 600 &
live=$!
start=$(sed 's/.*) //' "/proc/$live/stat" | cut -d' ' -f20)
host=$(hostname)
host=${host%%.*}
gdir="$tmp/g/comms/00000000000000aa/members"
mkdir -p "$gdir"
member() {
	printf 'member=%s.%s.0\ncomm=00000000000000aa\nn_ranks=1\nn_nodes=1\nhost=%s\npid=%s\nproc_start=%s\n' \
		"$host" "$live" "$host" "$live" "$1" >"$gdir/$host.$live.0"
}
member $((start + 1))
"$bin" reload --job --timeout 1 --dir "$tmp/g" "$vdir/version2.o" >"$tmp/g1" 2>&1
[ $? -eq 1 ] && grep -q "no live communicator" "$tmp/g1" || fail "reload to a reused pid's member record: $(cat "$tmp/g1")"
member "$start"
"$bin" reload --job --timeout 1 --dir "$tmp/g" "$vdir/version2.o" >"$tmp/g2" 2>&1
[ $? -eq 1 ] && grep -q "1 communicator: 0 committed, 1 aborted" "$tmp/g2" || fail "reload to a live member's record: $(cat "$tmp/g2")"
kill "$live"
wait "$live" 2>/dev/null

[ $fails -eq 0 ] && echo "cp_cli: OK" || echo "cp_cli: $fails failures"
exit $((fails != 0))
