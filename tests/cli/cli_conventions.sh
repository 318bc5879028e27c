#!/bin/bash
# The conventions every `ncclbpf` sub-command follows (tools/ncclbpf/cli.h), checked for every
# command the binary lists, so a new command is covered the day it registers:
#   - `CMD --help` and `CMD -h` print "usage: ncclbpf CMD" on stdout, nothing on stderr, exit 0,
#     and have no side effect (no file or directory appears, no process is started);
#   - `ncclbpf help CMD` prints the same text; `ncclbpf help` lists every command;
#   - an unknown option, or an option without its value, is a usage error: exit 2, one line on
#     stderr with the synopsis;
#   - a missing file is a failure: exit 1, one line on stderr that names the file;
#   - so is a file that is not a regular file (a FIFO nobody writes, a directory, a device),
#     at once: the line says what it is (a FIFO used to block the command for good).
#   cli_conventions.sh NCCLBPF
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/common.sh"

run() { run_cmd "$@"; }

# Everything a command could touch lives under $w (outputs go to $tmp, outside it).
w=$tmp/w
mkdir -p "$w/cwd" "$w/home" "$w/files"
mkdir -m 700 "$w/cp"
export HOME=$w/home TMPDIR=$w/home NCCLBPF_CP_DIR=$w/cp
cd "$w/cwd" || exit 1
unset NCCLBPF_POLICY NCCLBPF_TRACE

run 0 "ncclbpf help" help
cmds=$(sed -n '/^commands:/,/^$/p' "$tmp/out" | awk 'NF > 1 { print $1 }')
[ "$(echo "$cmds" | wc -w)" -ge 10 ] || fail "ncclbpf help lists too few commands: $cmds"
for c in verify objdump ps stat map reload replay run test-run exec disasm; do
	echo "$cmds" | grep -qx "$c" || fail "ncclbpf help does not list $c"
done
run 0 "ncclbpf --help" --help
grep -q '^commands:' "$tmp/out" || fail "--help: no command list"
run 2 "ncclbpf without a command"
grep -q '^commands:' "$tmp/err" || fail "no command: the list is not on stderr"
run 2 "unknown command" frobnicate
one_line "unknown command"
run 2 "help of an unknown command" help frobnicate
one_line "help of an unknown command"
run 0 "--version" --version
grep -qE '^ncclbpf [0-9]+\.[0-9]+' "$tmp/out" || fail "--version: $(cat "$tmp/out")"

# --help everywhere: the options a command would act on come first, so that a command that ran
# anyway would show it (run would create --dir and exec the program, reload would touch PATH).
echo original >"$w/files/target.o"
touch -d '2001-01-01 00:00:00' "$w/files/target.o"
snapshot() { (cd "$w" && find . -printf '%p %s %T@\n' | sort); }
before=$(snapshot)
for c in $cmds; do
	case $c in
	run) args=(--dir "$w/created-by-run" --policy "$w/files/target.o") ;;
	reload) args=("$w/files/target.o") ;;
	*) args=() ;;
	esac
	for h in --help -h; do
		run 0 "$c $h" "$c" "${args[@]}" "$h"
		head -n 1 "$tmp/out" | grep -q "^usage: ncclbpf $c" || fail "$c $h: no usage on stdout: $(head -c 200 "$tmp/out")"
		[ -s "$tmp/err" ] && fail "$c $h: wrote to stderr: $(head -c 200 "$tmp/err")"
	done
	cp "$tmp/out" "$tmp/help.out"
	run 0 "help $c" help "$c"
	cmp -s "$tmp/out" "$tmp/help.out" || fail "help $c differs from $c --help"
	after=$(snapshot)
	[ "$before" = "$after" ] ||
		fail "$c --help changed files: $(diff <(echo "$before") <(echo "$after") | head -5)"

	# An unknown option is a usage error with the synopsis (bench and demo printed their whole
	# help on stderr instead).
	run 2 "$c --no-such-option" "$c" --no-such-option
	one_line "$c --no-such-option"
	grep -q "usage: ncclbpf $c" "$tmp/err" || fail "$c --no-such-option: no synopsis: $(cat "$tmp/err")"
	[ -s "$tmp/out" ] && fail "$c --no-such-option: wrote to stdout"
done
# An option without its value: a usage error in the one wording of cli_opt, naming the option.
for spec in "run --job" "run --dir" "reload --comm" "replay --policy" "test-run --ctx" "verify -o" \
	"top --interval"; do
	# shellcheck disable=SC2086
	run 2 "$spec without a value" $spec
	one_line "$spec without a value"
	grep -q -- "^ncclbpf ${spec%% *}: ${spec#* } needs a value; usage: ncclbpf ${spec%% *}" "$tmp/err" ||
		fail "$spec without a value: $(cat "$tmp/err")"
