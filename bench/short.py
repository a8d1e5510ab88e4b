#!/usr/bin/env python3
"""What a test suite pays: many short processes of one program, each merging
its counts into the same profile file. Builds SQLite's driver
(crates/cli/tests/thirdparty/sqlite/driver.c and the amalgamation, as overhead.py's suite does)
plain and in pathprof's modes, then, for each build:

- instructions: valgrind's callgrind of one process (repeatable), after a
  first run created the profile file, so that the measured process merges
  into it as every later test of a suite does;
- wall time and minor page faults per process: `--processes` runs one after
  another, every variant interleaved, `--rounds` times (the median round).

Run on purpose, not in CI:

    bench/short.py [--rows 100] [--processes 100] [--rounds 3]
                   [--variants block,edge,path] [--baseline DIR]
                   [--out bench/results/short.md]

The markdown goes to standard output and to --out; the current results are
bench/results/short.md.

`--baseline DIR`: another pathprof checkout (release build) whose variants
are measured beside these, named `before:...`.
"""
import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from callgrind import build, instructions, pathprof_builds
from overhead import CLANG, PATHPROF_VARIANTS, SUITE, commit_and_date


def per_process(exe, rows, processes, profile):
    """Wall-clock milliseconds and minor page faults per process of
    `processes` runs of `exe` merging into `profile`."""
    env = dict(os.environ, PATHPROF_FILE=str(profile))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    start = time.perf_counter()
    for _ in range(processes):
        subprocess.run([exe, str(rows)], check=True, stdout=subprocess.DEVNULL, env=env)
    wall = (time.perf_counter() - start) / processes * 1000
    faults = (resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before) / processes
    return wall, faults


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--processes", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default="block,edge,path", type=lambda s: s.split(","))
    ap.add_argument("--baseline", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    commit, date = commit_and_date()
    pathprofs = pathprof_builds(args.baseline)
    prog = SUITE["sqlite"]()
    tmp = Path(tempfile.mkdtemp(prefix="pathprof-short-"))
    exes = {"plain": str(tmp / "plain")}
    build([CLANG], prog, exes["plain"])
    for prefix, pathprof in pathprofs.items():
        for v in args.variants:
            name = f"{prefix}{v}"
            exes[name] = str(tmp / name.replace(":", "-"))
            build([pathprof, "cc"] + PATHPROF_VARIANTS[f"pathprof-{v}"], prog, exes[name])
    profile = {name: tmp / f"{name.replace(':', '-')}.pprof" for name in exes}
    counted = {}
    for name, exe in exes.items():
        env = dict(os.environ, PATHPROF_FILE=str(profile[name]))
        subprocess.run([exe, str(args.rows)], check=True, stdout=subprocess.DEVNULL, env=env)
        counted[name] = instructions([exe, str(args.rows)], None, env, tmp / f"callgrind.out.{name}")
    rounds = {name: [] for name in exes}
    for r in range(args.rounds):
        order = list(exes.items()) if r % 2 == 0 else list(exes.items())[::-1]
        for name, exe in order:
            rounds[name].append(per_process(exe, args.rows, args.processes, profile[name]))
    lines = [
        f"# Short processes: SQLite's driver on {args.rows} rows, each process merging into one profile",
        "",
        f"`bench/short.py --rows {args.rows} --processes {args.processes} --rounds {args.rounds}`"
        + (f" against `{args.baseline}` (`before:`)" if args.baseline else "")
        + f", {date}, pathprof {commit}"
        + ": instructions of one process (callgrind, after a first run made the file), and wall time "
        f"and minor page faults per process over {args.processes} processes (the median of "
        f"{args.rounds} interleaved rounds).",
        "",
        "| variant | instructions | ratio to plain | wall ms per process | minor page faults |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in exes:
        wall = statistics.median(w for w, _ in rounds[name])
        faults = statistics.median(f for _, f in rounds[name])
        lines.append(f"| {name} | {counted[name]:,} | {counted[name] / counted['plain']:.2f} | "
                     f"{wall:.2f} | {faults:.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
