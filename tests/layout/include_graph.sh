#!/bin/bash
# The folders of runtime/src (one job each) include each other only downwards, in the order of
# docs/architecture.md, so each can be read, tested and changed knowing only what is below it.
# Each folder declares what it offers the folders above in its own header (policy/policy.h,
# net/net.h, ...), so the include graph is also the call graph: a call up would need an include
# up. Reads the #include "..." lines of every file one folder down from SRC: an include of
# another folder's header names that folder ("base/rt_internal.h"), a plain name must be in the
# file's own folder, and no source file may sit at the top. Every folder must have its floor in
# FLOORS and include only folders on lower floors; the folder graph also goes through tsort,
# which refuses a circle. First the check proves itself on a tree with a circle and on one
# with an include up.
# Usage: include_graph.sh RUNTIME_SRC_DIR
set -u
src=${1:?usage: include_graph.sh RUNTIME_SRC_DIR}
# The floors, lowest first; folders on one floor ("cp net") do not include each other.
FLOORS=("base" "telem" "policy" "cp net" "inspect" "start")
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

# The floor of folder $1 (its index in FLOORS), or nothing.
floor_of() {
	local i
	for i in "${!FLOORS[@]}"; do
		case " ${FLOORS[$i]} " in *" $1 "*)
			echo "$i"
			return
			;;
		esac
	done
}

# Succeeds when every edge on stdin goes from a folder with a floor to one on a lower floor.
downwards() {
	local from to f t ok=0
	while read -r from to; do
		[ -n "$from" ] || continue
		f=$(floor_of "$from")
		t=$(floor_of "$to")
		if [ -z "$f" ] || [ -z "$t" ]; then
			echo "FAIL: folder ${f:+$to}${f:-$from} has no floor in FLOORS (tests/layout/include_graph.sh, docs/architecture.md)" >&2
			ok=1
		elif [ "$t" -ge "$f" ]; then
			echo "FAIL: $from includes $to, which is not below it (floors: ${FLOORS[*]})" >&2
			ok=1
		fi
	done
	return $ok
}

# The check must see an include up where there is one: base -> policy.
if echo "base policy" | downwards 2>/dev/null; then
	echo "FAIL: the check missed the include up base -> policy"
	exit 1
fi

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
printf '%s\n' "$edges" | sort -u | downwards || fail=1
for d in "$src"/*/; do
	d=$(basename "$d")
	[ -n "$(floor_of "$d")" ] || {
		echo "FAIL: folder $d has no floor in FLOORS (tests/layout/include_graph.sh, docs/architecture.md)" >&2
		fail=1
	}
done
[ $fail -eq 0 ] || exit 1
echo "folder includes (from -> to):"
printf '%s\n' "$edges" | sort -u | sed 's/ / -> /;s/^/  /'
echo OK
