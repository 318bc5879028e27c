#!/bin/bash
# docs/quickstart.md's CPU steps, run as written: every ```sh block preceded by
# <!-- quickstart:cpu --> is taken from the document (so the page and this test cannot drift)
# and run in order, in one bash with `set -e`, inside a fresh copy of the source tree (what a
# clone holds: the files git tracks or would track) with HOME pointed at a scratch folder.
# Then: the installation the steps made has the layout the page describes, and their output
# shows the verifier's verdict, the decision, the replay's summary and the variables
# `ncclbpf run` sets.
#   quickstart_cpu.sh SOURCE_DIR WORKDIR
set -u
src=$1
work=$2
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
rm -rf "$work"
mkdir -p "$work/clone" "$work/home"
# A clone: the tracked and untracked-but-not-ignored files (the latter so that a change being
# tested is part of it), nothing a build left.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -co --exclude-standard -z | xargs -0 tar cf - 2>/dev/null) |
		(cd "$work/clone" && tar xf -) || fail "copying the tree"
else # an unpacked release: everything but build folders
	(cd "$src" && tar cf - --exclude='./build*' .) | (cd "$work/clone" && tar xf -) ||
		fail "copying the tree"
fi
# The blocks, in order.
awk '/<!-- quickstart:cpu -->/ { want = 1; next }
	want && /^```sh/ { inblock = 1; next }
	inblock && /^```/ { inblock = 0; want = 0; next }
	inblock { print }' "$src/docs/quickstart.md" >"$work/steps.sh"
[ "$(grep -c . "$work/steps.sh")" -ge 8 ] || fail "too few steps found: $(cat "$work/steps.sh")"
# Compiles may come from the cache a developer has (the commands themselves are unchanged).
command -v ccache >/dev/null && export CMAKE_C_COMPILER_LAUNCHER=ccache
(cd "$work/clone" && HOME=$work/home bash -e "$work/steps.sh") >"$work/out" 2>"$work/err"
rc=$?
[ $rc -eq 0 ] || fail "the steps exit $rc: $(tail -5 "$work/err")"
prefix=$work/home/ncclbpf
for f in bin/ncclbpf lib/libnccl-ncclbpf.so include/ncclbpf.h \
	share/ncclbpf/policies/size_aware.o share/ncclbpf/traces/dgx-h100-8gpu.trace; do
	[ -e "$prefix/$f" ] || fail "the installation lacks $f"
done
has() {
	grep -q -- "$1" "$work/out" || fail "the output lacks '$1'"
}
has "size_aware  *tuner  *accepted"
has "size_aware (tuner, [0-9]* insns): return 0"
has "calls replayed, [0-9]* decisions differ"
has "^NCCL_TUNER_PLUGIN=$prefix/lib/libnccl-ncclbpf.so$"
has "^NCCL_ENV_PLUGIN=$prefix/lib/libnccl-ncclbpf.so$"
has "^NCCLBPF_POLICY=$prefix/share/ncclbpf/policies/size_aware.o$"
[ $fails -eq 0 ] || { echo "--- steps"; cat "$work/steps.sh"; echo "--- output"; head -60 "$work/out"; }
[ $fails -eq 0 ] && echo "quickstart_cpu: all checks passed"
rm -rf "$work/clone/build"
exit $((fails > 0))
