#!/bin/bash
# `ncclbpf env` checks a path setting the way the plugin will use it when the job starts, and
# creates nothing: the policy bundle is loaded and verified (a missing or rejected one used to
# pass with exit 0 while every rank would run NCCL's own tuning), the control-plane directory,
# the decision log, the trace and the inner net plugin under the trusted-path rules, the
# telemetry export directories as the exporter opens them.
#   cli_env.sh NCCLBPF POLICY_DIR
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
pol=$2
. "$(dirname "$0")/common.sh"

# shellcheck disable=SC2046
unset $(compgen -e | grep '^NCCLBPF_')
cd "$tmp" || exit 1
mkdir -m 700 own
mkdir -m 777 open

# env_run WANT NAME VAR=VALUE...: `ncclbpf env` with those settings (and no others), at most 20 s
env_run() {
	local want=$1 name=$2
	shift 2
	timeout 20 env "$@" "$bin" env >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	[ $rc -eq "$want" ] || fail "$name: exit $rc, want $want ($(head -c 400 "$tmp/out" "$tmp/err"))"
}
has() { grep -qF -- "$2" "$tmp/out" || fail "$1: want '$2' in: $(head -c 400 "$tmp/out")"; }

env_run 0 "nothing set"
has "nothing set" "no NCCLBPF_* setting in this environment"

env_run 1 "missing policy" NCCLBPF_POLICY="$tmp/own/none.o"
has "missing policy" "NCCLBPF_POLICY               $tmp/own/none.o refused: $tmp/own/none.o: No such file"
env_run 1 "rejected policy" NCCLBPF_POLICY="$pol/unsafe/null_deref.o"
has "rejected policy" "refused: program 'null_deref' (section 'profiler'): line 18:"
cp "$pol/size_aware.o" own/p.o
env_run 0 "good policy" NCCLBPF_POLICY="$tmp/own/p.o"
has "good policy" "$tmp/own/p.o (loads: 1 program verified)"
chmod 666 own/p.o
env_run 1 "policy others can change" NCCLBPF_POLICY="$tmp/own/p.o"
has "policy others can change" "refused: $tmp/own/p.o is writable by its group and others (mode 0666)"
chmod 644 own/p.o
env_run 0 "native policy" NCCLBPF_POLICY=native:noop
has "native policy" "NCCLBPF_POLICY               native:noop"

env_run 0 "new control-plane directory" NCCLBPF_CP_DIR="$tmp/own/cp/a"
has "new control-plane directory" "$tmp/own/cp/a (not there yet: the plugin creates it)"
[ -e own/cp ] && fail "env created the control-plane directory"
env_run 1 "open control-plane directory" NCCLBPF_CP_DIR="$tmp/open"
has "open control-plane directory" "refused: $tmp/open is writable by its group and others (mode 0777)"

mkfifo own/fifo
env_run 1 "decision log is a FIFO" NCCLBPF_CP_LOG="$tmp/own/fifo"
has "decision log is a FIFO" "refused: $tmp/own/fifo is a FIFO, not a regular file"
env_run 0 "new decision log" NCCLBPF_CP_LOG="$tmp/own/decisions.log"
[ -e own/decisions.log ] && fail "env created the decision log"
ln -s decisions.log own/link.log
env_run 1 "decision log through a link" NCCLBPF_CP_LOG="$tmp/own/link.log"
has "decision log through a link" "refused: $tmp/own/link.log is a symbolic link"

env_run 0 "trace template" NCCLBPF_TRACE="$tmp/own/trace-%p-%h.txt"
has "trace template" "(not there yet: each process creates its own)"
env_run 1 "bad trace template" NCCLBPF_TRACE="$tmp/own/trace-%q"
has "bad trace template" "refused: only %p (process id), %h (host name) and %% may follow a %"
env_run 1 "trace in an open directory" NCCLBPF_TRACE="$tmp/open/trace"
has "trace in an open directory" "refused: $tmp/open is writable by its group and others"

env_run 1 "inner net plugin by name" NCCLBPF_NET_INNER=libnccl-net.so
has "inner net plugin by name" "refused: libnccl-net.so is not a path (give the library's path)"
env_run 1 "inner net plugin missing" NCCLBPF_NET_INNER="$tmp/own/libnone.so"
has "inner net plugin missing" "refused: $tmp/own/libnone.so: No such file"

# Telemetry export directories: there, a directory, not a link (the exporter would drop every
# export until it could write there).
env_run 0 "export directory" NCCLBPF_PROM_DIR="$tmp/open" NCCLBPF_JSONL_DIR="$tmp/own"
env_run 1 "missing export directory" NCCLBPF_PROM_DIR="$tmp/own/none"
has "missing export directory" "refused: $tmp/own/none: No such file or directory"
env_run 1 "export directory is a file" NCCLBPF_JSONL_DIR="$tmp/own/p.o"
has "export directory is a file" "refused: $tmp/own/p.o: Not a directory"
ln -s open linkdir
env_run 1 "export directory through a link" NCCLBPF_PROM_DIR="$tmp/linkdir"
has "export directory through a link" "refused: $tmp/linkdir is a symbolic link (the exporter does not follow it)"

# Loading the policy to check it starts nothing of the control plane: no directory, no log.
env_run 0 "policy with a control plane" NCCLBPF_POLICY="$tmp/own/p.o" NCCLBPF_CP_DIR="$tmp/own/cp2" \
	NCCLBPF_CP_LOG="$tmp/own/cp2.log"
[ -e own/cp2 ] || [ -e own/cp2.log ] && fail "checking the policy created the control plane's files"

# Every refusal is counted once, the accepted ones still listed.
env_run 1 "several" NCCLBPF_POLICY="$pol/size_aware.o" NCCLBPF_CP_DIR="$tmp/open" NCCLBPF_CP_POLL_MS=abc
[ "$(grep -c refused "$tmp/out")" -eq 1 ] || fail "several: $(cat "$tmp/out")"
has "several" "NCCLBPF_CP_POLL_MS=abc ignored (accepted: 1..10000); using 5"
has "several" "(loads: 1 program verified)"
[ -s "$tmp/err" ] && fail "several: wrote to stderr: $(head -c 300 "$tmp/err")"

finish cli_env
