#!/usr/bin/env python3
"""Build time of real projects with pathprof against the plain build (and
against clang's -fprofile-instr-generate -fcoverage-mapping, for scale): wall
time of `make -j2` and the CPU time (user + system) of everything it ran,
each variant built ROUNDS times round-robin, the medians reported with their
ratios to the plain build, under a title with the commit and the date, and
the machine (bench/machine.py). The CPU-time ratio stays fair when other
work shares the machine; the wall-time ratio is the one a user waits for.
Run on purpose, not in CI:

    bench/buildtime.py [--rounds 3] [--projects lua,sqlite,xz,xz-static]
                       [--out bench/results/buildtime.md]

The markdown goes to --out (default bench/results/buildtime.md, the current
results).

Projects, from registry crates' bundled sources:
  lua      Lua 5.4 and the benchmark driver, one Makefile rule per object
  sqlite   the SQLite amalgamation (one large translation unit) and its driver
  xz       xz through its own autotools build (configured once per variant,
           outside the timing): `make -j2` then its test programs
           (`make -j2 check TESTS=`), with shared liblzma
  xz-static  the same with --disable-shared: test programs linked statically
"""
import argparse
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine
from overhead import CLANG, ROOT, commit_and_date, crate_dir, lua_program, sqlite_program

LLVM_COV = ["-fprofile-instr-generate", "-fcoverage-mapping"]


def compilers(pathprof):
    """Each variant's C compiler, as one CC string."""
    return {
        "plain": CLANG,
        "clang-instr-cov": " ".join([CLANG] + LLVM_COV),
        "pathprof-path": f"{pathprof} cc",
    }


def makefile_project(prog, work):
    """A directory with a Makefile building `prog` from its sources, one
    object per source, linked into one program."""
    objects = []
    rules = []
    for i, src in enumerate(prog["sources"]):
        obj = f"o{i}_{Path(src).stem}.o"
        objects.append(obj)
        rules.append(f"{obj}: {src}\n\t$(CC) -O2 $(CFLAGS) -c {src} -o {obj}\n")
    text = (
        f"CFLAGS = {' '.join(prog['cflags'])}\n"
        f"prog: {' '.join(objects)}\n\t$(CC) -O2 {' '.join(objects)} -o prog {' '.join(prog['libs'])}\n"
        + "".join(rules)
    )
    work.mkdir(parents=True)
    (work / "Makefile").write_text(text)

    def build(cc):
        for f in work.glob("*.o"):
            f.unlink()
        (work / "prog").unlink(missing_ok=True)
        return timed(["make", "-s", "-j2", f"CC={cc}"], work)

    return build


def xz_project(work, shared):
    """xz's own build: sources copied once, configured per compiler (not
    timed), then `make -j2` and the test programs timed."""
    src = work / "xz-src"
    if not src.exists():
        shutil.copytree(crate_dir("lzma-sys") / "xz-5.2", src)
        subprocess.run(["sh", "autogen.sh", "--no-po4a"], cwd=src, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    name = "xz-shared" if shared else "xz-static"

    def build(cc):
        b = work / f"{name}-{abs(hash(cc))}"
        shutil.rmtree(b, ignore_errors=True)
        b.mkdir()
        configure = [str(src / "configure"), f"CC={cc}"]
        if not shared:
            configure.append("--disable-shared")
        subprocess.run(configure, cwd=b, check=True, stdout=subprocess.DEVNULL)
        return timed(["make", "-s", "-j2"], b) + timed(["make", "-s", "-j2", "check", "TESTS="], b)

    return build


def timed(cmd, cwd):
    """(wall seconds, CPU seconds of the children) of running `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Times(wall, cpu)


class Times(tuple):
    """(wall, cpu) seconds; adding two adds both."""

    def __new__(cls, wall, cpu):
        return super().__new__(cls, (wall, cpu))

    def __add__(self, other):
        return Times(self[0] + other[0], self[1] + other[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--projects", default="lua,sqlite,xz,xz-static")
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/buildtime.md")
    args = ap.parse_args()
    pathprof = str(ROOT / "target/release/pathprof")
    subprocess.run(["cargo", "build", "--release", "--workspace"], cwd=ROOT, check=True)
    ccs = compilers(pathprof)
    steal = machine.Steal()
    rows = []
    with tempfile.TemporaryDirectory(prefix="pathprof-buildtime-") as tmp:
        tmp = Path(tmp)
        builders = {
            "lua": lambda: makefile_project(lua_program(), tmp / "lua"),
            "sqlite": lambda: makefile_project(sqlite_program(), tmp / "sqlite"),
            "xz": lambda: xz_project(tmp, shared=True),
            "xz-static": lambda: xz_project(tmp, shared=False),
        }
        for project in args.projects.split(","):
            build = builders[project]()
            times = {v: [] for v in ccs}
            for _ in range(args.rounds):
                for variant, cc in ccs.items():
                    times[variant].append(build(cc))
            plain = [statistics.median(t[k] for t in times["plain"]) for k in (0, 1)]
            for variant in ccs:
                wall, cpu = (statistics.median(t[k] for t in times[variant]) for k in (0, 1))
                row = (project, variant, wall, wall / plain[0], cpu, cpu / plain[1])
                rows.append(row)
                print(f"{project:10} {variant:16} wall {wall:7.2f} s {row[3]:5.2f}  "
                      f"cpu {cpu:7.2f} s {row[5]:5.2f}", flush=True)
    head, date = commit_and_date()
    text = [
        f"# Build time (`make -j2`, median of {args.rounds}), pathprof {head}",
        "",
        f"`{shlex.join([sys.argv[0]] + sys.argv[1:])}`, {date}.",
        "",
        "| project | variant | wall s | wall ratio | CPU s | CPU ratio |",
        "|---|---|---:|---:|---:|---:|",
    ]
    text += [f"| {p} | {v} | {w:.2f} | {wr:.2f} | {c:.2f} | {cr:.2f} |"
             for p, v, w, wr, c, cr in rows]
    text += [""] + machine.markdown(machine.facts(CLANG, steal))
    args.out.write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
