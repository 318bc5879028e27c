#!/usr/bin/env bash
# The C sources are clang-formatted (.clang-format at the root), as clang-format 14 (Debian 12's,
# the one CI installs) lays them out; other versions lay some lines out differently, so they
# skip. The vendored NCCL headers (adapters/nccl/abi/) keep NVIDIA's layout. Lists every file
# that differs, with the command that mends it.
# Usage: format.sh ROOT
set -u
root=$1
. "$(dirname "$0")/../common/skip.sh"
cf=$(command -v clang-format-14 || command -v clang-format) ||
	skip_test clang-format "no clang-format (Debian: apt-get install clang-format)"
ver=$("$cf" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
[ "$ver" = 14 ] || skip_test clang-format "$cf is version ${ver:-unknown}, the tree's layout is clang-format 14's"
cd "$root" || exit 1
# The source folders only: a build folder of any name holds CMake's own .c files.
out=$(find engine runtime adapters tools tests benchmarks include policies \
	-path adapters/nccl/abi -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print0 |
	xargs -0 "$cf" --dry-run -Werror 2>&1)
rc=$?
files=$(printf '%s\n' "$out" | sed -n 's/^\(.*\.[ch]\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ -n "$files" ]; then
	printf '%s\n' "$files" | sed 's/.*/not formatted: & (clang-format -i &)/'
	echo "FAIL: $(printf '%s\n' "$files" | wc -l) files"
	exit 1
fi
[ "$rc" = 0 ] || { printf '%s\n' "$out" | tail -5; echo "FAIL: clang-format exited $rc"; exit 1; }
echo OK
