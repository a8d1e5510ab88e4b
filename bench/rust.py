#!/usr/bin/env python3
"""Overhead of pathprof on a real Rust program: ripgrep 15.2.0 (`rg`, from
crates.io) searching a generated text corpus, against the plain build and
against `-Cinstrument-coverage`, the count profiler Rust users have.

Each variant is installed from the registry with `cargo install --locked
--root DIR ripgrep --version 15.2.0` (its build's wall time recorded, every
build from scratch in cargo's own temporary target directory):

- `plain`: `cargo install` as is (ripgrep's release profile: 16 codegen
  units, no LTO);
- `plain-lto`: the same with `CARGO_PROFILE_RELEASE_LTO=fat` and one codegen
  unit, for reference: pathprof's builds optimise the whole program as one
  module at the link, as fat LTO does;
- `rust-coverage`: `RUSTFLAGS=-Cinstrument-coverage`, run with
  `LLVM_PROFILE_FILE` in the script's temporary directory;
- `pathprof-block`, `pathprof-edge`, `pathprof-path`: `pathprof cargo
  --mode=M install ...`, run with `PATHPROF_FILE` there too.

The workload (`WORKLOAD`) is seven searches of the corpus (`--files` files
of 400 KB, about 25 MB by default, made by a fixed generator), each one `rg`
process in one thread (`-j1 --sort path`, so that output and counts repeat
exactly): match counting, `-o`, `-i`, `-w`, replacements with capture
groups, context lines, inverted matches. Every variant runs it once and its
standard output and exit status must be the plain build's (the script stops
otherwise); then all variants run it round-robin RUNS times and the median
CPU time (user + system of the children, overhead.py's `cpu_time`) of each is
reported with its ratio to `plain` and to `plain-lto`. In the same rounds
each variant runs `rg --version` alone: what a process costs to start and
end (the profile written at exit), which the workload pays seven times.
Every run preloads `bench/rust/fixed_getrandom.c` (built with clang):
Rust's hash maps seed themselves from getrandom(2), so without it no two
runs of ripgrep take the same paths (22 functions' counts differ between
two runs of one build) and the path and edge profiles could not be
compared.

After the rounds the path build and the edge build each run the workload
once into a fresh profile: the results show `pathprof paths --top 5` (the
hottest paths as Rust source lines) and `pathprof verify` of the path
profile against the edge profile. Markdown goes to stdout and --out, the
same figures as JSON beside it (`.json`). Run on purpose, not in CI:

    bench/rust.py [--runs 7] [--files 64] [--out bench/results/rust.md]
                  [--variants plain,rust-coverage,pathprof-path]
                  [--pathprof /path/to/pathprof]

Without --pathprof it builds this checkout's pathprof first (overhead.py's
`build_pathprof`). Builds need the network (crates.io) the first time. The
current results are bench/results/rust.md and .json.
"""
import argparse
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
import overhead  # noqa: E402  (bench/overhead.py: timing, output checks, building pathprof)

CRATE, VERSION, BINARY = "ripgrep", "15.2.0", "rg"

