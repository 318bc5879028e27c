#!/bin/bash
# `ncclbpf verify` as veristat: many objects, one row per program, -o csv|json, --compare.
#   - a table row per program of every object (accepted and rejected), exit 1 when one is
#     rejected, the rejection on stderr as one line naming the file and program, never on
#     stdout;
#   - -o csv: a header and one row per program, with the numbers of the table;
#   - --json (= -o json): parsed, every object with its programs and the bundle's usage;
#   - --compare BEFORE AFTER between a CSV of an earlier run and objects: rows matched by file
#     name and program, a program in one run only shown with "-", exit 1 only when AFTER
#     rejects; the JSON of a comparison carries both sides.
#   cli_verify.sh NCCLBPF POLICY-DIR JSON_EXPECT.py
bin=$1
pol=$2
jx=$3
. "$(dirname "$0")/common.sh"

run_cmd 1 "table" verify "$pol/noop.o" "$pol/size_aware.o" "$pol/unsafe/div_zero.o"
grep -Eq "noop\.o +noop +tuner +accepted +2 " "$tmp/out" || fail "table: noop row: $(cat "$tmp/out")"
grep -Eq "size_aware\.o +size_aware +tuner +accepted " "$tmp/out" || fail "table: size_aware row"
grep -Eq "div_zero\.o +div_zero +tuner +rejected " "$tmp/out" || fail "table: div_zero row"
grep -q "division by zero" "$tmp/out" && fail "table: the rejection's reason is on stdout"
one_line "rejection"
grep -q "^ncclbpf verify: $pol/unsafe/div_zero.o: div_zero (tuner): REJECTED: line [0-9]*: .*division by zero" \
	"$tmp/err" || fail "rejection line: $(cat "$tmp/err")"

run_cmd 0 "csv" verify -o csv "$pol/noop.o" "$pol/size_aware.o"
[ "$(head -1 "$tmp/out")" = "file,program,section,verdict,insns,processed,peak_states,worst_case_insns,insn_budget,time_us,ctx_read,error" ] ||
	fail "csv header: $(head -1 "$tmp/out")"
[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "csv: not one row per program: $(cat "$tmp/out")"
grep -q "^$pol/noop.o,noop,tuner,accepted,2,2,0,2,4096,[0-9.]*,,$" "$tmp/out" ||
	fail "csv noop row: $(cat "$tmp/out")"
cp "$tmp/out" "$tmp/before.csv"

run_cmd 1 "json" verify --json "$pol/noop.o" "$pol/net_counters.o" "$pol/unsafe/div_zero.o"
python3 "$jx" "$tmp/out" \
	'[o["file"].split("/")[-1] for o in d["objects"]] == ["noop.o", "net_counters.o", "div_zero.o"]' \
	'd["accepted"] == 2 and d["rejected"] == 1' \
	'd["objects"][0]["programs"][0]["name"] == "noop"' \
	'd["objects"][0]["programs"][0]["insns"] == 2' \
	'd["objects"][0]["programs"][0]["ctx_read"] == []' \
	'd["objects"][0]["bundle"]["progs"] == 1 and d["objects"][0]["bundle"]["progs_limit"] == 16' \
	'd["objects"][1]["programs"][0]["section"] == "net/complete/time_every=8"' \
	'd["objects"][1]["programs"][0]["ctx_read"] == ["bytes", "duration_ns/8", "op", "dev", "peer_addr"]' \
	'd["objects"][2]["programs"][0]["verdict"] == "rejected"' \
	'"division by zero" in d["objects"][2]["programs"][0]["error"]' \
	'all(p["error"] is None for o in d["objects"][:2] for p in o["programs"])' >"$tmp/jx" ||
	fail "json: $(cat "$tmp/jx")"
run_cmd 0 "-o json equals --json" verify -o json "$pol/noop.o"
python3 "$jx" "$tmp/out" 'd["accepted"] == 1' >"$tmp/jx" || fail "-o json: $(cat "$tmp/jx")"

# Before: noop and size_aware (CSV). After: size_aware and the rejected div_zero (objects).
run_cmd 1 "compare with objects" verify --compare "$tmp/before.csv" "$pol/unsafe/div_zero.o"
run_cmd 2 "compare takes two sides" verify --compare "$tmp/before.csv"
grep -q "compare takes BEFORE and AFTER" "$tmp/err" || fail "compare usage: $(cat "$tmp/err")"
mkdir "$tmp/after"
cp "$pol/size_aware.o" "$pol/unsafe/div_zero.o" "$tmp/after/"
run_cmd 1 "compare with a directory" verify --compare "$tmp/before.csv" "$tmp/after"
grep -Eq "^size_aware\.o +size_aware +accepted +accepted +([0-9]+) +\1 +\+0 \(\+0\.0%\)" "$tmp/out" ||
	fail "compare: size_aware unchanged: $(cat "$tmp/out")"
grep -Eq "^noop\.o +noop +accepted +- " "$tmp/out" || fail "compare: noop only before"
grep -Eq "^div_zero\.o +div_zero +- +rejected " "$tmp/out" || fail "compare: div_zero only after"
run_cmd 0 "compare, after accepted" verify --compare "$tmp/before.csv" "$pol/noop.o"
run_cmd 1 "compare json" verify --compare -o json "$tmp/before.csv" "$tmp/after"
python3 "$jx" "$tmp/out" \
	'sorted((p["file"], p["program"]) for p in d["programs"]) == [("div_zero.o", "div_zero"), ("noop.o", "noop"), ("size_aware.o", "size_aware")]' \
	'[p["after"] for p in d["programs"] if p["program"] == "noop"] == [None]' \
	'[p["before"]["insns"] == p["after"]["insns"] for p in d["programs"] if p["program"] == "size_aware"] == [True]' \
	'[p["before"] for p in d["programs"] if p["program"] == "div_zero"] == [None]' >"$tmp/jx" ||
	fail "compare json: $(cat "$tmp/jx")"
printf 'file,program\nx.o\n' >"$tmp/bad.csv"
run_cmd 1 "compare, a CSV that is not ours" verify --compare "$tmp/bad.csv" "$pol/noop.o"
grep -q "bad.csv" "$tmp/err" || fail "bad csv: the error does not name the file: $(cat "$tmp/err")"
finish cli_verify
