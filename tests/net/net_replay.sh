#!/bin/bash
# Records a 2-rank loopback ring with POLICY (net_trace_record.sh), then replays the trace with
# `ncclbpf replay --json` and each REPLAY_POLICY=KIND pair, checking what ran and the maps
# against the trace (net_replay_check.py KIND).
#   net_replay.sh TEST_NET PLUGIN NCCLBPF POLICY OUT OPS_WITH_PROGRAM|- REPLAY_POLICY=KIND...
set -u
test_net=$1 lib=$2 cli=$3 policy=$4 out=$5 ops=$6
shift 6
dir=$(dirname "$0")
[ "$ops" = - ] && ops=
[ $# -gt 0 ] || { echo "FAIL: no replay policy given"; exit 1; }
# shellcheck disable=SC2086
bash "$dir/net_trace_record.sh" "$test_net" "$lib" "$policy" "$out" $ops || exit 1
for pair in "$@"; do
	p=${pair%=*} kind=${pair##*=}
	"$cli" replay --plugin "$lib" --policy "$p" --json "$out" >"$out.$kind.json" ||
		{ echo "FAIL: replay with $p"; exit 1; }
	python3 "$dir/net_replay_check.py" "$out" "$out.$kind.json" "$kind" || exit 1
done
echo "net_replay: OK"
