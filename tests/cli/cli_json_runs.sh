#!/bin/bash
# `--json` of test-run and replay, parsed and checked: test-run of the shipped profiler policy
# on one finished collective (inputs with their defaults, the latency map's new element typed by
# BTF, the ring buffer's record) and of a tuner (outputs with NCCL's names); replay of the
# shipped DGX trace with size_aware (decision groups that add up to the calls, the maps shown).
#   cli_json_runs.sh NCCLBPF POLICY-DIR TRACE JSON_EXPECT.py
bin=$1
pol=$2
trace=$3
jx=$4
. "$(dirname "$0")/common.sh"

check() {
	python3 "$jx" "$tmp/out" "$@" >"$tmp/jx" || fail "$name: $(cat "$tmp/jx")"
}

name="test-run --json profiler"
run_cmd 0 "$name" test-run --json "$pol/profiler_latency.o" \
	--ctx event=2,comm_id=7,rank=1,seq=9,coll_type=AllReduce,n_bytes=1048576,duration_ns=5000
check 'd["program"] == "profiler_latency" and d["type"] == "profiler_coll_end" and d["return"] == 0' \
	'd["runs"] == 1 and d["engine"] == "interp" and d["file"].endswith("profiler_latency.o")' \
	'[(i["value"], i["default"]) for i in d["inputs"] if i["field"] == "n_bytes"] == [(1048576, False)]' \
	'[(i["value"], i.get("symbol"), i["default"]) for i in d["inputs"] if i["field"] == "coll_type"] == [(4, "ALLREDUCE", False)]' \
	'[i["default"] for i in d["inputs"] if i["field"] == "n_ranks"] == [True]' \
	'd["outputs"] == [] and d["inputs_changed"] == []' \
	'[(c["map"], c["change"]) for c in d["map_changes"]] == [("latency", "added"), ("events", "record")]' \
	'd["map_changes"][0]["key"] == {"comm_id": 7, "rank": 1, "coll_type": 4, "bucket": 20, "_pad": 0}' \
	'd["map_changes"][0]["value"] == {"count": 1, "total_ns": 5000, "min_ns": 5000, "max_ns": 5000, "last_ns": 5000, "last_seq": 9}' \
	'len(d["map_changes"][0]["key_hex"]) == 48 and d["map_changes"][1]["size"] == 64'

name="test-run --json tuner"
run_cmd 0 "$name" test-run --json --quiet --repeat 3 "$pol/size_aware.o" \
	--ctx n_bytes=4096,coll_type=AllReduce
check 'd["runs"] == 3 and d["ns_per_run"] > 0' \
	'"inputs" not in d and "map_changes" not in d' \
	'[(o["field"], o.get("symbol")) for o in d["outputs"]][:2] == [("algorithm", "TREE"), ("protocol", "LL")]'

name="replay --json"
run_cmd 0 "$name" replay --json --policy "$pol/size_aware.o" "$trace"
check 'd["trace"] == "'"$trace"'" and d["policy"].endswith("size_aware.o") and d["api"] == 5' \
	'd["calls"] > 0 and sum(g["calls"] for g in d["groups"]) == d["calls"]' \
	'd["differ"] == sum(g["calls"] for g in d["groups"] if g["changed"])' \
	'all(set(g["recorded"]) == {"algo", "proto", "channels"} for g in d["groups"])' \
	'd["profiler"]["comms"] == 0 and "reload" not in d' \
	'isinstance(d["maps"], list)'

name="replay --json --policy none"
run_cmd 0 "$name" replay --json --policy none "$trace"
check 'd["policy"] is None and "maps" not in d'

name="replay --maps without a bundle"
run_cmd 2 "$name" replay --maps all --policy none "$trace"

finish cli_json_runs
