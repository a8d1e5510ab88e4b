#!/usr/bin/env python3
"""Instructions executed (valgrind's callgrind, repeatable even on a busy
machine) by each variant of the overhead suite's programs on a small
workload, and their ratio to the plain build: where the probes' own cost is
the question rather than caches. Builds use -gdwarf-4 (Debian 12's valgrind
cannot read clang 22's DWARF 5). Run on purpose, not in CI:

    bench/callgrind.py [--only lua] [--scale 2] [--baseline DIR] [--variants edge,path,block-every]
                       [--keep DIR] | tee bench/results/callgrind.md

It prints a markdown table (under a title with the date and the commit
measured) to standard output; the current results are
bench/results/callgrind.md.

`--variants`: overhead.py's pathprof variants without their `pathprof-`;
the PPP ones (`ppp`, `ppp-small`, ...) are trained as overhead.py trains them,
on a path-mode build of the same flags.

`--baseline DIR`: another pathprof checkout (release build) measured beside
this one, its variants named `before:...`.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from overhead import CLANG, PATHPROF_VARIANTS, PPP_VARIANTS, ROOT, SUITE, commit_and_date, interesting_list

PROGRAMS = SUITE


def instructions(argv, stdin, env, out):
    """Instructions callgrind counts for one run of `argv`."""
    run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--"] + argv,
                         stdin=subprocess.DEVNULL if stdin is None else open(stdin, "rb"),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    found = re.search(rb"Collected : (\d+)", run.stderr)
    if not found:
        raise SystemExit(f"callgrind failed on {argv[0]}: {run.stderr[-500:].decode(errors='replace')}")
    return int(found.group(1))


def build(cc, prog, exe):
    """Builds `prog` as `exe` with the compiler command `cc`."""
    subprocess.run(cc + ["-O2", "-gdwarf-4"] + prog["cflags"] + prog["sources"] + ["-o", exe]
                   + prog["libs"], check=True, stdout=subprocess.DEVNULL)


def pathprof_builds(baseline):
    """Builds this checkout's pathprof (release) and returns the commands to
    measure, by variant name prefix: this one's (""), and `baseline`'s
    ("before:"), a checkout built the same way, when given."""
    subprocess.run(["cargo", "build", "--release", "-p", "pathprof", "-p", "pathprof-rt", "-p", "pathprof-plugin"],
                   check=True, cwd=ROOT)
    pathprofs = {"": str(ROOT / "target/release/pathprof")}
    if baseline:
        pathprofs["before:"] = str(baseline.resolve() / "target/release/pathprof")
    return pathprofs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=list(PROGRAMS), action="append")
    ap.add_argument("--scale", type=int, default=2)
    ap.add_argument("--baseline", type=Path)
    ap.add_argument("--variants", default="block,edge,path", type=lambda s: s.split(","))
    ap.add_argument("--keep", type=Path, help="keep each run's callgrind output (callgrind.out.PROGRAM-VARIANT) "
                    "in this directory, for callgrind_annotate")
    args = ap.parse_args()
    pathprofs = pathprof_builds(args.baseline)
    variants = {"plain": [CLANG], "clang-instr": [CLANG, "-fprofile-instr-generate"]}
    trainers = {}
    for prefix, pathprof in pathprofs.items():
        for v in args.variants:
            key, label = f"pathprof-{v}", f"{prefix}pathprof-{v}"
            if key in PPP_VARIANTS:
                training, flags = PPP_VARIANTS[key]
                variants[label] = [pathprof, "cc", "--mode=ppp"] + flags
                trainers[label] = (pathprof, training)
            else:
                variants[label] = [pathprof, "cc"] + PATHPROF_VARIANTS[key]
    commit, date = commit_and_date()
    print(f"# Instructions executed (bench/callgrind.py), {date}, pathprof {commit}\n\n"
          f"`{shlex.join([sys.argv[0]] + sys.argv[1:])}`: one run of each build at scale {args.scale}.\n")
    print("| program | variant | instructions | ratio to plain |\n|---|---|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="pathprof-callgrind-") as tmp:
        tmp = Path(tmp)
        for name, make in PROGRAMS.items():
            if args.only and name not in args.only:
                continue
            prog = make()
            plain = None
            for variant, cc in variants.items():
                exe = str(tmp / f"{name}-{variant.replace(':', '-')}")
                if variant in trainers:
                    pathprof, training = trainers[variant]
                    trained = exe + "-train"
                    build(cc[:2] + ["--mode=path"], prog, trained)
                    paths, _ = interesting_list(prog, training, tmp, pathprof, args.scale, trained)
                    cc = cc + [f"--interesting={paths}"]
                build(cc, prog, exe)
                argv, stdin = prog["run"](exe, args.scale, tmp)
                # A profile file of its own, new: a run that merges into an
                # earlier variant's file reads it first (2 % of SQLite's run).
                profile = tmp / f"{name}-{variant.replace(':', '-')}.pprof"
                profile.unlink(missing_ok=True)
                env = dict(os.environ, PATHPROF_FILE=str(profile), LLVM_PROFILE_FILE=str(tmp / "p.profraw"))
                out = (args.keep or tmp) / f"callgrind.out.{name}-{variant.replace(':', '-')}"
                n = instructions(argv, stdin, env, out)
                plain = plain or n
                print(f"| {name} | {variant} | {n:,} | {n / plain:.3f} |", flush=True)


if __name__ == "__main__":
    main()
