#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds from scratch with -Werror (plus the
# ASan/UBSan variants) and runs every test. Ends with CTest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -DNCCLBPF_WERROR=ON -DNCCLBPF_SANITIZERS=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
cd "$BUILD" && ctest --output-on-failure -j"$(nproc)"
