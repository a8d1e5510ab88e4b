#!/usr/bin/env python3
"""Profile-guided optimisation from pathprof's counts against clang's own
PGO, on the overhead suite's programs (Lua 5.4, bzip2 1.0.8, zlib, SQLite,
xz; bench/overhead.py defines them): each program is trained on one input
(the workload at --train-scale) and measured on another (at --scale).

Variants, every one measured in the same interleaved rounds:

- `plain`: clang 22 -O2;
- `clang-ir-pgo`: -fprofile-generate, the training run, llvm-profdata
  merge, -fprofile-use;
- `clang-fe-pgo`: -fprofile-instr-generate / -fprofile-instr-use (clang's
  front-end instrumentation);
- `pathprof-edge-pgo`, `pathprof-path-pgo`, `pathprof-block-pgo`: pathprof
  cc in that mode, the training run, `pathprof cc --profile-use=PROFILE`;
- `pathprof-path-dup-pgo`: the path-mode profile with
  `--duplicate-hot-paths` (tails of hot paths copied where their branches
  correlate).

For each program: every build's output and exit status checked against
plain's on the measured input (a difference stops the script), the median
CPU time (user + system) of --runs interleaved rounds and its ratio to
plain, the optimised build's wall time against plain's (one build each),
`.text` size, and with --callgrind the instructions executed (valgrind, at
--callgrind-scale; repeatable on a busy machine). Then the suite's table
with geometric means, the goals, and the machine. The current results are
bench/results/pgo.md and .json. Run on purpose, not in CI:

    bench/pgo.py [--runs 5] [--scale 20] [--train-scale 4] [--callgrind]
                 [--only PROGRAM] [--variants a,b] [--out bench/results/pgo.md]
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import callgrind
import machine
from overhead import CLANG, SUITE, build_pathprof, commit_and_date, compile_args, cpu_time, publish

PROFDATA = "/usr/lib/llvm-22/bin/llvm-profdata"
SIZE = "/usr/lib/llvm-22/bin/llvm-size"

PGO_VARIANTS = ["clang-ir-pgo", "clang-fe-pgo", "pathprof-block-pgo", "pathprof-edge-pgo", "pathprof-path-pgo",
                "pathprof-path-dup-pgo"]
VARIANTS = ["plain"] + PGO_VARIANTS


def args_for(prog, exe):
    """overhead.py's compiler arguments, with DWARF 4 (Debian 12's valgrind
    cannot read clang 22's DWARF 5)."""
    return ["-gdwarf-4" if a == "-g" else a for a in compile_args(prog, exe)]


def run_training(prog, exe, scale, out, env):
    """Runs the instrumented `exe` on the training input with `env`."""
    cmd, _ = prog["run"](exe, scale, out)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **env))


def build(variant, prog, out, pathprof, train_scale):
    """Builds `variant` of `prog` (training first for the PGO variants);
    returns the optimised executable and the optimised build's wall time."""
    name = prog["name"]
    exe = str(out / f"{name}-{variant}")

    def timed(cmd):
        began = time.monotonic()
        done = subprocess.run(cmd, check=True, cwd=out, stderr=subprocess.PIPE, text=True)
        sys.stderr.write(done.stderr)
        copied = re.search(r"(\d+) tails? of hot paths copied \((\d+) instructions\)", done.stderr)
        if copied:
            COPIED[name] = {"tails": int(copied[1]), "instructions": int(copied[2])}
        return time.monotonic() - began

    if variant == "plain":
        return exe, timed([CLANG] + args_for(prog, exe))
    trained = str(out / f"{name}-{variant}-train")
    if variant == "clang-ir-pgo":
        raw = out / f"{name}-ir-raw"
        subprocess.run([CLANG, f"-fprofile-generate={raw}"] + args_for(prog, trained), check=True, cwd=out)
        run_training(prog, trained, train_scale, out, {})
        data = out / f"{name}-ir.profdata"
        subprocess.run([PROFDATA, "merge", "-o", str(data), str(raw)], check=True)
        return exe, timed([CLANG, f"-fprofile-use={data}"] + args_for(prog, exe))
    if variant == "clang-fe-pgo":
        raw = out / f"{name}-fe.profraw"
        subprocess.run([CLANG, "-fprofile-instr-generate"] + args_for(prog, trained), check=True, cwd=out)
        run_training(prog, trained, train_scale, out, {"LLVM_PROFILE_FILE": str(raw)})
        data = out / f"{name}-fe.profdata"
        subprocess.run([PROFDATA, "merge", "-o", str(data), str(raw)], check=True)
        return exe, timed([CLANG, f"-fprofile-instr-use={data}"] + args_for(prog, exe))
    mode = variant.split("-")[1]
    profile = out / f"{name}-{variant}.pprof"
    profile.unlink(missing_ok=True)
    subprocess.run([pathprof, "cc", f"--mode={mode}"] + args_for(prog, trained), check=True, cwd=out)
    run_training(prog, trained, train_scale, out, {"PATHPROF_FILE": str(profile)})
    if mode == "path":
        CORRELATION[name] = correlation(pathprof, trained, profile)
    use = [f"--profile-use={profile}"] + (["--duplicate-hot-paths"] if "-dup-" in variant else [])
    return exe, timed([pathprof, "cc"] + use + args_for(prog, exe))


