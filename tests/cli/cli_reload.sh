#!/bin/bash
# `ncclbpf reload` in file mode, as an operator meets it:
#   - --check (and --dry-run) verify only: the target stays byte-identical with its mtime
#     untouched, for a bundle that verifies and for one the verifier rejects (exit 1, one line);
#   - without --check NEW is installed at PATH, once it verified here: a NEW (or, to touch, a PATH)
#     that would not load is refused with the reason and nothing changes;
#   - a bundle that the processes of a multi-rank job use (two live process records naming it)
#     gets a warning pointing to --job; a bundle one single-rank process uses does not.
#   cli_reload.sh NCCLBPF POLICY-DIR
bin=$1
pol=$2
. "$(dirname "$0")/common.sh"
sleeper=
cleanup() { [ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null; }

run() {
	local want=$1 name=$2
	shift 2
	run_cmd "$want" "$name" reload "$@"
}

state() { stat -c '%s %Y %i' "$tmp/target.o"; }

cp "$pol/size_aware.o" "$tmp/target.o"
touch -d '2001-01-01 00:00:00' "$tmp/target.o"
orig=$(state)
export NCCLBPF_CP_DIR=$tmp/cp
mkdir -m 700 "$tmp/cp"

for flag in --check --dry-run; do
	run 0 "$flag with a good bundle" "$flag" "$tmp/target.o" "$pol/noop.o"
	grep -q "noop.o verified: 1 program, 0 maps;.*nothing changed" "$tmp/out" || fail "$flag: $(cat "$tmp/out")"
	cmp -s "$tmp/target.o" "$pol/size_aware.o" || fail "$flag changed the target's bytes"
	[ "$(state)" = "$orig" ] || fail "$flag changed the target's size, mtime or inode: $orig -> $(state)"

	run 1 "$flag with a rejected bundle" "$flag" "$tmp/target.o" "$pol/unsafe/div_zero.o"
	one_line "$flag rejected"
	grep -q "div_zero.o rejected: .*division by zero" "$tmp/err" || fail "$flag rejected: $(cat "$tmp/err")"
	cmp -s "$tmp/target.o" "$pol/size_aware.o" || fail "$flag with a rejected bundle changed the target's bytes"
	[ "$(state)" = "$orig" ] || fail "$flag with a rejected bundle changed the target"

	run 0 "$flag PATH alone" "$flag" "$tmp/target.o"
	[ "$(state)" = "$orig" ] || fail "$flag PATH changed the target"
	run 0 "--job $flag" --job --dir "$tmp/no-such-dir" "$flag" "$pol/noop.o"
	[ -e "$tmp/no-such-dir" ] && fail "--job $flag created the control-plane directory"
done

# Without --check: installed. One process that uses it: no warning.
sleep 300 &
sleeper=$!
# The host name as the CLI matches records by (the runtime's one rule, ncclbpf_rt_host_name):
# what `top --json` reports for an empty directory.
mkdir -p -m 700 "$tmp/empty"
host=$("$bin" top --count 1 --json --dir "$tmp/empty" | python3 -c 'import json, sys; print(json.load(sys.stdin)["host"])')
[ -n "$host" ] || fail "no host name from top --json"
record() { # record PID RANK: a live process record naming the target (no socket: not queried)
	mkdir -p -m 700 "$tmp/cp/procs"
	printf 'pid=%s\nhost=%s\nuid=%s\njob=j\nrank=%s\nbundle=%s\nsock=%s\ncp=0\n' \
		"$1" "$host" "$(id -u)" "$2" "$tmp/target.o" "$tmp/cp/procs/$host.$1.sock" \
		>"$tmp/cp/procs/$host.$1"
}
record $$ 0
run 0 "install, one process" "$tmp/target.o" "$pol/noop.o"
cmp -s "$tmp/target.o" "$pol/noop.o" || fail "NEW was not installed"
grep -q "installed .*noop.o at .*target.o" "$tmp/out" || fail "install: $(cat "$tmp/out")"
grep -q "multi-rank" "$tmp/err" && fail "one single-rank process: warned: $(cat "$tmp/err")"

# A bundle that would not load is neither installed nor touched: every plugin would refuse it.
run 1 "install of a rejected bundle" "$tmp/target.o" "$pol/unsafe/div_zero.o"
one_line "install of a rejected bundle"
grep -q "div_zero.o would not load, nothing installed: .*division by zero" "$tmp/err" ||
	fail "install of a rejected bundle: $(cat "$tmp/err")"
cmp -s "$tmp/target.o" "$pol/noop.o" || fail "a rejected bundle was installed"
cp "$pol/unsafe/div_zero.o" "$tmp/bad.o"
touch -d '2001-01-01 00:00:00' "$tmp/bad.o"
bad_mtime=$(stat -c %Y "$tmp/bad.o")
run 1 "touch of a rejected bundle" "$tmp/bad.o"
grep -q "bad.o would not load, not touched: .*division by zero" "$tmp/err" ||
	fail "touch of a rejected bundle: $(cat "$tmp/err")"
[ "$(stat -c %Y "$tmp/bad.o")" = "$bad_mtime" ] || fail "a rejected bundle was touched"
mkfifo "$tmp/fifo"
run 1 "install of a FIFO" "$tmp/target.o" "$tmp/fifo"
grep -qF "$tmp/fifo is a FIFO, not a regular file" "$tmp/err" || fail "install of a FIFO: $(cat "$tmp/err")"

# Two processes: the warning names them and points to --job, and the reload still happens.
record "$sleeper" 1
run 0 "install, two processes" "$tmp/target.o" "$pol/size_aware.o"
cmp -s "$tmp/target.o" "$pol/size_aware.o" || fail "NEW was not installed (two processes)"
grep -q "warning: .*target.o is the policy of a multi-rank job (processes .*$sleeper.*reload --job" "$tmp/err" ||
	fail "no multi-rank warning: $(cat "$tmp/err")"
run 0 "touch, two processes" "$tmp/target.o"
grep -q "multi-rank job" "$tmp/err" || fail "touch: no multi-rank warning: $(cat "$tmp/err")"

finish cli_reload
