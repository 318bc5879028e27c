#!/bin/bash
# One table for every environment variable (runtime/src/base/envvars.c):
# - no getenv outside it in runtime/, adapters/, tools/ (engine/src/epoch.c is layer 1 and cannot
#   call the runtime: it reads NCCLBPF_EPOCH_MEMBARRIER itself, with the table's meaning, and
#   the runtime checks that variable through the table at its first acquire);
# - every name a reader asks for by literal is in the table;
# - docs/deploying.md's Environment section is what `ncclbpf env --markdown` prints
#   (scripts/env-doc.sh BUILD_DIR rewrites it).
# usage: check_envvars.sh SOURCE_DIR NCCLBPF_CLI
set -u
src=$1 cli=$2
failures=0
stray=$(cd "$src" && grep -rn --include='*.c' --include='*.h' 'getenv(' runtime adapters tools |
	grep -v '^runtime/src/base/envvars.c:')
if [ -n "$stray" ]; then
	echo "FAIL: getenv outside runtime/src/base/envvars.c (read through ncclbpf/envvars.h):"
	echo "$stray"
	failures=$((failures + 1))
fi
known=$("$cli" env --all | awk '{print $1}')
for name in $(cd "$src" && grep -rhoE 'ncclbpf_env_[a-z0-9]+\("[A-Za-z0-9_]+"' runtime adapters tools |
	sed -E 's/.*\("([^"]+)"/\1/' | sort -u); do
	echo "$known" | grep -qx "$name" || {
		echo "FAIL: $name is read but not in the table"
		failures=$((failures + 1))
	}
done
doc=$(sed -n '/<!-- env-table:begin -->/,/<!-- env-table:end -->/p' "$src/docs/deploying.md" | sed '1d;$d')
if ! diff -u <(echo "$doc") <("$cli" env --markdown) >/tmp/envvars-doc-$$.diff; then
	echo "FAIL: docs/deploying.md's Environment section differs from the table; run"
	echo "  scripts/env-doc.sh BUILD_DIR"
	cat /tmp/envvars-doc-$$.diff
	failures=$((failures + 1))
fi
rm -f /tmp/envvars-doc-$$.diff
[ $failures -eq 0 ] && echo "check_envvars: the table is the only reader and the documentation"
exit $((failures != 0))
