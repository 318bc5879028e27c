# Sourced by the CLI test scripts: a scratch directory removed at exit ($tmp; more cleanup in
# cleanup()), failure counting, and checks of one command's outcome.
#   run_cmd WANT-RC NAME ARGS...  runs "$bin" ARGS with stdout in $tmp/out, stderr in $tmp/err
#   one_line NAME                 stderr is exactly one line
#   finish NAME                   prints the verdict and exits 0 or 1
set -u
tmp=$(mktemp -d)
fails=0
cleanup() { :; }
trap 'cleanup; rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

run_cmd() {
	local want=$1 name=$2
	shift 2
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	[ $rc -eq "$want" ] || fail "$name: exit $rc, want $want (stderr: $(head -c 300 "$tmp/err"))"
	return 0
}

one_line() {
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$1: stderr is not one line: $(head -c 400 "$tmp/err")"
}

finish() {
	[ $fails -eq 0 ] && echo "$1: all checks passed"
	exit $((fails > 0))
}
