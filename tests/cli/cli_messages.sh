#!/bin/bash
# Messages that name what they concern: every command that reads an object names the file in
# a file error ("not an ELF file" too), and a rejection of an object built without -g (no
# .BTF.ext, so no source lines) says how to get them, while one built with -g quotes the line;
# a loop over the budget is named by its line, with the bound it compares against and the
# budget, and a loop without a constant bound is called that.
#   cli_messages.sh NCCLBPF CLANG SDK-INCLUDE SAMPLE.bpf.c LOOP_SAMPLE.bpf.c UNBOUNDED.o
bin=$1
clang=$2
sdk=$3
src=$4
loop_src=$5
unbounded=$6
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

"$clang" -O2 -g -target bpf -mcpu=v3 -I"$sdk" -c "$loop_src" -o "$tmp/loop.o" || fail "clang loop"
run_cmd 1 "verify of a loop over the budget" verify "$tmp/loop.o"
grep -q "long_loop (tuner): REJECTED: line [0-9]*: \`for (__u32 i = 0; i < 10000; i++)\`: insn [0-9]*: instructions on the worst-case path: [0-9]*, over the tuner budget of 4096; this loop compares against 10000" \
	"$tmp/err" || fail "loop over the budget: $(cat "$tmp/err")"
run_cmd 1 "verify of an unbounded loop" verify "$unbounded"
grep -q "REJECTED: line [0-9]*: \`while (i < ctx->n_bytes).*program too complex: instructions processed without finishing: [0-9]*, over the complexity limit of [0-9]*; this loop has no constant bound" \
	"$tmp/err" || fail "unbounded loop: $(cat "$tmp/err")"

finish cli_messages