# Per program, what --duplicate-hot-paths copied (the link's note).
COPIED = {}

# Per program, from the path-mode training profile: the branch decisions
# along its paths and how many the edge profile and the path so far
# mispredict (`pathprof predict`).
CORRELATION = {}


def correlation(pathprof, exe, profile):
    """`pathprof predict`'s branch decisions of `exe`'s path profile."""
    text = subprocess.run([pathprof, "predict", "--map", exe, str(profile)], check=True,
                          capture_output=True, text=True).stdout
    found = re.search(r"branch decisions along the paths: (\d+); mispredicted from the edge profile: "
                      r"(\d+) .*from the path so far: (\d+) ", text)
    if not found:
        sys.exit(f"pathprof predict printed no branch decisions:\n{text}")
    executed, edge, path = map(int, found.groups())
    return {"decisions": executed, "edge_mispredicted": edge, "path_mispredicted": path}


def text_size(exe):
    """The size of `exe`'s .text section, bytes."""
    sizes = subprocess.run([SIZE, "-A", exe], check=True, capture_output=True, text=True).stdout
    for line in sizes.splitlines():
        parts = line.split()
        if parts and parts[0] == ".text":
            return int(parts[1])
    sys.exit(f"{exe} has no .text")


def behaviour(prog, exe, scale, out):
    """What `exe` prints and returns on the measured input."""
    cmd, _ = prog["run"](exe, scale, out)
    r = subprocess.run(cmd, capture_output=True)
    return r.returncode, r.stdout


def instructions(prog, exe, scale, out):
    """Instructions callgrind counts for one run of `exe` at `scale`."""
    cmd, stdin = prog["run"](exe, scale, out)
    return callgrind.instructions(cmd, stdin, dict(os.environ), "/dev/null")


