#!/usr/bin/env python3
"""P3's overhead on K cores: the slowest copy's CPU time against
the sequential path-mode build, at K = 2, 4 and 8, on the overhead suite
(bench/overhead.py's SUITE: Lua 5.4, bzip2 1.0.8, zlib, SQLite and xz, as
that script defines, builds and runs them; this script imports it and owns
only what is P3's).

Each program is built plain (clang -O2), with clang's -fprofile-instr-generate,
with `pathprof cc --mode=path` (overhead.py's `pathprof-path`) and, for each
K, with `pathprof cc --mode=p3 --copies=K` (OUTPUT.p3.0 ... OUTPUT.p3.<K-1>;
the first K's OUTPUT, the sequential path-mode build of the whole linked
module that P3 partitions, is measured too, as `pathprof-path-whole-program`).
Every binary first runs once untimed, its output checked against the plain
build's; then `pathprof p3 run -k K` runs each K's copies at once on the
workload (untimed) to check that they merge, and `pathprof p3 stats` reads
the merged profile for the hit counts. Then every binary, each copy alone (one
process at a time: what each of K cores would spend), runs round-robin RUNS
times, and the median CPU time (user + system of the child) of each is
reported with its ratio to the plain build. Run on purpose, not in CI:

    bench/p3.py [--copies 2,4,8] [--runs 3] [--scale 50] [--only PROGRAM]
                [--train [--train-scale 5]] [--out bench/results/p3.md]

`--train`: the copies are planned by a training run (`--p3-train`): a
whole-program path build (`pathprof cc --mode=path --whole-program`, the
module P3 partitions) runs the workload at `--train-scale` (default 5, a
tenth of the measured run), `pathprof interesting` lists its paths, and every
K's copies are built with `--p3-train=LIST`.

Per program and K: the slowest copy's ratio (P3's overhead on K cores), the
mean copy's, sequential path mode's (per translation unit and whole
program), clang's, the overhead fraction (slowest copy's overhead over path
mode's) and `p3 stats`' hit-count reductions. The markdown goes to --out
(default bench/results/p3.md, the current results), the same figures as
JSON beside it (FILE with the suffix .json).
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import machine  # noqa: E402  (bench/machine.py: the machine measured on)
import overhead  # noqa: E402  (bench/overhead.py: the programs, builds and timing)

PROGRAMS = overhead.SUITE

# overhead.py's variants measured beside the copies.
BASELINES = ["plain", "clang-instr", "pathprof-path"]

# The first K's OUTPUT: path mode on the whole linked module, P3's route.
WHOLE = "pathprof-path-whole-program"


def copy_label(k, i):
    """The name of copy `i` of the K = `k` build in the results."""
    return f"p3-k{k}.{i}"


def stdin_bytes(spec):
    """A workload's standard input (the second item of a program's `run`:
    None, bytes, or a file to read) as bytes, or None."""
    if spec is None or isinstance(spec, bytes):
        return spec
    return Path(spec).read_bytes()


def build_p3(prog, out, pathprof, k, train=None):
    """Builds `prog` with `pathprof cc --mode=p3 --copies=k` (overhead.py's
    compile line), planned by the training list `train` if given; returns
    OUTPUT and its K copies."""
    exe = str(out / f"{prog['name']}-p3-k{k}")
    trained = [] if train is None else [f"--p3-train={train}"]
    cmd = [pathprof, "cc", "--mode=p3", f"--copies={k}"] + trained + overhead.compile_args(prog, exe)
    subprocess.run(cmd, check=True, cwd=out)
    copies = [f"{exe}.p3.{i}" for i in range(k)]
    missing = [c for c in copies if not os.access(c, os.X_OK)]
    if missing:
        sys.exit(f"pathprof cc --mode=p3 --copies={k} did not write {', '.join(missing)}")
    return exe, copies


def training_list(prog, out, pathprof, scale):
    """The interesting-path list of a whole-program path build's run at
    `scale` (overhead.py's training): what `--p3-train` plans the copies by."""
    exe = str(out / f"{prog['name']}-train-whole")
    subprocess.run([pathprof, "cc", "--mode=path", "--whole-program"] + overhead.compile_args(prog, exe),
                   check=True, cwd=out)
    listing, _ = overhead.interesting_list(prog, "workload", out, pathprof, scale, exe)
    return listing


def build_all(prog, out, pathprof, ks, train=None):
    """Every binary to time, by label (overhead.py's baselines, the whole-
    program path build, each copy of each K), and each K's OUTPUT; the
    copies planned by the training list `train` if given."""
    binaries = {v: overhead.build(v, prog, out, pathprof, None, None) for v in BASELINES}
    outputs = {}
    for k in ks:
        exe, copies = build_p3(prog, out, pathprof, k, train)
        outputs[k] = exe
        binaries.setdefault(WHOLE, exe)
        binaries.update((copy_label(k, i), c) for i, c in enumerate(copies))
    return binaries, outputs


def run_env(exe, out):
    """The environment of a run of `exe`: its own profile files, as
    overhead.py gives each variant."""
    name = Path(exe).name
    return dict(os.environ, PATHPROF_FILE=str(out / f"{name}.pprof"),
                LLVM_PROFILE_FILE=str(out / f"{name}.profraw"))


def first_difference(a, b):
    """The byte offset where outputs `a` and `b` first differ."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def check_outputs(binaries, prog, scale, out):
    """Runs every binary once, untimed (which also creates its profile file,
    so that every timed run adds to one), and exits unless its standard output
    is the plain build's; returns the plain build's output."""
    outputs = {}
    for label, exe in binaries.items():
        cmd, stdin = prog["run"](exe, scale, out)
        outputs[label] = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, input=stdin_bytes(stdin),
                                        env=run_env(exe, out)).stdout
        expected = outputs["plain"]
        if outputs[label] != expected:
            sys.exit(f"{prog['name']}: {label}'s output differs from the plain build's at byte "
                     f"{first_difference(outputs[label], expected)} "
                     f"({len(outputs[label])} and {len(expected)} bytes)")
    return outputs["plain"]


def merge_check(prog, exe, k, scale, out, pathprof, expected):
    """Runs `pathprof p3 run -k k` on the workload (the copies at once,
    untimed) and, if the merge succeeds and copy 0's output is the plain
    build's, `pathprof p3 stats -k k` on the merged profile. Returns
    {"ok", "error", "stats"} ("stats": the JSON row for K, with the program's
    function and profitable-procedure counts)."""
    merged = out / f"{Path(exe).name}-merged.pprof"
    merged.unlink(missing_ok=True)
    cmd, stdin = prog["run"](exe, scale, out)
    stdin = stdin_bytes(stdin)
    run = subprocess.run([pathprof, "p3", "run", "-k", str(k), "-o", str(merged), "--"] + cmd,
                         cwd=out, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                         capture_output=True)
    if run.returncode != 0:
        error = run.stderr.decode(errors="replace").strip() or f"exit status {run.returncode}"
        return {"ok": False, "error": error, "stats": None}
    if run.stdout != expected:
        return {"ok": False, "stats": None,
                "error": f"p3 run's output (copy 0's) differs from the plain build's at byte "
                         f"{first_difference(run.stdout, expected)}"}
    stats = json.loads(subprocess.run(
        [pathprof, "p3", "stats", "-k", str(k), "--map", exe, str(merged), "--format", "json"],
        check=True, capture_output=True, text=True).stdout)
    row = dict(stats["rows"][0], functions=stats["functions"])
    return {"ok": True, "error": None, "stats": row}


def measure(binaries, prog, scale, out, runs):
    """CPU times of every binary, one process at a time, round-robin over
    `runs` rounds: {label: [seconds per round]}."""
    times = {label: [] for label in binaries}
    for _ in range(runs):
        for label, exe in binaries.items():
            cmd, stdin = prog["run"](exe, scale, out)
            times[label].append(overhead.cpu_time(cmd, run_env(exe, out), stdin_bytes(stdin)))
    return times


def fraction(ratio, reference):
    """Overhead `ratio - 1` as a fraction of `reference - 1`; None where the
    reference costs nothing measurable."""
    return (ratio - 1) / (reference - 1) if reference > 1 else None


def summarize(times, ks, merges):
    """Medians, ratios to plain and, per K, the copies' figures."""
    median = {label: statistics.median(t) for label, t in times.items()}
    ratio = {label: m / median["plain"] for label, m in median.items()}
    per_k = []
    for k in ks:
        copies = [ratio[copy_label(k, i)] for i in range(k)]
        slowest = max(copies)
        per_k.append({
            "copies": k,
            "copy_ratios": copies,
            "slowest_copy": copies.index(slowest),
            "slowest_ratio": slowest,
            "mean_ratio": statistics.mean(copies),
            "path_ratio": ratio["pathprof-path"],
            "path_whole_program_ratio": ratio[WHOLE],
            "clang_ratio": ratio["clang-instr"],
            "overhead_fraction": fraction(slowest, ratio["pathprof-path"]),
            "overhead_fraction_whole_program": fraction(slowest, ratio[WHOLE]),
            "merge": merges[k],
        })
    return {"times": times, "median": median, "ratio": ratio, "k": per_k}


def percent(x):
    """A share as a percentage, or a dash."""
    return "–" if x is None else f"{100 * x:.1f} %"


def summary_table(results):
    """The markdown table of every program and K."""
    lines = ["| program | K | slowest copy | mean copy | path | path, whole program | clang instr "
             "| overhead fraction (path) | (whole-program path) | P3 hits vs SBL | PBL hits vs SBL | merge |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        for row in r["k"]:
            stats, merge = row["merge"]["stats"], row["merge"]
            cells = [
                name, str(row["copies"]),
                f"{row['slowest_ratio']:.2f} (copy {row['slowest_copy']})", f"{row['mean_ratio']:.2f}",
                f"{row['path_ratio']:.2f}", f"{row['path_whole_program_ratio']:.2f}", f"{row['clang_ratio']:.2f}",
                "–" if row["overhead_fraction"] is None else f"{row['overhead_fraction']:.2f}",
                "–" if row["overhead_fraction_whole_program"] is None
                else f"{row['overhead_fraction_whole_program']:.2f}",
                percent(stats and -stats["p3_reduction"]), percent(stats and -stats["pbl_reduction"]),
                "merged" if merge["ok"] else "**refused**",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def program_section(name, r, scale, runs):
    """One program's binaries (median CPU time, ratio) and what its merges
    said."""
    lines = [f"## {name} (scale {scale}, median of {runs} interleaved runs, each copy alone)\n",
             "| build | median CPU s | ratio to plain |", "|---|---|---|"]
    for label, m in r["median"].items():
        lines.append(f"| {label} | {m:.3f} | {r['ratio'][label]:.2f} |")
    lines.append("")
    for row in r["k"]:
        merge, stats = row["merge"], row["merge"]["stats"]
        if not merge["ok"]:
            lines += [f"K = {row['copies']}: `pathprof p3 run` refused the merge:\n", "```",
                      merge["error"], "```", ""]
        else:
            lines.append(f"K = {row['copies']}: merged; `pathprof p3 stats`: SBL {stats['sbl']} hits, "
                         f"PBL {stats['pbl']}, P3 {stats['p3']} (per copy {stats['p3_per_copy']}), "
                         f"{stats['profitable']} of {stats['functions']} functions partitioned.\n")
    return lines


def header(args):
    """The results' title: what ran, when, on which commit and machine."""
    commit, date = overhead.commit_and_date()
    return {"command": shlex.join([sys.argv[0]] + sys.argv[1:]), "date": date, "commit": commit,
            "cpus": os.cpu_count(), "scale": args.scale, "runs": args.runs, "copies": args.copies,
            "train_scale": args.train_scale if args.train else None}


def render(meta, results, wall):
    """The markdown results."""
    lines = ["# P3: the slowest copy against sequential path mode (bench/p3.py)\n",
             f"`{meta['command']}`, {meta['date']}, pathprof {meta['commit']}, {meta['cpus']} CPUs.\n",
             "Copies planned by probe counts (the paper's Algorithm 2).\n" if meta["train_scale"] is None else
             f"Copies planned by a training run (`--p3-train`) at scale {meta['train_scale']}.\n",
             "CPU time ratios to the plain build (medians; each copy run alone). Overhead fraction: "
             "(slowest copy - 1) / (path - 1). Hits: `pathprof p3 stats` on the merged profile, the slowest "
             "copy's probe executions against sequential Ball-Larus (SBL), negative is fewer.\n"]
    lines += summary_table(results) + [""]
    for name, r in results.items():
        lines += program_section(name, r, meta["scale"], meta["runs"])
    lines += machine.markdown(meta["machine"])
    lines.append(f"Wall time of the whole run (builds, checks, measurement): {wall:.0f} s.")
    return "\n".join(lines)


def copies_list(text):
    """`--copies`: a comma-separated list of K, each at least 2."""
    ks = sorted({int(k) for k in text.split(",")})
    if not ks or ks[0] < 2:
        raise argparse.ArgumentTypeError("each K must be at least 2")
    return ks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", type=copies_list, default=[2, 4, 8], help="the Ks to build and measure (2,4,8)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scale", type=int, default=50,
                    help=overhead.SCALE_HELP)
    ap.add_argument("--out", type=Path, default=overhead.ROOT / "bench/results/p3.md",
                    help="the markdown results (default bench/results/p3.md); JSON beside it, as .json")
    ap.add_argument("--only", choices=list(PROGRAMS), action="append",
                    help="measure only these programs (repeatable)")
    ap.add_argument("--train", action="store_true",
                    help="plan the copies by a training run's paths (--p3-train)")
    ap.add_argument("--train-scale", type=int, default=5, help="the training run's scale (default 5)")
    args = ap.parse_args()
    started = time.monotonic()
    steal = machine.Steal()
    meta = header(args)
    pathprof = overhead.build_pathprof()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for name, make in PROGRAMS.items():
            if args.only and name not in args.only:
                continue
            prog = make()
            print(f"p3.py: {name}: building", file=sys.stderr)
            train = training_list(prog, out, pathprof, args.train_scale) if args.train else None
            binaries, outputs = build_all(prog, out, pathprof, args.copies, train)
            print(f"p3.py: {name}: checking outputs and merges", file=sys.stderr)
            expected = check_outputs(binaries, prog, args.scale, out)
            merges = {k: merge_check(prog, outputs[k], k, args.scale, out, pathprof, expected)
                      for k in args.copies}
            for k, m in merges.items():
                if not m["ok"]:
                    print(f"p3.py: {name}: K={k}: merge refused:\n{m['error']}", file=sys.stderr)
            print(f"p3.py: {name}: measuring {len(binaries)} binaries, {args.runs} rounds", file=sys.stderr)
            times = measure(binaries, prog, args.scale, out, args.runs)
            results[name] = summarize(times, args.copies, merges)
    wall = time.monotonic() - started
    meta["machine"] = machine.facts(overhead.CLANG, steal)
    overhead.publish(render(meta, results, wall), args.out,
                     dict(meta, programs=results, wall_seconds=round(wall, 1)), indent=2)


if __name__ == "__main__":
    main()
