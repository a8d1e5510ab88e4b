#!/usr/bin/env bash
# Fuzzes pathprof's parsers (the map file and the raw profile), each target for
# SECONDS (default 60), one after the other, one job each. Not part of CI.
#
#   scripts/fuzz.sh [SECONDS]
#
# Needs cargo-fuzz (installed here if missing) and nightly features, which the
# stable toolchain grants with RUSTC_BOOTSTRAP=1. Seeds come from
# fuzz/src/make_seeds.rs; the corpus grows in fuzz/corpus/<target>, crashes go
# to fuzz/artifacts/<target> (both ignored by git). Reproduce a crash with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run -O <target> fuzz/artifacts/<target>/<file>
# from fuzz/.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz"
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

cargo run --release --quiet --bin make_seeds -- corpus

status=0
for target in map raw_profile raw_merge; do
    dict=()
    if [ -f "$target.dict" ]; then
        dict=(-dict="$target.dict")
    fi
    mkdir -p "artifacts/$target"
    echo "== $target: ${seconds}s"
    # -rss_limit_mb / -malloc_limit_mb: an input that makes the parser
    # allocate much more than its size is a crash too.
    if ! cargo fuzz run -O "$target" "corpus/$target" -- \
        -max_total_time="$seconds" -max_len=8192 -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 "${dict[@]}"; then
        echo "== $target: crashed; the input is in fuzz/artifacts/$target" >&2
        status=1
    fi
done
exit "$status"