def geomean(values):
    return statistics.geometric_mean(values) if values else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", type=int, default=20, help="the measured input (overhead.py's scale)")
    ap.add_argument("--train-scale", type=int, default=4, help="the training input, another than the measured one")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions with callgrind")
    ap.add_argument("--callgrind-scale", type=int, default=2)
    ap.add_argument("--only", choices=list(SUITE), action="append")
    ap.add_argument("--variants", type=lambda s: s.split(","),
                    help="comma-separated subset of: " + ", ".join(PGO_VARIANTS) + " (plain always runs)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.train_scale == args.scale:
        sys.exit("--train-scale must differ from --scale: PGO is measured on an input it was not trained on")
    command = shlex.join([sys.argv[0]] + sys.argv[1:])
    commit, date = commit_and_date()
    started = time.monotonic()
    steal = machine.Steal()
    pathprof = build_pathprof()
    variants = [v for v in VARIANTS if v == "plain" or not args.variants or v in args.variants]
    lines = ["# Profile-guided optimisation (bench/pgo.py)\n",
             f"`{command}`, {date}, pathprof {commit}, {os.cpu_count()} CPUs. Trained at scale "
             f"{args.train_scale}, measured at scale {args.scale} (overhead.py's inputs).\n"]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for name, make in SUITE.items():
            if args.only and name not in args.only:
                continue
            prog = make()
            exes, build_s = {}, {}
            for v in variants:
                exes[v], build_s[v] = build(v, prog, out, pathprof, args.train_scale)
            expected = behaviour(prog, exes["plain"], args.scale, out)
            for v in variants:
                if behaviour(prog, exes[v], args.scale, out) != expected:
                    sys.exit(f"{name}: {v} does not behave as the plain build (output or exit status differ)")
            times = {v: [] for v in variants}
            for _ in range(args.runs):
                for v in variants:
                    cmd, _ = prog["run"](exes[v], args.scale, out)
                    times[v].append(cpu_time(cmd, dict(os.environ)))
            medians = {v: statistics.median(times[v]) for v in variants}
            ir = {v: instructions(prog, exes[v], args.callgrind_scale, out) for v in variants} if args.callgrind else {}
            results[name] = {
                v: {
                    "median_cpu_s": medians[v],
                    "ratio": medians[v] / medians["plain"],
                    "round_ratios": [t / p for t, p in zip(times[v], times["plain"])],
                    "build_s": build_s[v],
                    "build_ratio": build_s[v] / build_s["plain"],
                    "text_bytes": text_size(exes[v]),
                    **({"instructions": ir[v], "instruction_ratio": ir[v] / ir["plain"]} if ir else {}),
                }
                for v in variants
            }
            lines += [f"## {name} (median of {args.runs} interleaved runs)\n",
                      "| variant | median CPU s | ratio to plain | rounds' ratios | instructions ratio "
                      "| build s (ratio) | .text KB (ratio) |",
                      "|---|---|---|---|---|---|---|"]
            r = results[name]
            for v in variants:
                x = r[v]
                spread = ", ".join(f"{q:.3f}" for q in sorted(x["round_ratios"]))
                irr = f"{x['instruction_ratio']:.3f}" if ir else "—"
                lines.append(f"| {v} | {x['median_cpu_s']:.3f} | {x['ratio']:.3f} | {spread} | {irr} | "
                             f"{x['build_s']:.1f} ({x['build_ratio']:.2f}) | "
                             f"{x['text_bytes'] / 1024:.0f} ({x['text_bytes'] / r['plain']['text_bytes']:.3f}) |")
            lines.append("")
    shown = [v for v in variants if v != "plain"]
    lines += ["## The suite (CPU time ratio to plain clang -O2; lower is faster)\n",
              "| program | " + " | ".join(shown) + " |", "|---" * (len(shown) + 1) + "|"]
    for name, r in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{r[v]['ratio']:.3f}" for v in shown) + " |")
    lines.append("| geometric mean | " + " | ".join(
        f"{geomean([r[v]['ratio'] for r in results.values()]):.3f}" for v in shown) + " |")
    if args.callgrind:
        lines.append("| geometric mean, instructions | " + " | ".join(
            f"{geomean([r[v]['instruction_ratio'] for r in results.values()]):.3f}" for v in shown) + " |")
    lines.append("| geometric mean, .text | " + " | ".join(
        f"{geomean([r[v]['text_bytes'] / r['plain']['text_bytes'] for r in results.values()]):.3f}"
        for v in shown) + " |")
    lines.append("| geometric mean, build time | " + " | ".join(
        f"{geomean([r[v]['build_ratio'] for r in results.values()]):.2f}" for v in shown) + " |")
    lines.append("")
    if CORRELATION:
        lines += ["## What the paths could add (`pathprof predict` of the path-mode training profile)\n",
                  "Branch decisions along the executed paths, and the share mispredicted by the edge "
                  "profile's most frequent edge (what edge weights tell the optimiser) and by the most "
                  "frequent way of the paths that came the same way so far (the best any duplication "
                  "along path prefixes could tell it).\n",
                  "| program | decisions | edge profile mispredicts | path so far mispredicts | difference |",
                  "|---|---|---|---|---|"]
        for name, c in CORRELATION.items():
            e, p = c["edge_mispredicted"] / c["decisions"], c["path_mispredicted"] / c["decisions"]
            lines.append(f"| {name} | {c['decisions']} | {100 * e:.2f}% | {100 * p:.2f}% | {100 * (e - p):.2f} points |")
        lines.append("")
    if COPIED:
        lines += ["## What `--duplicate-hot-paths` copied (the link's note)\n",
                  "| program | tails | instructions |", "|---|---|---|"]
        lines += [f"| {name} | {c['tails']} | {c['instructions']} |" for name, c in COPIED.items()]
        lines.append("")
    lines += machine.markdown(machine.facts(CLANG, steal))
    lines.append(f"Wall time of the whole run (builds, training, measurement): {time.monotonic() - started:.0f} s.")
    publish("\n".join(lines), args.out, {
        "command": command, "date": date, "commit": commit, "runs": args.runs,
        "scale": args.scale, "train_scale": args.train_scale, "programs": results,
        "correlation": CORRELATION, "copied": COPIED,
    })


if __name__ == "__main__":
    main()
