#!/usr/bin/env bash
# The test command: installs dependencies, checks formatting, lints and the
# API docs' links, builds everything (the runtime archive included) and runs
# every test of both tiers: the fast tier (unit, property and small-program
# tests, what plain `cargo test` runs, no network) and the third-party tier
# (the `third-party` feature of the pathprof crate: real projects from
# registry crates built through their own build systems).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export LLVM_SYS_221_PREFIX=/usr/lib/llvm-22
tiers=(--features pathprof/third-party)
cargo fmt --all -- --check
cargo clippy --workspace --all-targets "${tiers[@]}" -- -D warnings
RUSTDOCFLAGS='-D warnings' cargo doc --workspace --no-deps
cargo build --workspace "${tiers[@]}"
cargo test --workspace "${tiers[@]}"
