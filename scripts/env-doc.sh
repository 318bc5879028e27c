#!/bin/bash
# Rewrites docs/deploying.md's Environment section from the variable table
# (runtime/src/base/envvars.c) through the built CLI: scripts/env-doc.sh BUILD_DIR
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:?usage: scripts/env-doc.sh BUILD_DIR}/bin/ncclbpf
doc=$root/docs/deploying.md
table=$("$cli" env --markdown)
awk -v table="$table" '
	/<!-- env-table:begin -->/ { print; print table; skip = 1; next }
	/<!-- env-table:end -->/ { skip = 0 }
	!skip { print }
' "$doc" >"$doc.tmp"
mv "$doc.tmp" "$doc"
echo "updated $doc"
