#!/bin/bash
# Messages that name what they concern: every command that reads an object names the file in
# a file error ("not an ELF file" too), and a rejection of an object built without -g (no
# .BTF.ext, so no source lines) says how to get them, while one built with -g quotes the line.
#   cli_messages.sh NCCLBPF CLANG SDK-INCLUDE SAMPLE.bpf.c
bin=$1
clang=$2
sdk=$3
src=$4
. "$(dirname "$0")/common.sh"

printf 'hello' >"$tmp/five.o"
for cmd in verify objdump test-run bench; do
	run_cmd 1 "$cmd of a 5-byte file" $cmd "$tmp/five.o"
	one_line "$cmd of a 5-byte file"
	grep -qF "$tmp/five.o: not an ELF file: 5 bytes" "$tmp/err" ||
		fail "$cmd does not name the file: $(cat "$tmp/err")"
done

"$clang" -O2 -target bpf -mcpu=v3 -I"$sdk" -c "$src" -o "$tmp/nog.o" || fail "clang (no -g)"
"$clang" -O2 -g -target bpf -mcpu=v3 -I"$sdk" -c "$src" -o "$tmp/g.o" || fail "clang -g"
run_cmd 1 "verify without -g" verify "$tmp/nog.o"
grep -q "$tmp/nog.o: deref_seq (tuner): REJECTED: insn [0-9]*: .*(compile with -g for source lines)" \
	"$tmp/err" || fail "no -g hint: $(cat "$tmp/err")"
run_cmd 1 "verify with -g" verify "$tmp/g.o"
grep -q "REJECTED: line [0-9]*: \`.*ctx->seq" "$tmp/err" || fail "no source line: $(cat "$tmp/err")"
grep -q "compile with -g" "$tmp/err" && fail "-g hint although built with -g: $(cat "$tmp/err")"

finish cli_messages
