#!/bin/bash
# Shell-level checks of `ncclbpf exec` and `ncclbpf disasm` that need more than a case file:
# binary garbage and NUL bytes on stdin, inputs at and beyond the size limits, a large memory
# argument, help output, the disassembler's listing and errors, and --elf objects.
#   cli_test.sh NCCLBPF [ELF-SAMPLE.bpf.c SDK-INCLUDE-DIR]
set -u
bin=$1
elf_src=${2:-}
sdk=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
checks=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# expect_ok NAME WANT-STDOUT STDIN-FILE ARGS...
expect_ok() {
	local name=$1 want=$2 in=$3
	shift 3
	checks=$((checks + 1))
	"$bin" "$@" <"$in" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc -ne 0 ] || [ "$(cat "$tmp/out")" != "$want" ] || [ -s "$tmp/err" ]; then
		fail "$name: exit $rc, stdout '$(head -c 200 "$tmp/out")', stderr '$(head -c 200 "$tmp/err")' (want '$want')"
	fi
}

# expect_err NAME SUBSTRING STDIN-FILE ARGS...: non-zero exit (not a signal), one stderr line.
expect_err() {
	local name=$1 sub=$2 in=$3
	shift 3
	checks=$((checks + 1))
	"$bin" "$@" <"$in" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	local lines
	lines=$(wc -l <"$tmp/err")
	if [ $rc -eq 0 ] || [ $rc -ge 126 ]; then
		fail "$name: exit status $rc (want 1 or 2); stderr: $(head -c 300 "$tmp/err")"
	elif [ "$lines" -ne 1 ] || [ "$(tail -c 1 "$tmp/err" | od -An -c | tr -d ' ')" != '\n' ]; then
		fail "$name: stderr has $lines lines: $(head -c 300 "$tmp/err")"
	elif ! grep -qF -- "$sub" "$tmp/err"; then
		fail "$name: stderr lacks '$sub': $(cat "$tmp/err")"
	elif [ "$1" = exec ] && [ -s "$tmp/out" ]; then
		fail "$name: stdout not empty: $(head -c 200 "$tmp/out")"
	fi
}

ret42=$tmp/ret42.hex
printf 'b7 00 00 00 2a 00 00 00\n95 00 00 00 00 00 00 00\n' >"$ret42"
expect_ok "exec returns r0" 0x2a "$ret42" exec
expect_ok "exec --interp" 0x2a "$ret42" exec --interp
expect_ok "options after the memory argument" 0x2a "$ret42" exec 0102 --interp
expect_ok "exec --help" "$("$bin" exec --help)" /dev/null exec --help
if "$bin" exec --jit <"$ret42" >/dev/null 2>&1; then
	expect_ok "exec --jit" 0x2a "$ret42" exec --jit
else
	expect_err "exec --jit without a JIT" "not available" "$ret42" exec --jit
fi

printf 'b7 00\0 00 00' >"$tmp/nul.hex"
expect_err "NUL byte on stdin" "invalid hex character 0x00" "$tmp/nul.hex" exec
head -c 4096 /dev/urandom >"$tmp/garbage.bin"
expect_err "binary garbage on stdin" "ncclbpf exec:" "$tmp/garbage.bin" exec
expect_err "garbage with --elf" "ncclbpf exec:" "$tmp/garbage.bin" exec --elf
expect_err "empty stdin" "empty program" /dev/null exec

# Size limits: 2^20 instructions is the most a program may have.
yes '07 00 00 00 01 00 00 00' | head -n $((1048576 - 1)) >"$tmp/big.hex"
echo '95 00 00 00 00 00 00 00' >>"$tmp/big.hex"
expect_ok "2^20 instructions run" 0xfffff "$tmp/big.hex" exec --interp
echo '95 00 00 00 00 00 00 00' >>"$tmp/big.hex"
expect_err "2^20 + 1 instructions" "more than" "$tmp/big.hex" exec
yes '95 00 00 00 00 00 00 00' | head -n $((1048576 + 2)) >"$tmp/huge.hex"
expect_err "input beyond the byte limit" "input larger than" "$tmp/huge.hex" exec
(echo 'b7 00 00 00 00 00 00 00'; yes '95 00 00 00 00 00 00 00' | head -n 200000) |
	tr -d '\n ' >"$tmp/onetoken.hex"
