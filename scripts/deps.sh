#!/usr/bin/env bash
# Installs the Debian packages the build, the policies and the tests need. Idempotent.
set -euo pipefail
# python3: the CLI tests parse --json output with it (tests/cli/json_expect.py).
# passwd (useradd) and util-linux (setpriv): tests/security/other_users.sh creates two users;
# both are in every Debian base system, named so that a slimmer image cannot skip that test.
# clang-format: the clang_format test checks the tree's layout with it.
PKGS=(build-essential cmake clang clang-format llvm lld libclang-rt-14-dev libc6-dev linux-libc-dev
  spin python3 passwd util-linux)
missing=()
for p in "${PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
