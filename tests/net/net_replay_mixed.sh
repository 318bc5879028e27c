#!/bin/bash
# A trace with tuner calls and net events (two recorded traces, concatenated) replayed at once:
# the tuner calls through the plugin, the net events on the policy's net programs, both sides'
# maps shown (net_replay_check.py counters).
#   net_replay_mixed.sh NCCLBPF PLUGIN POLICY TUNER_TRACE NET_TRACE OUT
set -u
cli=$1 lib=$2 policy=$3 out=$6
cat "$4" "$5" >"$out" || exit 1
"$cli" replay --plugin "$lib" --policy "$policy" --json "$out" >"$out.json" ||
	{ echo "FAIL: replay"; exit 1; }
python3 "$(dirname "$0")/net_replay_check.py" "$out" "$out.json" counters || exit 1
echo "net_replay_mixed: OK"