expect_err "one enormous token, odd" "odd number" <(cat "$tmp/onetoken.hex"; echo 0) exec
expect_ok "one enormous token" 0x0 "$tmp/onetoken.hex" exec

# A 30000-byte memory argument (close to the kernel's 128 KiB per-argument limit).
mem=$(head -c 30000 /dev/zero | od -An -v -tx1 | tr -d ' \n')
printf 'bf 20 00 00 00 00 00 00 95 00 00 00 00 00 00 00' >"$tmp/r2.hex"
expect_ok "large memory argument" 0x7530 "$tmp/r2.hex" exec "$mem"

# disasm
printf 'b7 01 00 00 ff ff ff ff 18 02 00 00 88 77 66 55 00 00 00 00 44 33 22 11\n61 10 04 00 00 00 00 00 95 00 00 00 00 00 00 00\n' >"$tmp/d.hex"
expect_ok "disasm listing" "$(printf '    0: r1 = -1\n    1: r2 = 1234605616436508552 ll\n    3: r0 = *(u32 *)(r1 + 4)\n    4: exit')" "$tmp/d.hex" disasm
expect_ok "disasm --text" "$(printf 'r1 = -1\nr2 = 1234605616436508552 ll\nr0 = *(u32 *)(r1 + 4)\nexit')" "$tmp/d.hex" disasm --text
printf 'ff 00 00 00 00 00 00 00 95 00 00 00 00 00 00 00' >"$tmp/bad.hex"
expect_err "disasm of an invalid opcode" "1 invalid instruction" "$tmp/bad.hex" disasm
expect_err "disasm of a truncated program" "not a multiple of 8" <(printf 'b7 00 00') disasm
expect_err "disasm of empty input" "empty program" /dev/null disasm
expect_err "disasm bad option" "unknown argument" "$ret42" disasm --bogus
expect_err "disasm --elf of empty input" "ncclbpf disasm: --elf: empty input" /dev/null disasm --elf
expect_err "disasm --elf of bad hex" "ncclbpf disasm: --elf: invalid hex" <(printf 'zz') disasm --elf
# the inspection commands read --dir alike (cli_dir_opt)
for c in ps stat top map; do
	expect_err "$c --dir without a value" "ncclbpf $c: --dir needs a value" /dev/null "$c" --dir
done

# --elf: a clang-compiled object through the loader (global data map, subprogram, two programs).
if [ -n "$elf_src" ] && command -v clang >/dev/null 2>&1; then
	obj=$tmp/sample.o
	if clang -O2 -g -target bpf -mcpu=v3 -I"$sdk" -c "$elf_src" -o "$obj"; then
		od -An -v -tx1 "$obj" >"$tmp/sample.hex"
		expect_ok "exec --elf (first program)" 0x2a "$obj" exec --elf
		expect_ok "exec --elf --prog" 0x7 "$obj" exec --elf --prog seven
		expect_ok "exec --elf from hex" 0x2a "$tmp/sample.hex" exec --elf --interp
		expect_err "exec --elf --prog unknown" "no program named 'nope'" "$obj" exec --elf --prog nope
		expect_err "exec --prog without --elf" "--prog needs --elf" "$ret42" exec --prog seven
		head -c 200 "$obj" >"$tmp/cut.o"
		expect_err "exec --elf of a truncated object" "ncclbpf exec:" "$tmp/cut.o" exec --elf
		expect_err "exec --elf of empty input" "empty input" /dev/null exec --elf
		expect_ok "disasm --elf --prog --text" "$(printf 'w0 = 7\nexit')" "$obj" disasm --elf --prog seven --text
		checks=$((checks + 1))
		if ! "$bin" disasm --elf <"$obj" | grep -qF 'r1 = map_value[0] + 0 ll'; then
			fail "disasm --elf does not show the global data reference"
		fi
	else
		fail "clang could not compile $elf_src"
	fi
else
	elf_skipped=1
fi

echo "cli_test: $((checks - fails)) of $checks checks passed"
[ $fails -eq 0 ] || exit 1
if [ "${elf_skipped:-0}" = 1 ]; then
	. "$(dirname "$0")/../common/skip.sh"
	skip_test clang "--elf checks not run (no clang or no sample given)"
fi
