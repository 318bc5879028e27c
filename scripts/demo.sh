#!/usr/bin/env bash
# Installs dependencies, builds, and runs the end-to-end demo on its embedded defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DNCCLBPF_SANITIZERS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec build/bin/ncclbpf demo
