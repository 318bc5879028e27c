#!/bin/bash
# The folders of runtime/src (one job each: base, policy, cp, inspect, telem, net) include each
# other without a circle, so each can be read, tested and changed knowing only what is below it.
# Reads the #include "..." lines of every file one folder down from SRC: an include of another
# folder's header names that folder ("base/rt_internal.h"), a plain name must be in the file's
# own folder, and no source file may sit at the top. The folder graph goes through tsort, which
# refuses a circle. First the check proves itself on a tree with a circle.
# Usage: include_graph.sh RUNTIME_SRC_DIR
set -u
src=${1:?usage: include_graph.sh RUNTIME_SRC_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Prints the folder edges of tree $1 ("from to"), problems on stderr; 1 when a rule is broken.
scan() {
	local root=$1 bad=0 f dir from inc to
	for f in "$root"/*.[ch]; do
		[ -e "$f" ] || continue
		echo "FAIL: ${f#"$root"/} is in no folder" >&2
		bad=1
	done
	for f in "$root"/*/*.[ch]; do
		dir=$(dirname "$f")
		from=$(basename "$dir")
		while read -r inc; do
			case $inc in
			*/*)
				to=${inc%%/*}
				# public headers (ncclbpf/...) are not folders of this tree
				[ -d "$root/$to" ] || continue
				[ -e "$root/$inc" ] || {
					echo "FAIL: ${f#"$root"/} includes \"$inc\", which does not exist" >&2
					bad=1
				}
				[ "$to" = "$from" ] || echo "$from $to"
				;;
			*)
				[ -e "$dir/$inc" ] || {
					echo "FAIL: ${f#"$root"/} includes \"$inc\" of another folder" \
						"without naming it" >&2
					bad=1
				}
				;;
			esac
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done
	return $bad
}

# Succeeds when the edges on stdin have no circle; names it otherwise.
acyclic() {
	local edges
	edges=$(sort -u)
	if ! printf '%s\n' "$edges" | tsort >/dev/null 2>"$tmp/loop"; then
		echo "FAIL: include circle between folders: $(grep -v '^tsort: -: input contains a loop' "$tmp/loop" | sed 's/^tsort: //' | tr '\n' ' ')" >&2
		return 1
	fi
}

# The check must see a circle where there is one: a -> b -> a.
mkdir -p "$tmp/t/a" "$tmp/t/b"
echo '#include "b/y.h"' >"$tmp/t/a/x.c"
echo '#include "a/z.h"' >"$tmp/t/b/y.h"
echo '' >"$tmp/t/a/z.h"
if scan "$tmp/t" 2>/dev/null | acyclic 2>/dev/null; then
	echo "FAIL: the check missed the circle a -> b -> a"
	exit 1
fi

fail=0
edges=$(scan "$src") || fail=1
printf '%s\n' "$edges" | acyclic || fail=1
[ $fail -eq 0 ] || exit 1
echo "folder includes (from -> to):"
printf '%s\n' "$edges" | sort -u | sed 's/ / -> /;s/^/  /'
echo OK
