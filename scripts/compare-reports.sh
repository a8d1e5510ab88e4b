#!/usr/bin/env bash
# Every report of pathprof on small programs, written one file per report, so
# that two builds of pathprof can be compared byte for byte (a refactoring of
# the report code must change nothing it was not meant to).
#
#   scripts/compare-reports.sh build WORK [PATHPROF]   # build and run the programs once
#   scripts/compare-reports.sh report WORK OUT [PATHPROF]  # every report into OUT/
#   diff -r OUT-before OUT-after
#
# PATHPROF defaults to target/debug/pathprof. `build` compiles
# examples/wordfreq.c and the report fixtures in block, edge and path mode
# (and bzip2-like PPP and P3 builds of the path fixture), runs each on a fixed
# input and keeps maps and profiles in WORK; `report` only reads them, so the
# builds and runs are shared by both sides of a comparison.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
step="${1:?build or report}"
work="${2:?a work directory}"

build() {
  local pp="$1"
  mkdir -p "$work"
  cd "$work"
  cp "$root/examples/wordfreq.c" "$root/crates/cli/tests/reports_fixtures/classify.c" \
    "$root/crates/cli/tests/reports_fixtures/hot.c" .
  for mode in block edge path; do
    for prog in wordfreq classify hot; do
      "$pp" cc --mode=$mode -O1 -g "$prog.c" -o "$prog-$mode"
      PATHPROF_FILE="$work/$prog-$mode.pprof" "./$prog-$mode" a b < wordfreq.c > /dev/null || true
    done
  done
  "$pp" interesting --map wordfreq-path wordfreq-path.pprof -o wordfreq.paths
  "$pp" cc --mode=ppp --interesting=wordfreq.paths -O1 -g wordfreq.c -o wordfreq-ppp
  PATHPROF_FILE="$work/wordfreq-ppp.pprof" ./wordfreq-ppp < classify.c > /dev/null
  "$pp" cc --mode=p3 --copies=2 -O1 -g wordfreq.c -o wordfreq-p3
  PATHPROF_FILE="$work/wordfreq-seq.pprof" ./wordfreq-p3 < wordfreq.c > /dev/null
  "$pp" p3 run -k 2 -o "$work/wordfreq-p3.pprof" -- ./wordfreq-p3 < wordfreq.c > /dev/null
}

report() {
  local out="$1" pp="$2"
  mkdir -p "$out"
  cd "$work"
  local n=0
  # Each line: a file name, then the report's arguments.
  run() {
    local name="$1"
    shift
    # Paths of the work directory are the same on both sides.
    "$pp" "$@" > "$out/$name.out" 2> "$out/$name.err" || echo "exit $?" >> "$out/$name.err"
    n=$((n + 1))
  }
  for mode in block edge path; do
    for prog in wordfreq classify hot; do
      local m=(--map "$prog-$mode" "$prog-$mode.pprof")
      run "$prog-$mode-report" report "${m[@]}"
      run "$prog-$mode-report-json" report "${m[@]}" --format json
      run "$prog-$mode-lines" lines "${m[@]}"
      run "$prog-$mode-lines-instr" lines "${m[@]}" --instructions
      for key in instructions calls size unexecuted name; do
        run "$prog-$mode-funcs-$key" funcs "${m[@]}" --sort $key
        run "$prog-$mode-files-$key" files "${m[@]}" --sort $key
      done
      run "$prog-$mode-coverage" coverage "${m[@]}"
      run "$prog-$mode-lcov" export "${m[@]}" --format lcov
      run "$prog-$mode-export-json" export "${m[@]}" --format json
      run "$prog-$mode-info" info "$prog-$mode.pprof"
      run "$prog-$mode-info-json" info --format json "$prog-$mode.pprof"
      run "$prog-$mode-dot-main" dot --map "$prog-$mode" --function main --profile "$prog-$mode.pprof"
      rm -rf "$out/$prog-$mode-html"
      run "$prog-$mode-html" html "${m[@]}" -o "$out/$prog-$mode-html"
      if [ $mode = path ]; then
        run "$prog-$mode-paths" paths "${m[@]}" --top 20
        run "$prog-$mode-paths-main" paths "${m[@]}" --function main --top 5
        run "$prog-$mode-predict" predict "${m[@]}"
        run "$prog-$mode-diff" diff --map "$prog-$mode" "$prog-$mode.pprof" "$prog-$mode.pprof"
        run "$prog-$mode-verify" verify --map "$prog-path" "$prog-path.pprof" \
          --edge-map "$prog-edge" "$prog-edge.pprof"
        run "$prog-$mode-dot-hot" dot --map "$prog-$mode" --function main \
          --profile "$prog-$mode.pprof" --hot 3
        run "$prog-$mode-interesting" interesting "${m[@]}"
      fi
    done
  done
  local ppp=(--map wordfreq-ppp wordfreq-ppp.pprof)
  run ppp-report-json report "${ppp[@]}" --format json
  run ppp-residual residual "${ppp[@]}"
  run ppp-stats ppp-stats --map wordfreq-ppp
  run p3-report report --map wordfreq-p3 wordfreq-p3.pprof --format json
  run p3-stats p3 stats -k 2,4 --map wordfreq-p3 wordfreq-seq.pprof
  run p3-stats-json p3 stats -k 2,4 --map wordfreq-p3 wordfreq-seq.pprof --format json
  echo "$n reports in $out"
}

case "$step" in
  build) build "${3:-$root/target/debug/pathprof}" ;;
  report) report "${3:?an output directory}" "${4:-$root/target/debug/pathprof}" ;;
  *) echo "usage: $0 build WORK [PATHPROF] | report WORK OUT [PATHPROF]" >&2; exit 2 ;;
esac
