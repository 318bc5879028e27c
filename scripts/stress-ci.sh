#!/usr/bin/env bash
# The whole CI (.ci/run) on a fresh clone while `stress -c WORKERS` keeps every core busy, RUNS
# times in a row: the check that no test depends on an idle machine (a test may only fail on a
# loaded one by hanging past its generous guard). Each run clones the checkout's HEAD anew
# into SCRATCH/run-N (so a commit that lands meanwhile is not picked up: every run tests the
# same commit) and keeps its log there. Prints one line per run and stops at the first failure.
#
# Usage: scripts/stress-ci.sh [RUNS] [WORKERS]      (defaults 5 and 2: the 2-core CI machine)
#        SCRATCH=dir (default /tmp/ncclbpf-stress-ci)
# Needs what .ci/run needs (root, Debian's registry) and `stress` (apt-get install stress).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
WORKERS=${2:-2}
SCRATCH=${SCRATCH:-/tmp/ncclbpf-stress-ci}
if ! command -v stress >/dev/null; then
  echo "stress-ci: needs stress (apt-get install stress)" >&2
  exit 2
fi
commit=$(git rev-parse --short HEAD)
mkdir -p "$SCRATCH"
echo "stress-ci: $RUNS runs of .ci/run on $commit beside stress -c $WORKERS ($(nproc) CPUs)"
for n in $(seq 1 "$RUNS"); do
  dir=$SCRATCH/run-$n
  rm -rf "$dir"
  git clone -q "$PWD" "$dir"
  git -C "$dir" checkout -q "$commit"
  stress -c "$WORKERS" >/dev/null 2>&1 &
  load=$!
  start=$(date +%s)
  rc=0
  "$dir/.ci/run" >"$dir.log" 2>&1 || rc=$?
  pkill -P "$load" 2>/dev/null || true # its workers, then itself
  kill "$load" 2>/dev/null || true
  wait "$load" 2>/dev/null || true
  mins=$(( ($(date +%s) - start + 30) / 60 ))
  summary=$(grep -E "tests passed|tests failed" "$dir.log" | tail -1 || true)
  echo "run $n: $commit $(date -u -d "@$start" +%FT%TZ) ${mins} min, exit $rc: ${summary:-no summary}"
  [ "$rc" = 0 ] || { echo "stress-ci: run $n failed; its log is $dir.log" >&2; exit 1; }
  rm -rf "$dir" # the log stays
done
echo "stress-ci: $RUNS of $RUNS passed"
