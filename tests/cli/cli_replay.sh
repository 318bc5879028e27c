#!/bin/bash
# `ncclbpf replay` refuses a policy that does not load before replaying anything: a missing file
# and a bundle the verifier rejects (as --policy or --reload-policy) end in exit 1, one line on
# stderr naming the file, and no table on stdout.
#   cli_replay.sh NCCLBPF POLICY-DIR TRACE
bin=$1
pol=$2
trace=$3
. "$(dirname "$0")/common.sh"

# refused NAME FILE ARGS...: exit 1, one stderr line naming FILE, stdout empty.
refused() {
	local name=$1 file=$2
	shift 2
	run_cmd 1 "$name" replay "$@"
	one_line "$name"
	grep -qF "$file not loaded" "$tmp/err" || fail "$name: $file not named: $(cat "$tmp/err")"
	[ -s "$tmp/out" ] && fail "$name: printed a table: $(head -c 300 "$tmp/out")"
}

refused "missing policy" "$tmp/missing.o" --policy "$tmp/missing.o" "$trace"
refused "rejected policy" "$pol/unsafe/div_zero.o" --policy "$pol/unsafe/div_zero.o" "$trace"
grep -q "division by zero" "$tmp/err" || fail "rejected policy: no reason: $(cat "$tmp/err")"
refused "rejected reload policy" "$pol/unsafe/div_zero.o" --policy "$pol/noop.o" \
	--reload-at 10 --reload-policy "$pol/unsafe/div_zero.o" "$trace"

finish cli_replay
