#!/bin/bash
# `ncclbpf objdump --json`, parsed and checked: programs with their sections and types, maps
# with their sizes, a global data section's initial value typed by BTF (its variables by name),
# the disassembly with source lines unless --no-disasm.
#   cli_objdump_json.sh NCCLBPF BPF-TEST-DIR JSON_EXPECT.py
bin=$1
obj=$2/btf_values.o
jx=$3
. "$(dirname "$0")/common.sh"

check() {
	python3 "$jx" "$tmp/out" "$@" >"$tmp/jx" || fail "$name: $(cat "$tmp/jx")"
}

name="objdump --json --no-disasm"
run_cmd 0 "$name" objdump --json --no-disasm "$obj"
check 'd["file"] == "'"$obj"'"' \
	'[(p["name"], p["section"], p["type"]) for p in d["programs"]] == [("touch", "profiler", "profiler")]' \
	'"insns_text" not in d["programs"][0]' \
	'[m["name"] for m in d["maps"]] == ["typed", "percpu", "untyped", ".data", ".bss"]' \
	'[m["kind"] for m in d["maps"]] == ["maps", "maps", "maps", "data", "bss"]' \
	'[(m["key_size"], m["value_size"], m["max_entries"]) for m in d["maps"] if m["name"] == "typed"] == [(8, 72, 4)]' \
	'[m["initial_value"] for m in d["maps"] if m["name"] == ".data"] == [{"counter": 5}]' \
	'[m["initial_data"] for m in d["maps"] if m["name"] == ".data"] == ["0500000000000000"]' \
	'[m["initial_value"] for m in d["maps"] if m["name"] == ".bss"] == [{"last": {"start_ns": 0, "end_ns": 0}}]' \
	'[m["initial_value"] for m in d["maps"] if m["name"] == "typed"] == [None]'

name="objdump --json"
run_cmd 0 "$name" objdump --json "$obj"
check 'len(d["programs"][0]["insns_text"]) > 0' \
	'd["programs"][0]["insns_text"][0]["pc"] == 0' \
	'any(i.get("source", {}).get("file") == "btf_values.c" for i in d["programs"][0]["insns_text"])' \
	'any("counter++" in i.get("source", {}).get("text", "") for i in d["programs"][0]["insns_text"])'
finish cli_objdump_json
