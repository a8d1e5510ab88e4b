#!/usr/bin/env bash
# Installs what pathprof needs on a fresh Debian 12 machine: LLVM/clang 22 (for
# building and for the programs it profiles), lcov (genhtml checks the LCOV
# export), chromium (the HTML report test), autoconf, automake, libtool and
# autopoint (xz's own autotools build in the third-party tests), meson and
# ninja (HarfBuzz's), cmake, libssl-dev and libpsl-dev (curl's CMake build,
# which requires OpenSSL and libpsl by default). Skips what is already there.
set -euo pipefail
need=()
for pkg in llvm-22-dev clang-22 lld-22 libzstd-dev zlib1g-dev lcov chromium graphviz \
  autoconf automake libtool autopoint meson ninja-build cmake libssl-dev libpsl-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "install Rust (rustup) first: https://rustup.rs" >&2; exit 1; }
