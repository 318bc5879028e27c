#!/usr/bin/env bash
# scripts/gpu-split.sh's check without GPUs: `test_cp split` plays its job (4 ranks, each in the
# whole communicator and a half, interleaving them differently, under explore_protocols.o) and
# gpu_e2e_check.py split must find every communicator's decisions identical on its ranks; with
# one decision changed in one rank's trace it must fail, naming the communicator.
# Usage: split_check.sh SOURCE_DIR TEST_CP PLUGIN EXPLORE.o WORKDIR
set -u
SRC=$1 TEST_CP=$2 PLUGIN=$3 EXPLORE=$4 W=$5
rm -rf "$W"
mkdir -p "$W"
"$TEST_CP" split "$PLUGIN" "$EXPLORE" "$W" || { echo "FAIL: the simulated job failed"; exit 1; }
out=$(python3 "$SRC/scripts/gpu_e2e_check.py" split "$W")
rc=$?
echo "$out"
[ $rc -eq 0 ] && grep -q "^OK split" <<<"$out" || { echo "FAIL: check on the real traces"; exit 1; }
[ "$(grep -c 'identical on all: True' <<<"$out")" -eq 3 ] || { echo "FAIL: want 3 communicators"; exit 1; }
# One changed decision on rank 2: the check must fail and name where.
awk '/^call / && !done && / proto=0 / { sub(/ proto=0 /, " proto=2 "); done = 1 } { print }' \
	"$W/trace.rank2" >"$W/tampered" && mv "$W/tampered" "$W/trace.rank2"
out=$(python3 "$SRC/scripts/gpu_e2e_check.py" split "$W")
rc=$?
echo "$out"
[ $rc -eq 1 ] && grep -q "FAIL split: communicator .* differs" <<<"$out" ||
	{ echo "FAIL: a changed decision went unnoticed"; exit 1; }
echo "split_check: OK"
