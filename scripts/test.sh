#!/usr/bin/env bash
# The test command: installs dependencies, checks formatting, lints and the
# API docs' links, builds everything (the runtime archive included) and runs
# every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export LLVM_SYS_221_PREFIX=/usr/lib/llvm-22
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS='-D warnings' cargo doc --workspace --no-deps
cargo build --workspace
cargo test --workspace