done
# map update's KEY and VALUE: text that is not hex bytes or typed integers is a usage error that
# says what is wrong with it (the runtime's one hex decoder words it), before any process is asked.
bad_bytes() {
	local want=$1
	shift
	run 2 "map update: $want" map update 999999999 m "$@"
	one_line "map update: $want"
	grep -qF -- "$want" "$tmp/err" || fail "map update: want '$want': $(head -c 300 "$tmp/err")"
}
bad_bytes "KEY '123': 3 hex digits, an odd number" 123 u64:1
bad_bytes "KEY '00000g00': 'g' at position 6 is not a hex digit" 00000g00 u64:1
bad_bytes "VALUE '0x': no bytes" u32:0 0x
bad_bytes "KEY 'u8:300': 300 does not fit in u8" u8:300 u64:1
bad_bytes "VALUE 'u64:-1': '-1' is not a number" u32:0 u64:-1
bad_bytes "KEY 'u33:1': 'u33:1' is not u8:, u16:, u32: or u64:" u33:1 u64:1
bad_bytes "VALUE '$(printf '%044d' 0)...': 3001 bytes, more than 3000" u32:0 "$(printf '%06002d' 0)"
# `run -- CMD --help` is CMD's help, not ours.
run 0 "run passes --help on" run --dir "$w/cp-run" -- sh -c 'echo "[$1]"' sh --help
grep -qx '\[--help\]' "$tmp/out" || fail "run -- sh --help: $(cat "$tmp/out")"

# A missing file: exit 1, one line naming it.
missing=$tmp/no-such-file.o
expect_missing() {
	local name=$1
	shift
	run 1 "$name: missing file" "$@"
	one_line "$name: missing file"
	grep -qF "$missing" "$tmp/err" || fail "$name: missing file not named: $(cat "$tmp/err")"
}
expect_missing verify verify "$missing"
expect_missing objdump objdump "$missing"
expect_missing test-run test-run --prog p "$missing"
expect_missing replay replay "$missing"
expect_missing "replay --policy" replay --policy "$missing" /dev/null
expect_missing reload reload "$missing"
expect_missing "reload --check" reload --check "$w/files/target.o" "$missing"
expect_missing "run --policy" run --dir "$w/cp-run" --policy "$missing" -- true
expect_missing tune tune -o "$tmp/out.o" --template "$w/files/target.o" "$missing"
# Not a regular file: refused at once, saying what it is. The FIFO has no writer: reading it
# would wait for good, hence the timeout.
mkfifo "$w/files/fifo"
expect_not_regular() {
	local name=$1 path=$2 what=$3
	shift 3
	timeout 20 "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	[ $rc -eq 124 ] && fail "$name: still blocked after 20 s"
	[ $rc -eq 1 ] || fail "$name: exit $rc, want 1 (stderr: $(head -c 300 "$tmp/err"))"
	one_line "$name"
	grep -qF "$path is $what, not a regular file" "$tmp/err" ||
		fail "$name: want '$path is $what, not a regular file': $(head -c 300 "$tmp/err")"
}
fifo=$w/files/fifo
expect_not_regular "verify of a FIFO" "$fifo" "a FIFO" verify "$fifo"
expect_not_regular "verify of a directory" "$w/files" "a directory" verify "$w/files"
expect_not_regular "objdump of a device" /dev/zero "a character device" objdump /dev/zero
expect_not_regular "test-run of a FIFO" "$fifo" "a FIFO" test-run --prog p "$fifo"
expect_not_regular "replay of a FIFO trace" "$fifo" "a FIFO" replay "$fifo"
expect_not_regular "replay --policy of a FIFO" "$fifo" "a FIFO" replay --policy "$fifo" /dev/null
expect_not_regular "reload of a FIFO" "$fifo" "a FIFO" reload "$fifo"
expect_not_regular "run --policy of a FIFO" "$fifo" "a FIFO" run --dir "$w/cp-run" --policy "$fifo" -- true
expect_not_regular "tune of a FIFO sweep" "$fifo" "a FIFO" tune -o "$tmp/out.o" --template "$w/files/target.o" "$fifo"
expect_not_regular "bench of a FIFO" "$fifo" "a FIFO" bench --rounds 1 "$fifo"
# An object larger than the limit is named as such (it was 'Argument list too long').
truncate -s 65M "$tmp/huge.o"
run 1 "verify of a huge file" verify "$tmp/huge.o"
grep -qF "$tmp/huge.o" "$tmp/err" && grep -q "67108864" "$tmp/err" ||
	fail "verify of a huge file: $(head -c 300 "$tmp/err")"

# Processes: a pid that runs no plugin is named.
for c in "stat" "map list" "map dump"; do
	# shellcheck disable=SC2086
	run 1 "$c of a pid without the plugin" $c 999999999 $([ "$c" = "map dump" ] && echo m)
	one_line "$c of a pid without the plugin"
	grep -q 999999999 "$tmp/err" || fail "$c: pid not named: $(cat "$tmp/err")"
done
run 2 "stat with a bad pid" stat 12abc
one_line "stat with a bad pid"

finish cli_conventions
