#!/bin/bash
# Whole-listing comparison: compiles disasm_sample.bpf.c with clang for -mcpu=v1..v3, feeds each
# code section's bytes to `ncclbpf disasm --text` and requires the listing to equal
# llvm-objdump's line for line. Skipped (exit 77) when clang or the llvm tools are missing, failed
# where those oracles are required (tests/common/skip.sh).
#   disasm_llvm.sh NCCLBPF SAMPLE.c
set -u
bin=$1
src=$2
. "$(dirname "$0")/../common/skip.sh"
for t in clang llvm-objdump llvm-objcopy od; do
	if ! command -v "$t" >/dev/null 2>&1; then
		oracle=llvm-objdump
		[ "$t" = clang ] && oracle=clang
		skip_test "$oracle" "$t not installed"
	fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
lines=0
for cpu in v1 v2 v3; do
	obj=$tmp/sample_$cpu.o
	if ! clang -O2 -target bpf -mcpu=$cpu -c "$src" -o "$obj"; then
		echo "FAIL: clang -mcpu=$cpu could not compile $src"
		exit 1
	fi
	for sec in .text prog; do
		llvm-objcopy -O binary --only-section="$sec" "$obj" "$tmp/code.bin"
		od -An -v -tx1 "$tmp/code.bin" >"$tmp/code.hex"
		if ! "$bin" disasm --text <"$tmp/code.hex" >"$tmp/ours.txt" 2>"$tmp/err.txt"; then
			echo "FAIL: ncclbpf disasm rejected $sec (-mcpu=$cpu): $(cat "$tmp/err.txt")"
			fail=1
			continue
		fi
		# Instruction lines only, without the symbolic " <label>" after jump offsets.
		llvm-objdump -d --no-show-raw-insn --section="$sec" "$obj" |
			sed -n 's/^ *[0-9][0-9]*:\t//p' | sed 's/ <[^ >]*>$//' >"$tmp/llvm.txt"
		n=$(wc -l <"$tmp/llvm.txt")
		if [ "$n" -lt 10 ]; then
			echo "FAIL: llvm-objdump listed only $n instructions of $sec (-mcpu=$cpu)"
			fail=1
		elif ! diff -u "$tmp/llvm.txt" "$tmp/ours.txt" >"$tmp/diff.txt"; then
			echo "FAIL: $sec (-mcpu=$cpu) differs from llvm-objdump (- llvm, + ours):"
			head -40 "$tmp/diff.txt"
			fail=1
		fi
		lines=$((lines + n))
	done
done
echo "disasm vs llvm-objdump: $lines instructions compared over v1, v2, v3"
exit $fail
