#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds from scratch with -Werror (plus the
# ASan/UBSan variants) and runs every test. Ends with CTest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -DNCCLBPF_WERROR=ON -DNCCLBPF_SANITIZERS=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
# libFuzzer targets (loader, verifier) need clang: their own build, a bounded run each (~20 s),
# before the main suite so that CTest's summary of the main suite stays the last line.
if [ "${NCCLBPF_SKIP_FUZZ:-0}" != 1 ]; then
  CC=clang cmake -S . -B "$BUILD-fuzz" -DNCCLBPF_FUZZ=ON -DNCCLBPF_SANITIZERS=OFF >/dev/null
  cmake --build "$BUILD-fuzz" -j"$(nproc)" --target fuzz_loader fuzz_verifier policies loader_test_objects \
    ncclbpf_test_runner >/dev/null
  (cd "$BUILD-fuzz" && ctest --output-on-failure -L fuzz)
fi
cd "$BUILD" && ctest --output-on-failure -j"$(nproc)"