# Each variant: (the command before `install`, variables added to cargo's
# environment).
LTO = {"CARGO_PROFILE_RELEASE_LTO": "fat", "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "1"}
VARIANTS = {
    "plain": (["cargo"], {}),
    "plain-lto": (["cargo"], LTO),
    "rust-coverage": (["cargo"], {"RUSTFLAGS": "-Cinstrument-coverage"}),
    "pathprof-block": (["{pathprof}", "cargo", "--mode=block"], {}),
    "pathprof-edge": (["{pathprof}", "cargo", "--mode=edge"], {}),
    "pathprof-path": (["{pathprof}", "cargo", "--mode=path"], {}),
}

# The searches, one `rg` process each ($RG the build, $C the corpus); the
# workload is their output, in this order.
WORKLOAD = r"""
set -e
$RG -j1 --sort path --count-matches '\b\w+\b' $C
$RG -j1 --sort path -n -o -i '(path|edge|block)\s+\w+' $C
$RG -j1 --sort path -n --column -o -w '[A-Z][a-z]+ [a-z]+' $C
$RG -j1 --sort path -n -r '$3/$2/$1' '(\d{4})-(\d{2})-(\d{2})' $C
$RG -j1 --sort path -n -C1 'ball (\w+) larus' $C
$RG -j1 --sort path -c -v loop $C
$RG -j1 --sort path -n -o -i 'w[a-z]+r|\w+@\w+\.org' $C
"""

SEARCHES = WORKLOAD.count("$RG ")

WORDS = [b"path", b"edge", b"block", b"profile", b"count", b"chord", b"tree", b"loop", b"ball", b"larus",
         b"Counter", b"fn", b"let", b"match", b"return", b"struct", b"impl", b"error", b"warning", b"42",
         b"0x7f3a", b"user@example.org", b"2026-11-23", b"alpha_beta", b"Weinberger", b"knuth"]


def make_corpus(root, files):
    """`files` text files of 400 KB under `root` (8 directories), words of
    `WORDS` drawn by a fixed linear congruential generator."""
    x = 12345
    for i in range(files):
        d = root / f"d{i % 8}"
        d.mkdir(parents=True, exist_ok=True)
        out = bytearray()
        while len(out) < 400_000:
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF
            out += WORDS[(x >> 16) % len(WORDS)] + (b"\n" if (x >> 8) % 11 == 0 else b" ")
        (d / f"f{i}.txt").write_bytes(bytes(out))


def program(corpus):
    """The workload as overhead.py's programs give theirs (`run`: the
    command line for a build, standard input)."""
    def run(exe, _scale, _tmp):
        return ["sh", "-c", f"RG={shlex.quote(exe)}; C={shlex.quote(str(corpus))}" + WORKLOAD], None
    return {"name": CRATE, "run": run}


def cargo_env(extra):
    """cargo's environment for a build: none of the caller's flags or target
    directory (each install builds from scratch), then `extra`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR")}
    return dict(env, **extra)


def install(variant, out, pathprof):
    """Installs `variant` under `out/<variant>`; returns its binary and the
    build's wall time."""
    front, extra = VARIANTS[variant]
    root = out / variant
    cmd = [a.format(pathprof=pathprof) for a in front] + [
        "install", "--locked", "--root", str(root), CRATE, "--version", VERSION]
    print(f"rust.py: {variant}: {shlex.join(cmd)}", file=sys.stderr)
    began = time.monotonic()
    subprocess.run(cmd, check=True, cwd=out, env=cargo_env(extra))
    return str(root / "bin" / BINARY), time.monotonic() - began


def run_env(out, variant, tag):
    """A run's environment: the variant's profile files (`tag`: which runs)
    in the temporary directory."""
    return dict(os.environ, PATHPROF_FILE=str(out / f"{variant}-{tag}.pprof"),
                LLVM_PROFILE_FILE=str(out / f"{variant}-{tag}.profraw"))


def pathprof_says(pathprof, *args):
    """What `pathprof ARGS` prints: its standard output, or, when it fails,
    its exit status and both outputs (the results show it; the measurements
    are kept)."""
    r = subprocess.run([pathprof, *args], capture_output=True, text=True)
    if r.returncode == 0:
        return r.stdout.rstrip()
    return f"pathprof {args[0]} failed (exit status {r.returncode}):\n{r.stdout}{r.stderr}".rstrip()


def table(variants, medians, startup, build_s):
    """The results' table, as markdown lines. The last column leaves out what
    the workload's processes cost to start and end, by `rg --version`."""
    lto = "plain-lto" in medians

    def net(v):
        return medians[v] - SEARCHES * startup[v]

    lines = ["| variant | build wall s | median CPU s | ratio to plain" + (" | ratio to plain-lto" if lto else "")
             + f" | `rg --version` CPU s | ratio to plain, less {SEARCHES} × `--version` |",
             "|---|---|---|---" + ("|---" if lto else "") + "|---|---|"]
    for v in variants:
        row = [v, f"{build_s[v]:.0f}", f"{medians[v]:.3f}", f"{medians[v] / medians['plain']:.2f}"]
        if lto:
            row.append(f"{medians[v] / medians['plain-lto']:.2f}")
        row += [f"{startup[v]:.3f}", f"{net(v) / net('plain'):.2f}"]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--files", type=int, default=64, help="files of 400 KB in the corpus (default 64)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--variants", type=lambda s: s.split(","),
                    help="comma-separated subset of: " + ", ".join(VARIANTS) + " (plain is always measured)")
    ap.add_argument("--pathprof", help="a pathprof binary to use (default: build this checkout's)")
    args = ap.parse_args()
    unknown = set(args.variants or []) - set(VARIANTS)
    if unknown:
        sys.exit(f"unknown variants {', '.join(sorted(unknown))}; known: {', '.join(VARIANTS)}")
    variants = [v for v in VARIANTS if v == "plain" or not args.variants or v in args.variants]
    started = time.monotonic()
    steal = machine.Steal()
    commit, date = overhead.commit_and_date()
    pathprof = os.path.abspath(args.pathprof) if args.pathprof else overhead.build_pathprof()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        corpus = out / "corpus"
        make_corpus(corpus, args.files)
        prog = program(corpus)
        exes, build_s = {}, {}
        for v in variants:
            exes[v], build_s[v] = install(v, out, pathprof)
        # Every run from here on: the same hash seeds (see the docstring).
        shim = out / "fixed_getrandom.so"
        subprocess.run([overhead.CLANG, "-O2", "-shared", "-fPIC", str(overhead.ROOT / "bench/rust/fixed_getrandom.c"),
                        "-o", str(shim)], check=True)
        os.environ["LD_PRELOAD"] = str(shim)
        overhead.same_output(prog, exes, args.files, out)
        times = {v: [] for v in variants}
        startup = {v: [] for v in variants}
        for _ in range(args.runs):
            for v in variants:
                cmd, _ = prog["run"](exes[v], args.files, out)
                times[v].append(overhead.cpu_time(cmd, run_env(out, v, "runs")))
                startup[v].append(overhead.cpu_time([exes[v], "--version"], run_env(out, v, "version")))
        medians = {v: statistics.median(t) for v, t in times.items()}
        startups = {v: statistics.median(t) for v, t in startup.items()}
        # One workload run each into fresh profiles, for the hottest paths and
        # the verifier.
        once = {}
        for v in ("pathprof-path", "pathprof-edge"):
            if v in exes:
                once[v] = out / f"{v}-once.pprof"
                cmd, _ = prog["run"](exes[v], args.files, out)
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                               env=dict(os.environ, PATHPROF_FILE=str(once[v])))
        paths = verified = None
        if "pathprof-path" in once:
            paths = pathprof_says(pathprof, "paths", "--map", exes["pathprof-path"], str(once["pathprof-path"]),
                                  "--top", "5")
        if len(once) == 2:
            verified = pathprof_says(pathprof, "verify", "--map", exes["pathprof-path"],
                                     str(once["pathprof-path"]), "--edge-map", exes["pathprof-edge"],
                                     str(once["pathprof-edge"]))
    wall = time.monotonic() - started
    command = shlex.join([sys.argv[0]] + sys.argv[1:])
    lines = [f"# {CRATE} {VERSION} (`{BINARY}`): plain, -Cinstrument-coverage and pathprof (bench/rust.py)\n",
             f"`{command}`, {date}, pathprof {commit}, {os.cpu_count()} CPUs, "
             f"{subprocess.run(['rustc', '--version'], capture_output=True, text=True).stdout.strip()}.\n",
             f"Workload: seven `rg -j1` searches of {args.files} files of 400 KB; median CPU time (user + system) "
             f"of {args.runs} interleaved runs; every variant's output checked against the plain build's; "
             "hash seeds fixed (`bench/rust/fixed_getrandom.c` preloaded). "
             "Build: `cargo install --locked` from scratch, wall time.\n"]
    lines += table(variants, medians, startups, build_s) + [""]
    if paths:
        lines += ["The path build's hottest paths on one run of the workload (`pathprof paths --top 5`):\n",
                  "```", paths, "```", ""]
    if verified:
        lines += ["`pathprof verify` of that path profile against the edge build's profile of the same run:\n",
                  "```", verified, "```", ""]
    measured_on = machine.facts(overhead.CLANG, steal)
    lines += machine.markdown(measured_on)
    lines.append(f"Wall time of the whole run (builds, checks, measurement): {wall:.0f} s.")
    overhead.publish("\n".join(lines), args.out, {
        "program": {"crate": CRATE, "version": VERSION, "binary": BINARY},
        "command": command, "date": date, "commit": commit, "runs": args.runs, "files": args.files,
        "variants": {v: {"build_s": build_s[v], "median_cpu_s": medians[v],
                         "ratio": medians[v] / medians["plain"],
                         "ratio_lto": medians[v] / medians["plain-lto"] if "plain-lto" in medians else None,
                         "version_cpu_s": startups[v],
                         "ratio_less_version": (medians[v] - SEARCHES * startups[v])
                         / (medians["plain"] - SEARCHES * startups["plain"]),
                         "cpu_s": times[v]}
                     for v in variants},
        "paths_top5": paths, "verify": verified, "wall_s": wall, "machine": measured_on,
    })


if __name__ == "__main__":
    main()
