#!/usr/bin/env bash
# scripts/gpu-e2e.sh's check that NCCL used the policy's decisions (gpu_e2e_check.py decisions)
# on a made-up NCCL TUNING log and rank trace with known answers: agreeing calls pass; a call
# where NCCL used another protocol fails; calls traced without a policy (ver=0, where the trace
# holds NCCL's own choice and so agrees with any log) fail too.
# Usage: e2e_decisions.sh SOURCE_DIR WORKDIR
set -u
SRC=$1 W=$2
rm -rf "$W"
mkdir -p "$W"
cat >"$W/nccl.log" <<'LOG'
vm:1:1 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}
vm:1:1 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}
LOG
call() { # BYTES ALGO PROTO VER
	echo "call c=1.0 seq=0 coll=4 bytes=$1 pipe=1 reg=0 table=7x3 cost=- algo=$2 proto=$3 ch=2 ver=$4"
}
{ call 1024 0 0 1; call 1048576 1 2 1; } >"$W/good"
{ call 1024 0 0 1; call 1048576 1 0 1; } >"$W/other_proto"
{ call 1024 0 0 0; call 1048576 1 2 0; } >"$W/no_policy"
fails=0
expect() { # WANT_RC WANT_LINE TRACE
	local out rc
	out=$(python3 "$SRC/scripts/gpu_e2e_check.py" decisions "$W/nccl.log" "$W/$3")
	rc=$?
	echo "$out"
	if [ $rc -ne "$1" ] || ! grep -qF -- "$2" <<<"$out"; then
		echo "FAIL: decisions $3: exit $rc, want $1 and '$2'"
		fails=$((fails + 1))
	fi
}
expect 0 "decisions: 2 NCCL TUNING lines, 2 with a policy algorithm compared, 0 mismatches" good
expect 1 "FAIL decisions: policy and NCCL disagree" other_proto
expect 1 "FAIL decisions: 2 of 2 traced calls ran without a policy (ver=0)" no_policy
[ $fails -eq 0 ] || exit 1
echo "e2e_decisions: OK"
