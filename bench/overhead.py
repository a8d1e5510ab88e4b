#!/usr/bin/env python3
"""Overhead of pathprof against the uninstrumented program, clang's
-fprofile-instr-generate and gcc's --coverage, on third-party programs.

Each variant is built once; then all variants run round-robin RUNS times on the
same workload, and the median CPU time (user + system of the child) of each is
reported with its ratio to the plain build. Run on purpose, not in CI:

    bench/overhead.py [--runs 7] [--scale 50] [--out bench/results.md]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLANG = "/usr/lib/llvm-22/bin/clang"


def crate_dir(name):
    meta = json.loads(subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--manifest-path", str(ROOT / "Cargo.toml")]))
    for p in meta["packages"]:
        if p["name"] == name:
            return Path(p["manifest_path"]).parent
    sys.exit(f"cargo does not know {name}; run `cargo fetch` in {ROOT}")


def lua_program():
    src = crate_dir("lua-src") / "lua-5.4.9"
    files = [str(src / f) for f in sorted(os.listdir(src)) if f.endswith(".c") and f not in ("lua.c", "luac.c")]
    return {
        "name": "lua",
        "sources": [str(ROOT / "bench/lua/driver.c")] + files,
        "cflags": ["-DLUA_USE_LINUX", f"-I{src}"],
        "libs": ["-lm", "-ldl"],
        "run": lambda exe, scale: [exe, str(ROOT / "bench/lua/workload.lua"), str(scale)],
    }


def build(variant, prog, out, pathprof):
    exe = str(out / f"{prog['name']}-{variant}")
    common = ["-O2", "-g"] + prog["cflags"] + prog["sources"] + ["-o", exe] + prog["libs"]
    if variant == "plain":
        cmd = [CLANG] + common
    elif variant == "clang-instr":
        cmd = [CLANG, "-fprofile-instr-generate"] + common
    elif variant == "gcc-coverage":
        cmd = ["gcc", "--coverage"] + common
    else:
        cmd = [pathprof, "cc", f"--mode={variant.split('-')[1]}"] + common
    subprocess.run(cmd, check=True, cwd=out)
    return exe


def cpu_time(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--scale", type=int, default=50)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-p", "pathprof", "-p", "pathprof-rt"], check=True, cwd=ROOT)
    pathprof = str(ROOT / "target/release/pathprof")
    variants = ["plain", "clang-instr", "gcc-coverage", "pathprof-block", "pathprof-edge", "pathprof-path"]
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for prog in [lua_program()]:
            exes = {v: build(v, prog, out, pathprof) for v in variants}
            times = {v: [] for v in variants}
            for _ in range(args.runs):
                for v in variants:
                    env = dict(os.environ, PATHPROF_FILE=str(out / f"{v}.pprof"),
                               LLVM_PROFILE_FILE=str(out / f"{v}.profraw"))
                    times[v].append(cpu_time(prog["run"](exes[v], args.scale), env))
            base = statistics.median(times["plain"])
            lines.append(f"## {prog['name']} (scale {args.scale}, median of {args.runs} interleaved runs)\n")
            lines.append("| variant | median CPU s | ratio to plain |")
            lines.append("|---|---|---|")
            for v in variants:
                m = statistics.median(times[v])
                lines.append(f"| {v} | {m:.3f} | {m / base:.2f} |")
            lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
