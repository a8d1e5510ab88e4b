#!/usr/bin/env bash
# The main job on a bundled example: build examples/wordfreq.c with pathprof in
# path mode, run it on its own source, and show the profile.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export LLVM_SYS_221_PREFIX=/usr/lib/llvm-22
cargo build --release --workspace
pp=target/release/pathprof
out=$(mktemp -d)
$pp cc --mode=path -O2 -g examples/wordfreq.c -o "$out/wordfreq"
PATHPROF_FILE="$out/wordfreq.pprof" "$out/wordfreq" < examples/wordfreq.c > /dev/null
$pp report --map "$out/wordfreq.ppmap" "$out/wordfreq.pprof"
echo
$pp paths --map "$out/wordfreq.ppmap" "$out/wordfreq.pprof" --top 3
echo
$pp coverage --map "$out/wordfreq.ppmap" "$out/wordfreq.pprof"
echo "profile and map are in $out"
